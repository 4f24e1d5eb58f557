<?php

declare(strict_types=1);

namespace Weft\Socket;

/**
 * The one line splitter: cuts lines off the front of a buffer. A line ends with "\n"; a "\r" before it
 * belongs to the ending (Telnet, HTTP and RESP peers send "\r\n"), so the same bytes give the same line
 * whether they end in "\n" or "\r\n". A line may be at most $maxLength bytes without its ending.
 *
 * Used by Socket::readLine() (coroutine reads), the line protocol's codec (loop callbacks), the
 * master/worker channel, and the forwarding of workers' stdout/stderr to the log. Pure: no I/O, no state
 * but the limit, so one instance may serve every connection.
 *
 * Not used where a line is defined otherwise: HTTP heads (the parser's own scanner, with its own limits
 * and status codes) and RESP (Redis: a line ends with "\r\n" only, and bulk strings are binary).
 */
final class LineSplitter
{
    public const DEFAULT_MAX_LENGTH = 65536;

    public function __construct(public readonly int $maxLength = self::DEFAULT_MAX_LENGTH)
    {
        if ($maxLength < 1) {
            throw new \InvalidArgumentException('The maximum line length must be at least 1');
        }
    }

    /**
     * Takes the next complete line from the front of $buffer, without its ending; null when no line is
     * complete yet (the bytes stay).
     *
     * @param int $searchFrom where the search for "\n" may start: bytes before it are known to hold none
     *        (a caller that appends to the buffer between calls then never scans the same bytes twice)
     * @throws LineTooLong when the line (complete, or still arriving and already too long) exceeds the
     *         limit; the buffer is left as it was
     */
    public function take(string &$buffer, int $searchFrom = 0): ?string
    {
        $end = \strpos($buffer, "\n", $searchFrom);
        if ($end === false) {
            // One byte of slack: it may be the "\r" of the ending still to come.
            if (\strlen($buffer) > $this->maxLength + 1) {
                throw LineTooLong::limit($this->maxLength);
            }
            return null;
        }
        $length = $end > 0 && $buffer[$end - 1] === "\r" ? $end - 1 : $end;
        if ($length > $this->maxLength) {
            throw LineTooLong::limit($this->maxLength);
        }
        $line = \substr($buffer, 0, $length);
        $buffer = (string) \substr($buffer, $end + 1);
        return $line;
    }

    /**
     * Takes every complete line from the front of $buffer, leaving the unterminated rest there: one scan
     * and one copy of the rest however many lines arrived together (the line protocol's path).
     *
     * @return list<array{string, string}> pairs of [line, its ending: "\n" or "\r\n"]
     * @throws LineTooLong when a line (complete or still arriving) exceeds the limit; the lines before it
     *         are lost with the buffer's state, as the peer is cut off
     */
    public function split(string &$buffer): array
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

    /**
     * For text that is forwarded rather than parsed (a process's output to the log): like take(), but a
     * line longer than the limit comes out in pieces of $maxLength bytes instead of failing, and with
     * $all the unterminated rest comes out too (the writer is gone).
     */
    public function takePiece(string &$buffer, bool $all = false): ?string
    {
        $end = \strpos($buffer, "\n");
        if ($end !== false) {
            $length = $end > 0 && $buffer[$end - 1] === "\r" ? $end - 1 : $end;
            if ($length <= $this->maxLength) {
                $line = \substr($buffer, 0, $length);
                $buffer = (string) \substr($buffer, $end + 1);
                return $line;
            }
        }
        if (\strlen($buffer) <= $this->maxLength && !($all && $buffer !== '')) {
            return null;
        }
        $piece = \substr($buffer, 0, $this->maxLength);
        $buffer = (string) \substr($buffer, \strlen($piece));
        return $piece;
    }
}
