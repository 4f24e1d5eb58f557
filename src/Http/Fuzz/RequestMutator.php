<?php

declare(strict_types=1);

namespace Weft\Http\Fuzz;

use Random\Engine\Mt19937;
use Random\Randomizer;

/**
 * Deterministic mutations of valid HTTP/1.1 request streams: the same seed gives the same cases on every
 * machine, so a failure found in CI is replayed by its seed and case number.
 *
 * The mutations aim where parsers disagree: framing bytes (CR, LF, NUL, SP, HTAB, ',', ';', ':'),
 * framing fields inserted or duplicated, numbers changed, case flipped, lines cut or repeated, and two
 * streams spliced together.
 */
final class RequestMutator
{
    private const BYTES = ["\r", "\n", "\0", ' ', "\t", ':', ',', ';', '"', "\x0b", "\x7f", "\x80", "\xff", '0', 'a', 'A', '/', '?', '%', '*'];
    private const SNIPPETS = [
        "\r\n", "\r\n\r\n", "\n", ' chunked', 'chunked', ', chunked', ';q=1', "Transfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\t\r\n", "Transfer-Encoding:\r\n", "Content-Length: 5\r\n", "Content-Length: 0\r\n",
        "Content-Length: 5, 5\r\n", "Content-Length: -1\r\n", "Host: x\r\n", "Host: \r\n", "Host: a,b\r\n", "Expect: 100-continue\r\n",
        "Connection: close\r\n", "0\r\n\r\n", "5\r\nhello\r\n", "ffffffffffffffff\r\n", "GET / HTTP/1.1\r\n", "HTTP/1.0", "HTTP/2.0",
        ' HTTP/1.1', 'get', 'PURGE', 'X-A: b', "\x00", "\r\n ", '999999999999999999999',
    ];

    /** @var list<string> */
    private readonly array $seeds;

    /** @param list<string> $seeds valid request streams to start from */
    public function __construct(array $seeds)
    {
        if ($seeds === []) {
            throw new \InvalidArgumentException('The mutator needs at least one seed');
        }
        $this->seeds = \array_values($seeds);
    }

    /** Case number $case of the run with $seed. */
    public function mutate(int $seed, int $case): string
    {
        $random = new Randomizer(new Mt19937(($seed * 1_000_003 + $case) & 0x7fffffff));
        $data = $this->seeds[$random->getInt(0, \count($this->seeds) - 1)];
        $rounds = $random->getInt(1, 4);
        for ($i = 0; $i < $rounds; $i++) {
            $data = $this->once($random, $data);
        }
        return $data;
    }

    private function once(Randomizer $random, string $data): string
    {
        $length = \strlen($data);
        $at = $length === 0 ? 0 : $random->getInt(0, $length - 1);
        $span = $random->getInt(1, 8);
        switch ($random->getInt(0, 8)) {
            case 0: // replace a byte
                return $length === 0 ? $data : \substr_replace($data, self::BYTES[$random->getInt(0, \count(self::BYTES) - 1)], $at, 1);
            case 1: // insert a byte
                return \substr_replace($data, self::BYTES[$random->getInt(0, \count(self::BYTES) - 1)], $at, 0);
            case 2: // insert a snippet, at a line start when there is one nearby
                $line = \strpos($data, "\r\n", $at);
                $where = $line !== false && $random->getInt(0, 1) === 0 ? $line + 2 : $at;
                return \substr_replace($data, self::SNIPPETS[$random->getInt(0, \count(self::SNIPPETS) - 1)], $where, 0);
            case 3: // delete a range
                return \substr_replace($data, '', $at, $span);
            case 4: // repeat a range (a whole line when it starts one)
                return \substr_replace($data, \substr($data, $at, $span * 4), $at, 0);
            case 5: // flip case
                $part = \substr($data, $at, $span);
                return \substr_replace($data, \strtoupper($part) === $part ? \strtolower($part) : \strtoupper($part), $at, $span);
            case 6: // cut the stream short
                return \substr($data, 0, $at);
            case 7: // splice with another seed
                $other = $this->seeds[$random->getInt(0, \count($this->seeds) - 1)];
                return \substr($data, 0, $at) . \substr($other, $random->getInt(0, \max(0, \strlen($other) - 1)));
            default: // change a number
                if (\preg_match_all('/\d+/', $data, $m, \PREG_OFFSET_CAPTURE) === 0) {
                    return $data . "\r\n";
                }
                [$digits, $offset] = $m[0][$random->getInt(0, \count($m[0]) - 1)];
                $replacement = ['0', '00' . $digits, (string) ((int) $digits + 1), (string) \max(0, (int) $digits - 1), '18446744073709551616', ' ' . $digits, $digits . ' '][$random->getInt(0, 6)];
                return \substr_replace($data, $replacement, $offset, \strlen($digits));
        }
    }
}
