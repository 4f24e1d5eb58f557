<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

use Weft\Http\Message\BodyWriter;

/**
 * A streamed response's chunks, each pushed on to nginx as soon as it is written.
 *
 * With a declared Content-Length, never more than that goes out: bytes beyond it would be read by the
 * client (or a proxy pooling the connection) as the start of the next response. The excess is counted
 * and dropped; SapiEmitter reports it, and a body that falls short, after the producer returns.
 */
final class SapiBodyWriter implements BodyWriter
{
    private int $written = 0;
    private int $dropped = 0;

    public function __construct(private readonly SapiOutput $output, private readonly ?int $length = null)
    {
    }

    public function write(string $chunk): void
    {
        if ($chunk === '') {
            return;
        }
        if ($this->length !== null) {
            $room = $this->length - $this->written;
            if (\strlen($chunk) > $room) {
                $this->dropped += \strlen($chunk) - \max(0, $room);
                $chunk = $room > 0 ? \substr($chunk, 0, $room) : '';
                if ($chunk === '') {
                    return;
                }
            }
        }
        $this->written += \strlen($chunk);
        $this->output->write($chunk);
        $this->output->flush();
    }

    public function written(): int
    {
        return $this->written;
    }

    public function dropped(): int
    {
        return $this->dropped;
    }
}
