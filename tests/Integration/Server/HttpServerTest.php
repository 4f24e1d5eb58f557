<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/** HTTP/1.1 behaviour and limits against a real `bin/weft serve` process. */
final class HttpServerTest extends TestCase
{
    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ServerProcess([
            __DIR__ . '/../fixtures/app.php', '--workers', '1',
            '--header-timeout', '1', '--idle-timeout', '2', '--max-body', '64K', '--max-connections', '50',
        ]);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    private function address(): string
    {
        return self::$server->address();
    }

    public function testHelloWithServerAndDateHeaders(): void
    {
        $response = RawHttp::get($this->address());
        self::assertSame(200, $response['status']);
        self::assertSame('Hello World', $response['body']);
        self::assertSame('weft', $response['headers']['server']);
        self::assertMatchesRegularExpression('/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/', $response['headers']['date']);
        self::assertSame('11', $response['headers']['content-length']);
    }

    public function testRequestDetailsReachTheApplication(): void
    {
        $client = new RawHttp($this->address());
        $body = 'a=1&b=two';
        $response = $client->send(
            "POST /info?x=1&y[]=2 HTTP/1.1\r\nHost: t\r\nX-Test: yes\r\nCookie: c1=v1; c2=v2\r\n"
            . "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " . \strlen($body) . "\r\n\r\n$body",
        )->response();
        $info = \json_decode($response['body'], true);
        self::assertSame('POST', $info['method']);
        self::assertSame('/info', $info['path']);
        self::assertSame(['x' => '1', 'y' => ['2']], $info['query']);
        self::assertSame('yes', $info['header']);
        self::assertSame(['c1' => 'v1', 'c2' => 'v2'], $info['cookies']);
        self::assertSame(['a' => '1', 'b' => 'two'], $info['form']);
        self::assertSame('127.0.0.1', $info['remote']);
        $client->close();
    }

    public function testKeepAliveServesManyRequestsOnOneConnection(): void
    {
        $client = new RawHttp($this->address());
        for ($i = 0; $i < 20; $i++) {
            $response = $client->send("GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")->response();
            self::assertSame(200, $response['status']);
            self::assertSame('keep-alive', $response['headers']['connection']);
        }
        $client->close();
    }

    public function testPipelinedRequestsAreAnsweredInOrder(): void
    {
        $client = new RawHttp($this->address());
        $client->send(
            "GET /info?n=1 HTTP/1.1\r\nHost: t\r\n\r\n"
            . "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"
            . "GET /info?n=3 HTTP/1.1\r\nHost: t\r\n\r\n",
        );
        self::assertSame(['n' => '1'], \json_decode($client->response()['body'], true)['query']);
        self::assertSame('hello', $client->response()['body']);
        self::assertSame(['n' => '3'], \json_decode($client->response()['body'], true)['query']);
        $client->close();
    }

    public function testChunkedRequestBody(): void
    {
        $client = new RawHttp($this->address());
        $response = $client->send(
            "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n",
        )->response();
        self::assertSame('hello world', $response['body']);
        $client->close();
    }

    public function testExpectContinue(): void
    {
        $client = new RawHttp($this->address());
        $client->send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
        self::assertSame("HTTP/1.1 100 Continue\r\n\r\n", \fread($client->socket, 25));
        self::assertSame('data', $client->send('data')->response()['body']);
        $client->close();
    }

    public function testHeadHasNoBody(): void
    {
        $client = new RawHttp($this->address());
        $client->send("HEAD / HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n");
        $head = $client->response();
        self::assertSame('11', $head['headers']['content-length']);
        // The body of the HEAD response was not sent: the next bytes are the GET's response.
        self::assertSame('Hello World', $client->response()['body']);
        $client->close();
    }

    public function testHttp10ClosesUnlessKeepAliveIsAsked(): void
    {
        $client = new RawHttp($this->address());
        $response = $client->send("GET / HTTP/1.0\r\n\r\n")->response();
        self::assertStringStartsWith('HTTP/1.0 200', $response['raw']);
        self::assertSame('close', $response['headers']['connection']);
        self::assertTrue($client->isClosedByPeer());

        $client = new RawHttp($this->address());
        $response = $client->send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")->response();
        self::assertSame('keep-alive', $response['headers']['connection']);
        self::assertSame(200, $client->send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")->response()['status']);
        $client->close();
    }

    public function testConnectionCloseFromClientOrHandler(): void
    {
        $client = new RawHttp($this->address());
        $client->send("GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")->response();
        self::assertTrue($client->isClosedByPeer());

        $client = new RawHttp($this->address());
        $response = $client->send("GET /close HTTP/1.1\r\nHost: t\r\n\r\n")->response();
        self::assertSame('close', $response['headers']['connection']);
        self::assertTrue($client->isClosedByPeer());
    }

    public function testStreamedResponseIsChunked(): void
    {
        $response = RawHttp::get($this->address(), '/stream');
        self::assertSame('chunked', $response['headers']['transfer-encoding']);
        self::assertSame('one two three', $response['body']);
    }

    public function testHandlerExceptionIsA500WithoutDetailsAndTheWorkerLivesOn(): void
    {
        $pid = RawHttp::get($this->address(), '/pid')['body'];
        $response = RawHttp::get($this->address(), '/throw');
        self::assertSame(500, $response['status']);
        self::assertSame("Internal Server Error\n", $response['body']);
        self::assertStringNotContainsString('secret detail', $response['raw']);
        self::assertSame($pid, RawHttp::get($this->address(), '/pid')['body']);
        self::assertStringContainsString('secret detail of the failure', self::$server->output(), 'the trace goes to the log');
    }

    public function testUndecodableBodyIsA400AndHeaderInjectionA500(): void
    {
        $client = new RawHttp($this->address());
        $response = $client->send("POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{nope")->response();
        self::assertSame(400, $response['status']);
        $response = $client->send("POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}")->response();
        self::assertSame('{"got":{"a":1}}', $response['body']);
        $response = $client->send("GET /inject HTTP/1.1\r\nHost: t\r\n\r\n")->response();
        self::assertSame(500, $response['status']);
        self::assertStringNotContainsString('pwned', $response['raw']);
        $client->close();
    }

    /** @return iterable<string, array{string, int}> */
    public static function badRequests(): iterable
    {
        yield 'garbage request line' => ["HELLO\r\n\r\n", 400];
        yield 'bad version' => ["GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505];
        yield 'space before colon' => ["GET / HTTP/1.1\r\nHost : t\r\n\r\n", 400];
        yield 'obs-fold' => ["GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n  b\r\n\r\n", 400];
        yield 'content-length and transfer-encoding' => ["POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400];
        yield 'two differing content-lengths' => ["POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400];
        yield 'negative content-length' => ["POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n", 400];
        yield 'bad chunk size' => ["POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400];
        yield 'unknown transfer-encoding' => ["POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501];
        yield 'headers over 8 KB' => ["GET / HTTP/1.1\r\nHost: t\r\nX-Big: " . \str_repeat('a', 9000) . "\r\n\r\n", 431];
        yield 'target over 8 KB' => ['GET /' . \str_repeat('a', 9000) . " HTTP/1.1\r\nHost: t\r\n\r\n", 414];
        yield 'body over --max-body' => ["POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 70000\r\n\r\n", 413];
        yield 'chunked body over --max-body' => ["POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10000\r\n" . \str_repeat('x', 65536) . "\r\n10\r\n" . \str_repeat('y', 16) . "\r\n0\r\n\r\n", 413];
    }

    /** @dataProvider badRequests */
    #[\PHPUnit\Framework\Attributes\DataProvider('badRequests')]
    public function testBadInputGetsItsStatusAndTheConnectionIsClosed(string $raw, int $status): void
    {
        $client = new RawHttp($this->address());
        $response = $client->send($raw)->response();
        self::assertSame($status, $response['status'], $response['raw']);
        self::assertSame('close', $response['headers']['connection']);
        self::assertTrue($client->isClosedByPeer());
        // ... and the server keeps serving.
        self::assertSame(200, RawHttp::get($this->address())['status']);
    }

    public function testSlowlorisGets408(): void
    {
        $client = new RawHttp($this->address());
        $client->send("GET / HTTP/1.1\r\nHost: t\r\n");
        $start = \microtime(true);
        // Keep trickling header bytes: that must not extend the header deadline (1 s here).
        for ($i = 0; $i < 3; $i++) {
            \usleep(300_000);
            @\fwrite($client->socket, "X-$i: y\r\n");
        }
        $rest = $client->rest();
        self::assertStringStartsWith('HTTP/1.1 408', $rest);
        self::assertLessThan(5.0, \microtime(true) - $start);
        self::assertSame(200, RawHttp::get($this->address())['status']);
    }

    public function testIdleKeepAliveConnectionIsClosedQuietly(): void
    {
        $client = new RawHttp($this->address());
        self::assertSame(200, $client->send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")->response()['status']);
        $start = \microtime(true);
        self::assertSame('', $client->rest(), 'an idle keep-alive connection is closed without a response');
        $elapsed = \microtime(true) - $start;
        self::assertGreaterThan(1.5, $elapsed);
        self::assertLessThan(8.0, $elapsed);
    }

    public function testBytesThenDisconnectLeaveTheServerServing(): void
    {
        for ($i = 0; $i < 5; $i++) {
            $client = new RawHttp($this->address());
            $client->send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\npartial");
            $client->close();
        }
        self::assertSame(200, RawHttp::get($this->address())['status']);
    }
}
