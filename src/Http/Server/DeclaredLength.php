<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Message\BodyWriter;

/**
 * Holds a streamed body to the Content-Length its application declared when the body goes out chunked
 * anyway: on HTTP/1.1 a response with trailers must be chunked (only a chunked body has a trailer
 * section), so the declared length no longer frames it, but it is still a promise about the body. A
 * byte beyond it is not sent; a body that ends short of it throws, so the session cuts the connection
 * before the last chunk, as HTTP/2 resets such a stream: the client never sees a "complete" response
 * of another length than the one declared.
 *
 * @internal
 */
final class DeclaredLength implements BodyWriter
{
    private int $written = 0;

    public function __construct(
        private readonly BodyWriter $inner,
        private readonly int $length,
    ) {
    }

    /** @throws BodyLengthMismatch beyond the declared length (nothing of this chunk is sent past it) */
    public function write(string $chunk): void
    {
        $room = $this->length - $this->written;
        if (\strlen($chunk) > $room) {
            if ($room > 0) {
                $this->inner->write(\substr($chunk, 0, $room));
            }
            $this->written = $this->length + 1;
            throw BodyLengthMismatch::tooLong($this->length);
        }
        $this->written += \strlen($chunk);
        $this->inner->write($chunk);
    }

    /** @throws BodyLengthMismatch when the producer wrote less than it declared */
    public function end(): void
    {
        if ($this->written < $this->length) {
            throw BodyLengthMismatch::tooShort($this->length, $this->written);
        }
    }
}
