<?php

declare(strict_types=1);

namespace Weft\Line;

use Weft\Socket\LineTooLong;

/**
 * The line protocol, pure: bytes in, lines out. A line ends with "\n"; a "\r" before it is part of the
 * ending (Telnet sends "\r\n"). Replies reuse the ending the peer used.
 */
final class LineCodec
{
    public const DEFAULT_MAX_LINE = 65536;

    public function __construct(public readonly int $maxLength = self::DEFAULT_MAX_LINE)
    {
        if ($maxLength < 1) {
            throw new \InvalidArgumentException('The maximum line length must be at least 1');
        }
    }

    /**
     * Takes every complete line from the front of $buffer, leaving the unterminated rest there.
     *
     * @return list<array{string, string}> pairs of [line, its ending]
     * @throws LineTooLong when a line (complete or still arriving) exceeds the limit
     */
    public function decode(string &$buffer): array
    {
        $lines = [];
        $offset = 0;
        while (($end = \strpos($buffer, "\n", $offset)) !== false) {
            $length = $end - $offset;
            $crlf = $length > 0 && $buffer[$end - 1] === "\r";
            if ($crlf) {
                $length--;
            }
            if ($length > $this->maxLength) {
                throw LineTooLong::limit($this->maxLength);
            }
            $lines[] = [\substr($buffer, $offset, $length), $crlf ? "\r\n" : "\n"];
            $offset = $end + 1;
        }
        if ($offset > 0) {
            $buffer = (string) \substr($buffer, $offset);
        }
        if (\strlen($buffer) > $this->maxLength + 1) {
            throw LineTooLong::limit($this->maxLength);
        }
        return $lines;
    }

    public function encode(string $reply, string $ending = "\n"): string
    {
        return $reply . $ending;
    }
}
