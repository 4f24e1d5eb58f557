<?php

declare(strict_types=1);

namespace Weft\Line;

use Weft\Socket\LineSplitter;
use Weft\Socket\LineTooLong;

/**
 * The line protocol, pure: bytes in, lines out, cut by the one LineSplitter. A line ends with "\n"; a
 * "\r" before it is part of the ending (Telnet sends "\r\n"). Replies reuse the ending the peer used.
 */
final class LineCodec
{
    public const DEFAULT_MAX_LINE = LineSplitter::DEFAULT_MAX_LENGTH;

    public readonly int $maxLength;
    private readonly LineSplitter $splitter;

    public function __construct(int $maxLength = self::DEFAULT_MAX_LINE)
    {
        $this->splitter = new LineSplitter($maxLength);
        $this->maxLength = $maxLength;
    }

    /**
     * Takes every complete line from the front of $buffer, leaving the unterminated rest there.
     *
     * @return list<array{string, string}> pairs of [line, its ending]
     * @throws LineTooLong when a line (complete or still arriving) exceeds the limit
     */
    public function decode(string &$buffer): array
    {
        return $this->splitter->split($buffer);
    }

    public function encode(string $reply, string $ending = "\n"): string
    {
        return $reply . $ending;
    }
}
