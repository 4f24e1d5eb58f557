<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Parser;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http\Message\Request;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\RequestParser;

/**
 * The pure PHP parser; NativeRequestParserTest runs every case again with the extension's head parser in
 * front of it (hence not final).
 */
class RequestParserTest extends TestCase
{
    /** Whether the cases run with Weft\Ext\parseHead in front of the PHP parser. */
    protected const NATIVE = false;

    private bool $nativeBefore;

    protected function setUp(): void
    {
        if (static::NATIVE && !\function_exists('Weft\Ext\parseHead')) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $this->nativeBefore = RequestParser::nativeHead();
        RequestParser::useNativeHead(static::NATIVE);
        self::assertSame(static::NATIVE, RequestParser::nativeHead());
    }

    protected function tearDown(): void
    {
        if (isset($this->nativeBefore)) {
            RequestParser::useNativeHead($this->nativeBefore);
        }
    }

    public function testEveryAcceptedVectorPipelinedInOneStream(): void
    {
        $raw = '';
        $expected = [];
        foreach (require \Weft\Http\Fuzz\Fuzzer::VECTORS as $vector) {
            if ($vector['error'] === null && !isset($vector['limits']) && !($vector['partial'] ?? false)) {
                $raw .= $vector['raw'];
                foreach ($vector['requests'] as $request) {
                    $expected[] = $request['target'];
                }
            }
        }
        $parser = new RequestParser();
        $parser->push($raw);
        $targets = [];
        while (($request = $parser->next()) !== null) {
            $targets[] = $request->target();
        }
        self::assertSame($expected, $targets);
        self::assertFalse($parser->hasPartial());
        self::assertSame(0, $parser->bufferedBytes());
    }

    /**
     * The parser skips checking field lines that are the same bytes as the last head it accepted: every
     * vector ends exactly as it does when other field lines were accepted last, after a head with its own
     * field lines was accepted (with a different request line, in both versions).
     */
    public function testAHeadWithTheFieldLinesAcceptedLastEndsAsAnyOther(): void
    {
        $primes = [];
        foreach (require \Weft\Http\Fuzz\Fuzzer::VECTORS as $vector) {
            if ($vector['partial'] ?? false) {
                continue;
            }
            $limits = new Limits(...($vector['limits'] ?? []));
            $raw = $vector['raw'];
            $line = strpos($raw, "\r\n");
            $end = strpos($raw, "\r\n\r\n");
            $fields = $line !== false && $end !== false && $end >= $line ? substr($raw, $line, $end - $line) : "\r\nHost: a";
            $reference = self::outcome($limits, "GET /other HTTP/1.1\r\nHost: other.invalid\r\n\r\n", $raw);
            foreach (['1.1', '1.0'] as $version) {
                $prime = "OPTIONS /prime HTTP/{$version}{$fields}\r\n\r\n";
                $primed = self::outcome($limits, $prime, $raw);
                self::assertEquals($reference[1], $primed[1], $vector['name'] . ' after ' . var_export($prime, true));
                $primes[] = $primed[0];
            }
        }
        self::assertContains('accepted', $primes, 'some field lines were accepted, and then judged again');
    }

    /** @return array{0: string, 1: mixed} whether $prime was accepted, and what $raw gave after it */
    private static function outcome(Limits $limits, string $prime, string $raw): array
    {
        $first = new RequestParser($limits);
        $first->push($prime);
        try {
            $primed = $first->next() !== null ? 'accepted' : 'incomplete';
        } catch (HttpError) {
            $primed = 'refused';
        }
        $parser = new RequestParser($limits);
        $parser->push($raw);
        $seen = [];
        try {
            while (($request = $parser->next()) !== null) {
                $seen[] = [$request->method(), $request->target(), $request->version(), $request->headers(), $request->body()];
            }
        } catch (HttpError $e) {
            $seen[] = [$e::class, $e->getMessage(), $e->toResponse()->status()];
        }
        return [$primed === 'accepted' ? 'accepted' : 'other', $seen];
    }

    public function testPipelinedRequestsArriveAcrossPushes(): void
    {
        $parser = new RequestParser();
        $parser->push("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHo");
        self::assertSame('/1', $parser->next()?->target());
        self::assertNull($parser->next());
        self::assertTrue($parser->hasPartial());
        $parser->push("st: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame('/2', $parser->next()?->target());
        self::assertSame('/3', $parser->next()?->target());
        self::assertNull($parser->next());
        self::assertFalse($parser->hasPartial());
    }

    public function testRemoteAddressIsStampedOnEveryRequest(): void
    {
        $parser = new RequestParser(null, '192.0.2.7');
        $parser->push("GET / HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na");
        self::assertSame('192.0.2.7', $parser->next()?->remoteAddress());
        self::assertSame('192.0.2.7', $parser->next()?->remoteAddress());
        $anonymous = new RequestParser();
        $anonymous->push("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertNull($anonymous->next()?->remoteAddress());
    }

    public function testHasPartialInBodyAndBufferedBytes(): void
    {
        $parser = new RequestParser();
        self::assertFalse($parser->hasPartial());
        self::assertSame(0, $parser->bufferedBytes());

        $parser->push('GET / HT');
        self::assertNull($parser->next());
        self::assertTrue($parser->hasPartial());
        self::assertFalse($parser->inBody());
        self::assertSame(8, $parser->bufferedBytes());

        $parser->push("TP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345");
        self::assertNull($parser->next());
        self::assertTrue($parser->inBody());
        self::assertSame(5, $parser->bufferedBytes());

        $parser->push('67890');
        self::assertSame('1234567890', $parser->next()?->body());
        self::assertFalse($parser->hasPartial());
        self::assertFalse($parser->inBody());
    }

    public function testChunkedBodyInProgressCountsDecodedBytes(): void
    {
        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nab");
        self::assertNull($parser->next());
        self::assertTrue($parser->inBody());
        self::assertSame(7, $parser->bufferedBytes());
        $parser->push("c\r\n0\r\n\r\n");
        self::assertSame('helloabc', $parser->next()?->body());
    }

    public function testOnlyCrlfBetweenRequestsIsNotPartial(): void
    {
        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na\r\n");
        self::assertSame('a', $parser->next()?->body());
        self::assertNull($parser->next());
        self::assertFalse($parser->hasPartial());
    }

    public function testLargeBodyArrivingInPieces(): void
    {
        $body = random_bytes(1024 * 1024);
        $parser = new RequestParser();
        $parser->push("PUT /blob HTTP/1.1\r\nHost: x\r\nContent-Length: " . \strlen($body) . "\r\n\r\n");
        foreach (str_split($body, 65536) as $piece) {
            self::assertNull($parser->next());
            $parser->push($piece);
        }
        self::assertSame($body, $parser->next()?->body());
    }

    public function testLargeChunkedBodyArrivingInPieces(): void
    {
        $body = random_bytes(300000);
        $wire = '';
        foreach (str_split($body, 7000) as $chunk) {
            $wire .= dechex(\strlen($chunk)) . "\r\n" . $chunk . "\r\n";
        }
        $parser = new RequestParser();
        $parser->push("PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
        foreach (str_split($wire . "0\r\n\r\n", 4096) as $piece) {
            self::assertNull($parser->next());
            $parser->push($piece);
        }
        self::assertSame($body, $parser->next()?->body());
    }

    public function testContentLengthOverLimitFailsBeforeTheBodyArrives(): void
    {
        $parser = new RequestParser((new Limits())->withMaxBodyBytes(1000));
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n");
        $error = self::catchError($parser);
        self::assertSame(413, $error->status);
    }

    public function testOversizedHeadFailsWithoutWaitingForItsEnd(): void
    {
        $parser = new RequestParser();
        $parser->push("GET / HTTP/1.1\r\nHost: x\r\n");
        $status = null;
        for ($i = 0; $i < 1000 && $status === null; $i++) {
            $parser->push('X-Filler-' . $i . ': ' . str_repeat('v', 50) . "\r\n");
            try {
                self::assertNull($parser->next());
                self::assertLessThan(Limits::DEFAULT_MAX_HEADER_BYTES, $parser->bufferedBytes());
            } catch (HttpError $e) {
                $status = $e->status;
            }
        }
        self::assertSame(431, $status);
        self::assertLessThan(140, $i, 'failed soon after crossing 8 KiB');
    }

    public function testOversizedRequestLineFailsWithoutWaitingForItsEnd(): void
    {
        $parser = new RequestParser();
        $parser->push('GET /');
        $status = null;
        for ($i = 0; $i < 1000 && $status === null; $i++) {
            $parser->push(str_repeat('a', 100));
            try {
                self::assertNull($parser->next());
            } catch (HttpError $e) {
                $status = $e->status;
            }
        }
        self::assertSame(414, $status);
        self::assertSame(82, $i, 'failed as soon as the line passed 8192 bytes');
    }

    /** @return iterable<string, array{list<string>, int, string}> lines of a head that never ends, the error, its reason */
    public static function linesCondemnedAsTheyEnd(): iterable
    {
        yield 'second Content-Length' => [["POST / HTTP/1.1", 'Host: x', 'Content-Length: 1', 'Content-Length: 1'], 400, 'More than one Content-Length field'];
        yield 'bad Content-Length' => [["POST / HTTP/1.1", 'Host: x', 'Content-Length: -1'], 400, 'Invalid Content-Length'];
        yield 'bad Host' => [["GET / HTTP/1.1", 'Host: a/b'], 400, 'Invalid Host header'];
        yield 'second Host' => [["GET / HTTP/1.0", 'Host: a', 'HOST: a'], 400, 'More than one Host header'];
        yield 'unknown coding' => [["POST / HTTP/1.1", 'Host: x', 'Transfer-Encoding: br'], 501, 'Transfer-Encoding other than chunked is not supported'];
        yield 'both framing fields' => [["POST / HTTP/1.1", 'Transfer-Encoding: chunked', 'Content-Length: 1'], 400, 'Both Content-Length and Transfer-Encoding'];
        yield 'CONNECT' => [['CONNECT a:1 HTTP/1.1'], 400, 'CONNECT is not supported'];
        yield 'OPTIONS *' => [['OPTIONS * HTTP/1.1'], 400, 'The asterisk-form (OPTIONS *) is not supported'];
        yield 'userinfo' => [['GET http://u@h/ HTTP/1.1'], 400, 'Userinfo in the request target'];
        yield 'above the root' => [['GET /a/../%2e%2e/b HTTP/1.1'], 400, 'The request target climbs above the root'];
    }

    /**
     * The last line condemns the head: it fails as soon as that line is complete, with no blank line,
     * and not one line earlier.
     *
     * @param list<string> $lines
     */
    #[DataProvider('linesCondemnedAsTheyEnd')]
    public function testAHeadFailsAsSoonAsItsOffendingLineEnds(array $lines, int $status, string $message): void
    {
        $parser = new RequestParser();
        $last = \array_pop($lines);
        foreach ($lines as $line) {
            $parser->push($line . "\r\n");
            self::assertNull($parser->next(), $line);
        }
        $parser->push($last . "\r");
        $error = self::catchError($parser);
        self::assertSame($status, $error->status);
        self::assertSame($message, $error->getMessage());
    }

    public function testAnErrorIsFinal(): void
    {
        $parser = new RequestParser();
        $parser->push("GET / HTTP/1.1\r\nHost : x\r\n\r\n");
        $first = self::catchError($parser);
        self::assertSame(400, $first->status);
        $parser->push("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame($first, self::catchError($parser));
        self::assertSame(0, $parser->bufferedBytes());
    }

    /** @return iterable<string, array{string, int, string}> */
    public static function errorMessages(): iterable
    {
        yield 'obs-fold' => ["GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n c\r\n\r\n", 400, 'folding'];
        yield 'space before colon' => ["GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, 'Whitespace between header name and colon'];
        yield 'bare LF' => ["GET / HTTP/1.1\nHost: x\n\n", 400, 'bare LF'];
        yield 'smuggling' => ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, 'Both Content-Length and Transfer-Encoding'];
        yield 'version' => ["GET / HTTP/3.0\r\n\r\n", 505, 'HTTP/1.0 and HTTP/1.1'];
        yield 'coding' => ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n", 501, 'Transfer-Encoding'];
        yield 'host' => ["GET / HTTP/1.1\r\n\r\n", 400, 'Host'];
    }

    #[DataProvider('errorMessages')]
    public function testErrorsExplainThemselves(string $raw, int $status, string $message): void
    {
        $parser = new RequestParser();
        $parser->push($raw);
        $error = self::catchError($parser);
        self::assertSame($status, $error->status);
        self::assertSame($status, $error->getCode());
        self::assertStringContainsStringIgnoringCase($message, $error->getMessage());
    }

    public function testHttpErrorBecomesAPlainTextResponse(): void
    {
        $response = HttpError::headerTooLarge(8192)->toResponse();
        self::assertSame(431, $response->status());
        self::assertSame('text/plain; charset=utf-8', $response->header('content-type'));
        self::assertSame("Header section exceeds 8192 bytes\n", $response->body());
        self::assertSame(408, HttpError::requestTimeout()->status);
    }

    public function testExpectContinueIsReportedOnceWhileTheBodyIsMissing(): void
    {
        $parser = new RequestParser();
        self::assertFalse($parser->needsContinue());
        $parser->push("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-Continue\r\n\r\n");
        self::assertNull($parser->next());
        self::assertTrue($parser->needsContinue());
        self::assertFalse($parser->needsContinue(), 'only once per request');
        self::assertNull($parser->next());
        self::assertFalse($parser->needsContinue());
        $parser->push('hello');
        self::assertSame('hello', $parser->next()?->body());
        self::assertFalse($parser->needsContinue());
    }

    public function testExpectContinueWithChunkedBody(): void
    {
        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n");
        self::assertNull($parser->next());
        self::assertTrue($parser->needsContinue());
        $parser->push("1\r\na\r\n0\r\n\r\n");
        self::assertSame('a', $parser->next()?->body());
    }

    public function testNoContinueWhenTheBodyIsAlreadyHere(): void
    {
        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nok");
        self::assertSame('ok', $parser->next()?->body());
        self::assertFalse($parser->needsContinue());
    }

    public function testNoContinueAfterTheBodyCompletedUnasked(): void
    {
        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
        self::assertNull($parser->next());
        $parser->push('ok');
        self::assertSame('ok', $parser->next()?->body());
        self::assertFalse($parser->needsContinue());
    }

    public function testNoContinueForHttp10OrOtherExpectations(): void
    {
        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.0\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
        self::assertNull($parser->next());
        self::assertFalse($parser->needsContinue());

        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: something-else\r\n\r\n");
        self::assertNull($parser->next());
        self::assertFalse($parser->needsContinue());
    }

    public function testNoContinueForABodyOverTheLimit(): void
    {
        $parser = new RequestParser((new Limits())->withMaxBodyBytes(10));
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n");
        self::assertSame(413, self::catchError($parser)->status);
        self::assertFalse($parser->needsContinue());
    }

    /** @return iterable<string, array{string, bool}> */
    public static function keepAliveCases(): iterable
    {
        yield '1.1 default' => ["GET / HTTP/1.1\r\nHost: x\r\n\r\n", true];
        yield '1.1 close' => ["GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false];
        yield '1.1 Close, any case' => ["GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n", false];
        yield '1.1 close in a list' => ["GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\n\r\n", false];
        yield '1.1 keep-alive in a list' => ["GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\n\r\n", true];
        yield '1.1 token containing close' => ["GET / HTTP/1.1\r\nHost: x\r\nConnection: x-closeish\r\n\r\n", true];
        yield '1.0 default' => ["GET / HTTP/1.0\r\n\r\n", false];
        yield '1.0 keep-alive' => ["GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true];
        yield '1.0 Keep-Alive' => ["GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true];
        yield '1.0 keep-alive in a list' => ["GET / HTTP/1.0\r\nConnection: TE, keep-alive\r\n\r\n", true];
        yield '1.0 close' => ["GET / HTTP/1.0\r\nConnection: close\r\n\r\n", false];
    }

    #[DataProvider('keepAliveCases')]
    public function testKeepAlive(string $raw, bool $keepAlive): void
    {
        $parser = new RequestParser();
        $parser->push($raw);
        $request = $parser->next();
        self::assertInstanceOf(Request::class, $request);
        self::assertSame($keepAlive, $request->keepAlive());
    }

    public function testLimitsAreValidatedAndCopiedByWithers(): void
    {
        $limits = new Limits();
        self::assertSame(8192, $limits->maxHeaderBytes);
        self::assertSame(8192, $limits->maxTargetBytes);
        self::assertSame(100, $limits->maxHeaderCount);
        self::assertSame(8 * 1024 * 1024, $limits->maxBodyBytes);
        $changed = $limits->withMaxHeaderBytes(100)->withMaxTargetBytes(50)->withMaxHeaderCount(5)
            ->withMaxBodyBytes(7)->withMaxChunkExtBytes(3);
        self::assertSame([100, 50, 5, 7, 3], [$changed->maxHeaderBytes, $changed->maxTargetBytes, $changed->maxHeaderCount, $changed->maxBodyBytes, $changed->maxChunkExtBytes]);
        self::assertSame(8192, $limits->maxHeaderBytes, 'the original is unchanged');

        $this->expectException(\InvalidArgumentException::class);
        $limits->withMaxHeaderCount(70000);
    }

    private static function catchError(RequestParser $parser): HttpError
    {
        try {
            $parser->next();
        } catch (HttpError $e) {
            return $e;
        }
        self::fail('Expected an HttpError');
    }
}
