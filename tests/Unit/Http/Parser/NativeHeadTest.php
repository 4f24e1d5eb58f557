<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Parser;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Random\Engine\Mt19937;
use Random\Randomizer;
use Weft\Cli\FuzzCommand;
use Weft\Http\Fuzz\ParserOracle;
use Weft\Http\Fuzz\RequestMutator;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\RequestParser;
use Weft\Tests\Support\Memcheck;

/**
 * Weft\Ext\parseHead (ext/weft_http.c) on its own, and differentially against the pure PHP parser: on
 * heads generated from the grammar with random parts, and on the fuzzer's mutations of the shared
 * vectors. The vectors themselves run on both paths in RequestParserVectorsTest and
 * NativeRequestParserTest.
 */
final class NativeHeadTest extends TestCase
{
    protected function setUp(): void
    {
        if (!\function_exists('Weft\Ext\parseHead')) {
            self::markTestSkipped('the weft extension is not loaded');
        }
    }

    /** @return array{0: string, 1: string, 2: string, 3: string, 4: int, 5: bool}|false */
    private static function parse(string $buffer, int $offset = 0, ?int $scanFrom = null, Limits $limits = new Limits()): array|false
    {
        return \Weft\Ext\parseHead($buffer, $offset, $scanFrom ?? $offset, $limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet);
    }

    public function testAHeadComesBackInParts(): void
    {
        $head = "GET /a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n";
        self::assertSame(['GET', '/a?b=1', '1.1', "\r\nHost: example.com:8080\r\nAccept: */*", \strlen($head), false], self::parse($head . 'NEXT'));
        self::assertSame(['GET', '/', '1.0', '', 18, false], self::parse("GET / HTTP/1.0\r\n\r\n"));
    }

    public function testFramingFieldsAreFlaggedInAnyCase(): void
    {
        foreach (["Content-Length: 3", "content-LENGTH:3", "Transfer-Encoding: chunked", "TRANSFER-ENCODING: x"] as $field) {
            $head = "POST /p HTTP/1.1\r\nHost: x\r\n$field\r\n\r\n";
            self::assertTrue(self::parse($head)[5], $field);
        }
        foreach (["Content-Lengthx: 3", "X-Content-Length: 3", "Transfer-Encodin: chunked"] as $field) {
            self::assertFalse(self::parse("POST /p HTTP/1.1\r\nHost: x\r\n$field\r\n\r\n")[5], $field);
        }
    }

    public function testOffsetAndScanStartAreHonoured(): void
    {
        $first = "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n";
        $second = "GET /2 HTTP/1.1\r\nHost: y\r\n\r\n";
        $buffer = $first . $second;
        self::assertSame(['GET', '/2', '1.1', "\r\nHost: y", \strlen($buffer), false], self::parse($buffer, \strlen($first)));
        // The search for the end resumes where the caller says none can start earlier.
        self::assertSame(\strlen($buffer), self::parse($buffer, \strlen($first), \strlen($buffer) - 4)[4]);
        self::assertFalse(self::parse($buffer, \strlen($first), \strlen($buffer) - 3));
        self::assertFalse(self::parse($buffer, \strlen($buffer)));
        self::assertFalse(self::parse(''));
    }

    public function testAnIncompleteHeadIsLeftToThePhpParser(): void
    {
        $head = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        for ($i = 0; $i < \strlen($head); $i++) {
            self::assertFalse(self::parse(substr($head, 0, $i)), "first $i bytes");
        }
        self::assertIsArray(self::parse($head));
    }

    public function testOutOfRangeOffsetsAreRefused(): void
    {
        foreach ([[-1, 0], [5, 5], [0, 5], [2, 1], [0, -1]] as [$offset, $scanFrom]) {
            try {
                \Weft\Ext\parseHead('abcd', $offset, $scanFrom, 100, 100, 10, []);
                self::fail("offset $offset, scanFrom $scanFrom accepted");
            } catch (\ValueError $e) {
                self::assertStringContainsString('must be between', $e->getMessage());
            }
        }
    }

    public function testLimitsAreExactlyThoseOfThePhpParser(): void
    {
        $line = 'GET /' . str_repeat('a', 26) . ' HTTP/1.1';
        $head = $line . "\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n"; // 3 fields
        $size = \strlen($head);
        $cases = [
            [new Limits(maxHeaderBytes: $size), true],
            [new Limits(maxHeaderBytes: $size - 1), false],
            [new Limits(maxTargetBytes: \strlen($line)), true],
            [new Limits(maxTargetBytes: \strlen($line) - 1), false],
            [new Limits(maxHeaderCount: 3), true],
            [new Limits(maxHeaderCount: 2), false],
            [new Limits(maxHeaderCount: 0), false],
            [new Limits(methods: ['POST']), false],
            [(new Limits(methods: ['POST']))->withExtraMethods(['GET']), true],
        ];
        foreach ($cases as $i => [$limits, $accepted]) {
            self::assertSame($accepted, self::parse($head, 0, 0, $limits) !== false, "case $i");
            self::assertSame(self::outcome($head, $limits, false), self::outcome($head, $limits, true), "case $i");
        }
    }

    /** @return iterable<string, array{string}> heads the PHP parser refuses, one reason each */
    public static function refused(): iterable
    {
        $heads = [
            'lower-case method' => "get / HTTP/1.1\r\nHost: x\r\n\r\n",
            'unknown method' => "FETCH / HTTP/1.1\r\nHost: x\r\n\r\n",
            'no method' => " / HTTP/1.1\r\nHost: x\r\n\r\n",
            'two spaces' => "GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
            'DEL in target' => "GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n",
            'tab in target' => "GET /\t HTTP/1.1\r\nHost: x\r\n\r\n",
            'HTTP/1.2' => "GET / HTTP/1.2\r\nHost: x\r\n\r\n",
            'HTTP/2.0' => "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
            'http/1.1' => "GET / http/1.1\r\nHost: x\r\n\r\n",
            'byte after version' => "GET / HTTP/1.1x\r\nHost: x\r\n\r\n",
            'short version' => "GET / HTTP/1\r\n\r\n",
            'no Host in 1.1' => "GET / HTTP/1.1\r\n\r\n",
            'two Hosts' => "GET / HTTP/1.1\r\nHost: x\r\nhost: x\r\n\r\n",
            'two Hosts in 1.0' => "GET / HTTP/1.0\r\nHost: x\r\nHOST: y\r\n\r\n",
            'empty Host' => "GET / HTTP/1.1\r\nHost: \r\n\r\n",
            'Host with a comma' => "GET / HTTP/1.1\r\nHost: a,b\r\n\r\n",
            'Host with a slash' => "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
            'Host with a space inside' => "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
            'Host with userinfo' => "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n",
            'Host port with a letter' => "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n",
            'Host unclosed bracket' => "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
            'Host empty brackets' => "GET / HTTP/1.1\r\nHost: []\r\n\r\n",
            'Host with a NUL' => "GET / HTTP/1.1\r\nHost: a\0\r\n\r\n",
            'bare LF in a value' => "GET / HTTP/1.1\r\nHost: x\r\nA: b\nc\r\n\r\n",
            'bare CR in a value' => "GET / HTTP/1.1\r\nHost: x\r\nA: b\rc\r\n\r\n",
            'NUL in a value' => "GET / HTTP/1.1\r\nHost: x\r\nA: \0\r\n\r\n",
            'bare LF line end' => "GET / HTTP/1.1\nHost: x\r\n\r\n",
            'obs-fold' => "GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n c\r\n\r\n",
            'space before colon' => "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
            'empty name' => "GET / HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n",
            'no colon' => "GET / HTTP/1.1\r\nHost: x\r\nA\r\n\r\n",
            'bad name byte' => "GET / HTTP/1.1\r\nHost: x\r\nA(b: c\r\n\r\n",
            'asterisk for GET' => "GET * HTTP/1.1\r\nHost: x\r\n\r\n",
            'asterisk for CONNECT' => "CONNECT * HTTP/1.1\r\nHost: x\r\n\r\n",
            'CONNECT without a port' => "CONNECT example.com HTTP/1.1\r\nHost: x\r\n\r\n",
            'CONNECT with an empty port' => "CONNECT example.com: HTTP/1.1\r\nHost: x\r\n\r\n",
            'CONNECT with a path' => "CONNECT a.com/x:443 HTTP/1.1\r\nHost: x\r\n\r\n",
            'CONNECT with userinfo' => "CONNECT u@a.com:443 HTTP/1.1\r\nHost: x\r\n\r\n",
            'CONNECT port then more' => "CONNECT a.com:443x HTTP/1.1\r\nHost: x\r\n\r\n",
            'asterisk for OPTIONS' => "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
            'CONNECT authority' => "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
            'CONNECT IPv6' => "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n",
            'CONNECT origin-form' => "CONNECT /x HTTP/1.1\r\nHost: x\r\n\r\n",
            'userinfo in absolute-form' => "GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n",
            'userinfo with a password' => "GET h://u:p@h HTTP/1.1\r\nHost: h\r\n\r\n",
            'dot-segment above the root' => "GET /../x HTTP/1.1\r\nHost: x\r\n\r\n",
            'dot-segment last' => "GET /a/../.. HTTP/1.1\r\nHost: x\r\n\r\n",
            'dot-segment before a query' => "GET /..?a HTTP/1.1\r\nHost: x\r\n\r\n",
            'encoded dot-segment' => "GET /%2E%2e HTTP/1.1\r\nHost: x\r\n\r\n",
            'encoded slash' => "GET /.%2f..%2F.. HTTP/1.1\r\nHost: x\r\n\r\n",
            'dot-segment in absolute-form' => "GET http://h/a/../.. HTTP/1.1\r\nHost: h\r\n\r\n",
            'asterisk for an extension method' => "M-SEARCH * HTTP/1.1\r\nHost: x\r\n\r\n",
            'relative target' => "GET x HTTP/1.1\r\nHost: x\r\n\r\n",
            'scheme without host' => "GET http:///x HTTP/1.1\r\nHost: x\r\n\r\n",
            'scheme starting with a digit' => "GET 1http://a/ HTTP/1.1\r\nHost: x\r\n\r\n",
            'scheme only' => "GET http:// HTTP/1.1\r\nHost: x\r\n\r\n",
            'scheme then a query' => "GET http://?x HTTP/1.1\r\nHost: x\r\n\r\n",
            'scheme then a fragment' => "GET http://#x HTTP/1.1\r\nHost: x\r\n\r\n",
            'empty line inside' => "GET / HTTP/1.1\r\n\r\nHost: x\r\n\r\n",
        ];
        foreach ($heads as $name => $head) {
            yield $name => [$head];
        }
    }

    #[DataProvider('refused')]
    public function testWhatThePhpParserRefusesIsLeftToIt(string $head): void
    {
        $limits = new Limits();
        self::assertFalse(self::parse($head));
        $outcome = self::outcome($head, $limits, false);
        self::assertNotNull(self::errorIn($outcome), 'the PHP parser refuses it too: ' . json_encode($outcome, \JSON_INVALID_UTF8_SUBSTITUTE));
        self::assertSame($outcome, self::outcome($head, $limits, true));
    }

    /** @return iterable<string, array{string}> unusual heads the PHP parser accepts */
    public static function accepted(): iterable
    {
        $heads = [
            'dot-segments within the root' => "GET /a/./b/../%2E%2e/c/.. HTTP/1.1\r\nHost: x\r\n\r\n",
            'dot-segments in the query' => "GET /?a=/../.. HTTP/1.1\r\nHost: x\r\n\r\n",
            'dot-segments after a fragment' => "GET /a#/../.. HTTP/1.1\r\nHost: x\r\n\r\n",
            'dots that are not segments' => "GET /.../..a/a../%2e%2e%2e HTTP/1.1\r\nHost: x\r\n\r\n",
            'percent-encoding near the end' => "GET /..%2 HTTP/1.1\r\nHost: x\r\n\r\n",
            'absolute-form' => "GET http://a.example/x?y HTTP/1.1\r\nHost: a.example\r\n\r\n",
            'absolute-form odd scheme' => "GET a+b.c-d://h HTTP/1.1\r\nHost: h\r\n\r\n",
            'high bytes' => "GET /\xc3\xa9\xff HTTP/1.1\r\nHost: x\r\nX-U: \xc3\xa9\x80\r\n\r\n",
            'controls in a value' => "GET / HTTP/1.1\r\nHost: x\r\nX-C: a\x01\x7f\tb\r\n\r\n",
            'Host with tabs and port' => "GET / HTTP/1.1\r\nHost:\t a-b.c_d~!$&'()*+;=%41:\t \r\n\r\n",
            'Host empty port' => "GET / HTTP/1.1\r\nhOsT: a:\r\n\r\n",
            'Host last in a 1.0 request' => "GET / HTTP/1.0\r\nA: b\r\nHost: [1:2::3]:80\r\n\r\n",
            'empty values' => "GET / HTTP/1.1\r\nHost: x\r\nA:\r\nB: \r\n\r\n",
            'extension method' => "M-SEARCH / HTTP/1.1\r\nHost: x\r\n\r\n",
            'pipelined with a body' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: x\r\n\r\n",
            'chunked' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n",
            'empty lines first' => "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        ];
        foreach ($heads as $name => $head) {
            yield $name => [$head];
        }
    }

    #[DataProvider('accepted')]
    public function testUnusualHeadsTheyBothAccept(string $raw): void
    {
        $head = ltrim($raw, "\r\n");
        $limits = new Limits();
        self::assertIsArray(self::parse($head));
        $outcome = self::outcome($raw, $limits, false);
        self::assertIsString($outcome[0][0] ?? null, 'the PHP parser accepts it too: ' . json_encode($outcome, \JSON_INVALID_UTF8_SUBSTITUTE));
        self::assertNull(self::errorIn($outcome));
        self::assertSame($outcome, self::outcome($raw, $limits, true));
    }

    /**
     * Heads built from the grammar, each part drawn from valid and nearly valid choices, so that the
     * semantic checks (method list, target forms, Host) are hit far more often than mutations hit them.
     */
    public function testGeneratedHeadsGiveTheSameOutcomeOnBothPaths(): void
    {
        $random = new Randomizer(new Mt19937(20261123));
        // Each part: a valid choice most of the time, one of the nearly valid ones otherwise.
        $pick = static fn (array $valid, array $odd): string => $odd !== [] && $random->getInt(0, 9) === 0
            ? $odd[$random->getInt(0, \count($odd) - 1)]
            : $valid[$random->getInt(0, \count($valid) - 1)];
        $methods = [['GET', 'POST', 'OPTIONS', 'CONNECT', 'HEAD', 'M-SEARCH'], ['get', 'FETCH', 'G T', '', 'GET/']];
        $targets = [['/', '/a?b', 'http://h/x', "/\x80", '/#', 'a+b://c', '/a/../b', '/%2e/x', '/x/.%2E'], ['*', 'a.com:443', '[::1]:80', '/../x', '/a/%2e%2e%2f..', 'http://u@h/', 'h://h/..', '[::1]', 'h://', 'x', '/a b', '', 'a:b:1', '[]:1', 'u@h:1', 'h:', ':1', '1a://b', 'h://#x', 'h://?x', 'h:///x']];
        $versions = [['HTTP/1.1', 'HTTP/1.0'], ['HTTP/1.2', 'HTTP/2.0', 'http/1.1', 'HTTP/1.1 ', 'HTTP/1.']];
        $hosts = [['x', 'a.b:80', ' a ', "\ta\t", '[::1]:8', 'a:', '%zz'], ['[::1', '', 'a,b', 'a b', 'a/b', 'a:1:2', 'a:x', "a\x80", '[g]', "a\0", '[]']];
        $fields = [['Accept: */*', 'X-A: b', 'content-length: 0', 'Transfer-Encoding: chunked', 'Content-Length: 2', 'A:', "X: a\x01b", "X: \xff"], ['Bad Name: x', 'X : y', ' fold', 'NoColon', "X: a\rb", ':v']];
        $limits = new Limits(maxHeaderBytes: 120, maxTargetBytes: 40, maxHeaderCount: 4);
        $acceptedNatively = 0;
        $cases = Memcheck::cases(3000, 1000);
        for ($case = 0; $case < $cases; $case++) {
            $line = $pick(...$methods) . ' ' . $pick(...$targets) . ' ' . $pick(...$versions);
            $head = $line;
            $hostCount = [0, 1, 1, 1, 2][$random->getInt(0, 4)];
            $lines = [];
            for ($i = 0; $i < $hostCount; $i++) {
                $lines[] = $pick(['Host', 'host', 'HOST'], []) . ':' . $pick(...$hosts);
            }
            for ($i = $random->getInt(0, 4); $i > 0; $i--) {
                $lines[] = $pick(...$fields);
            }
            $lines = $random->shuffleArray($lines);
            foreach ($lines as $field) {
                $head .= "\r\n" . $field;
            }
            $raw = $head . "\r\n\r\n" . $pick(['', 'ab', "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "0\r\n\r\n"], []);
            $php = self::outcome($raw, $limits, false);
            self::assertSame($php, self::outcome($raw, $limits, true), 'case ' . $case . ': ' . json_encode($raw, \JSON_INVALID_UTF8_SUBSTITUTE));
            if (self::parse($raw, 0, 0, $limits) !== false) {
                $acceptedNatively++;
            }
        }
        // Both outcomes are common, so each side of every check is exercised.
        self::assertGreaterThan($cases / 10, $acceptedNatively);
        self::assertLessThan($cases * 9 / 10, $acceptedNatively);
    }

    /** The fuzzer's mutations of the shared vectors, at once and split (ParserOracle compares both paths). */
    public function testMutatedVectorsGiveTheSameOutcomeOnBothPaths(): void
    {
        $seeds = FuzzCommand::seeds(\Weft\Http\Fuzz\Fuzzer::VECTORS);
        $mutator = new RequestMutator($seeds);
        $oracle = new ParserOracle();
        $limits = new Limits();
        $acceptedNatively = 0;
        $refusedNatively = 0;
        $cases = Memcheck::cases(4000, 1000);
        for ($case = 0; $case < $cases; $case++) {
            $data = $mutator->mutate(77, $case);
            $oracle->check($data, 77 + $case); // throws a FuzzFailure naming the case on any disagreement
            $head = ltrim($data, "\r\n");
            if (str_contains($head, "\r\n\r\n")) {
                self::parse($head, 0, 0, $limits) === false ? $refusedNatively++ : $acceptedNatively++;
            }
        }
        self::assertGreaterThan($cases / 8, $acceptedNatively);
        self::assertGreaterThan($cases / 8, $refusedNatively);
    }

    /** @param list<mixed> $trace @return int|null the status of the error in a ParserOracle::trace(), if any */
    private static function errorIn(array $trace): ?int
    {
        foreach ($trace as $entry) {
            if (\is_array($entry) && \is_int($entry[0] ?? null) && \is_string($entry[1] ?? null)) {
                return $entry[0];
            }
        }
        return null;
    }

    /** @return list<mixed> */
    private static function outcome(string $raw, Limits $limits, bool $native): array
    {
        $whole = ParserOracle::trace([$raw], new RequestParser($limits, null, $native));
        $bytes = ParserOracle::trace(str_split($raw), new RequestParser($limits, null, $native));
        // Whole and byte by byte can differ in failedLine() (a whole head's 501 keeps its request line, a
        // trickled one is refused before its line is complete): the two paths must agree on both.
        return $bytes === $whole ? $whole : [...$whole, 'byte by byte' => $bytes];
    }
}
