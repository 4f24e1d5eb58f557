<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Http;

use PHPUnit\Framework\TestCase;
use Weft\Client\Http\Client;
use Weft\Client\Http\ConnectFailed;
use Weft\Client\Http\ConnectionLost;
use Weft\Client\Http\ConnectTimeout;
use Weft\Client\Http\DelayServer;
use Weft\Client\Http\MalformedResponse;
use Weft\Client\Http\RequestOptions;
use Weft\Client\Http\RequestTimeout;
use Weft\Client\Http\StatusError;
use Weft\Client\Http\TimeoutException;
use Weft\Client\Http\TooManyRedirects;
use Weft\Coroutine\Timeout;
use Weft\Loop\Loop;
use Weft\Socket\Listener;
use Weft\Socket\ListenOptions;
use Weft\Socket\Socket;

use function Weft\go;
use function Weft\run;

/** The client against real sockets: purpose-built raw servers and DelayServer, all in this process. */
final class ClientTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    /**
     * Runs $test(TestServer, Client) in a coroutine against a server running $handler, and stops both.
     *
     * @param \Closure(Socket, TestServer, int): void $handler
     */
    private static function with(\Closure $handler, \Closure $test, ?Client $client = null): mixed
    {
        return run(static function () use ($handler, $test, $client): mixed {
            $server = TestServer::start($handler);
            $client ??= new Client();
            try {
                return $test($server, $client);
            } finally {
                $client->close();
                $server->stop();
            }
        });
    }

    /** A handler answering every request on a connection with $respond(request) until the client closes. */
    private static function answering(\Closure $respond): \Closure
    {
        return static function (Socket $socket, TestServer $server, int $connection) use ($respond): void {
            while (($request = $server->readRequest($socket, $connection)) !== null) {
                $socket->write($respond($request));
            }
        };
    }

    public function testGetWithContentLengthAndCaseInsensitiveHeaders(): void
    {
        self::with(
            self::answering(static fn () => TestServer::response(200, 'hello', ['X-Custom' => 'A', 'Set-Cookie' => 'a=1'])
                . ''),
            static function (TestServer $server, Client $client): void {
                $response = $client->get($server->url('/path?q=1'), ['X-Trace' => 'abc']);
                self::assertSame(200, $response->status());
                self::assertSame('OK', $response->reason());
                self::assertSame('hello', $response->body());
                self::assertSame('A', $response->header('x-custom'));
                self::assertSame('A', $response->header('X-CUSTOM'));
                self::assertTrue($response->hasHeader('Content-Length'));
                self::assertNull($response->header('missing'));
                self::assertTrue($response->isSuccessful());
                self::assertSame($server->url('/path?q=1'), $response->url());

                $seen = $server->requests[0];
                self::assertSame(['GET', '/path?q=1'], [$seen['method'], $seen['target']]);
                self::assertSame($server->listener->address(), $seen['headers']['host']);
                self::assertSame('abc', $seen['headers']['x-trace']);
                self::assertSame('gzip, deflate', $seen['headers']['accept-encoding']);
                self::assertArrayHasKey('user-agent', $seen['headers']);
                self::assertArrayNotHasKey('content-length', $seen['headers'], 'no body, no length on GET');
            },
        );
    }

    public function testChunkedResponseArrivingInPieces(): void
    {
        $body = self::with(
            static function (Socket $socket, TestServer $server): void {
                $server->readRequest($socket);
                $socket->write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
                \Weft\sleep(0.02);
                $socket->write("lo\r\n");
                \Weft\sleep(0.02);
                $socket->write("7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n");
                $server->readRequest($socket); // keep-alive: the next request comes on this connection
                $socket->write(TestServer::response(200, 'again'));
            },
            static function (TestServer $server, Client $client): array {
                return [$client->get($server->url())->body(), $client->get($server->url())->body(), $server->connections];
            },
        );
        self::assertSame(['hello, world', 'again', 1], $body);
    }

    public function testBodyDelimitedByTheConnectionClosing(): void
    {
        $result = self::with(
            static function (Socket $socket, TestServer $server): void {
                $server->readRequest($socket);
                $socket->write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end");
                $socket->close();
            },
            static function (TestServer $server, Client $client): array {
                $first = $client->get($server->url())->body();
                $second = $client->get($server->url())->body();
                return [$first, $second, $server->connections, $client->stats()['retried']];
            },
        );
        self::assertSame(['until the end', 'until the end', 2, 0], $result, 'a close-delimited connection is not reused');
    }

    public function testGzipAndDeflateAreDecoded(): void
    {
        $text = \str_repeat('weft compresses well. ', 200);
        $encodings = [
            '/gzip' => ['gzip', \gzencode($text)],
            '/deflate' => ['deflate', \gzcompress($text)],
            '/raw-deflate' => ['deflate', \gzdeflate($text)],
            '/identity' => ['identity', $text],
        ];
        self::with(
            self::answering(static function (array $request) use ($encodings): string {
                [$coding, $body] = $encodings[$request['target']];
                return TestServer::response(200, $body, ['Content-Encoding' => $coding]);
            }),
            static function (TestServer $server, Client $client) use ($text, $encodings): void {
                foreach (\array_keys($encodings) as $path) {
                    $response = $client->get($server->url($path));
                    self::assertSame($text, $response->body(), $path);
                }
                self::assertSame('gzip', $client->get($server->url('/gzip'))->header('content-encoding'));
                $raw = $client->get($server->url('/gzip'), [], RequestOptions::defaults()->withDecodeContent(false));
                self::assertSame(\gzencode($text), $raw->body(), 'left alone when asked');
                self::assertArrayNotHasKey('accept-encoding', \end($server->requests)['headers']);
            },
        );
    }

    public function testCorruptGzipIsAMalformedResponse(): void
    {
        self::with(
            self::answering(static fn () => TestServer::response(200, "\x1f\x8bnot gzip at all", ['Content-Encoding' => 'gzip'])),
            static function (TestServer $server, Client $client): void {
                try {
                    $client->get($server->url('/z'));
                    self::fail('no exception');
                } catch (MalformedResponse $e) {
                    self::assertStringContainsString('gzip body does not decode', $e->getMessage());
                    self::assertSame($server->url('/z'), $e->url());
                }
            },
        );
    }

    public function testDecodedSizeIsLimited(): void
    {
        $bomb = \gzencode(\str_repeat("\0", 1 << 20));
        self::with(
            self::answering(static fn () => TestServer::response(200, $bomb, ['Content-Encoding' => 'gzip'])),
            function (TestServer $server, Client $client): void {
                $this->expectException(MalformedResponse::class);
                $client->get($server->url(), [], RequestOptions::defaults()->withMaxBodyBytes(64 * 1024));
            },
        );
    }

    public function testRequestBodiesGoWithContentLength(): void
    {
        self::with(
            self::answering(static fn (array $r) => TestServer::response(201, \strtoupper($r['body']))),
            static function (TestServer $server, Client $client): void {
                $response = $client->post($server->url('/items'), 'a body', ['Content-Type' => 'text/plain', 'Content-Length' => '999']);
                self::assertSame(201, $response->status());
                self::assertSame('A BODY', $response->body());
                self::assertSame('6', $server->requests[0]['headers']['content-length'], 'the caller\'s wrong length is replaced');
                self::assertSame('a body', $server->requests[0]['body']);

                $client->post($server->url('/empty'));
                self::assertSame('0', $server->requests[1]['headers']['content-length']);

                $big = \random_bytes(300_000);
                self::assertSame(\strlen($big), \strlen($client->request('PUT', $server->url('/big'), [], $big)->body()));
                self::assertSame($big, $server->requests[2]['body']);
                self::assertSame(1, $server->connections);
            },
        );
    }

    public function testJsonHelper(): void
    {
        self::with(
            self::answering(static function (array $r): string {
                if ($r['target'] === '/missing') {
                    return TestServer::response(404, '{"error":"nope"}', ['Content-Type' => 'application/json'], 'Not Found');
                }
                if ($r['target'] === '/empty') {
                    return TestServer::response(204, '', [], 'No Content');
                }
                $in = \json_decode($r['body'], true);
                return TestServer::response(200, \json_encode(['got' => $in, 'type' => $r['headers']['content-type'] ?? null, 'accept' => $r['headers']['accept']]));
            }),
            static function (TestServer $server, Client $client): void {
                self::assertSame(
                    ['got' => ['a' => 1, 'b' => [true, null]], 'type' => 'application/json', 'accept' => 'application/json'],
                    $client->json('POST', $server->url('/echo'), ['a' => 1, 'b' => [true, null]]),
                );
                self::assertNull($client->json('GET', $server->url('/empty')));
                try {
                    $client->json('GET', $server->url('/missing'));
                    self::fail('no exception');
                } catch (StatusError $e) {
                    self::assertSame(404, $e->getCode());
                    self::assertSame(['error' => 'nope'], $e->response()->json());
                    self::assertStringContainsString('404 Not Found', $e->getMessage());
                }
            },
        );
    }

    public function testRedirectsOfEveryKind(): void
    {
        self::with(
            self::answering(static function (array $r): string {
                return match (true) {
                    \preg_match('#^/(301|302|303|307|308)$#', $r['target'], $m) === 1 => TestServer::response((int) $m[1], '', ['Location' => '/target'], 'Moved'),
                    $r['target'] === '/relative/start' => TestServer::response(302, '', ['Location' => '../target?from=relative'], 'Found'),
                    default => TestServer::response(200, $r['method'] . ' ' . $r['target'] . ' ' . $r['body']),
                };
            }),
            static function (TestServer $server, Client $client): void {
                foreach ([301, 302, 303] as $status) {
                    $response = $client->post($server->url("/$status"), 'payload', ['Content-Type' => 'text/plain']);
                    self::assertSame('GET /target ', $response->body(), "$status continues with GET and no body");
                    self::assertSame(1, $response->redirects());
                    self::assertSame($server->url('/target'), $response->url());
                    $last = \end($server->requests);
                    self::assertArrayNotHasKey('content-type', $last['headers']);
                }
                foreach ([307, 308] as $status) {
                    $response = $client->request('PUT', $server->url("/$status"), [], 'payload');
                    self::assertSame('PUT /target payload', $response->body(), "$status keeps the method and the body");
                }
                self::assertSame('GET /target?from=relative ', $client->get($server->url('/relative/start'))->body());

                $notFollowed = $client->get($server->url('/302'), [], RequestOptions::defaults()->withMaxRedirects(0));
                self::assertSame(302, $notFollowed->status());
                self::assertSame('/target', $notFollowed->header('location'));
            },
        );
    }

    public function testRedirectLoopStopsAtTheLimit(): void
    {
        self::with(
            self::answering(static function (array $r): string {
                $n = (int) \substr($r['target'], 1);
                return TestServer::response(302, '', ['Location' => '/' . ($n + 1)], 'Found');
            }),
            function (TestServer $server, Client $client): void {
                try {
                    $client->get($server->url('/0'));
                    self::fail('no exception');
                } catch (TooManyRedirects $e) {
                    self::assertStringContainsString('more than 5 redirects', $e->getMessage());
                    self::assertStringContainsString('/5 -> ', $e->getMessage());
                }
                self::assertCount(6, $server->requests, 'the first request and five redirects');
                $server->requests = [];
                $this->expectException(TooManyRedirects::class);
                $client->get($server->url('/0'), [], RequestOptions::defaults()->withMaxRedirects(2));
            },
        );
    }

    public function testCredentialsAreNotForwardedToAnotherOrigin(): void
    {
        run(static function (): void {
            $other = TestServer::start(self::answering(static fn () => TestServer::response(200, 'other')));
            $first = TestServer::start(self::answering(static fn () => TestServer::response(302, '', ['Location' => $other->url('/landing')], 'Found')));
            $client = new Client();
            try {
                $response = $client->get($first->url('/'), ['Authorization' => 'Bearer secret', 'Cookie' => 'session=1', 'X-Keep' => 'yes']);
                self::assertSame('other', $response->body());
                self::assertSame('Bearer secret', $first->requests[0]['headers']['authorization']);
                $forwarded = $other->requests[0]['headers'];
                self::assertArrayNotHasKey('authorization', $forwarded);
                self::assertArrayNotHasKey('cookie', $forwarded);
                self::assertSame('yes', $forwarded['x-keep']);
                self::assertSame($other->listener->address(), $forwarded['host']);
            } finally {
                $client->close();
                $first->stop();
                $other->stop();
            }
        });
    }

    public function testKeepAliveReusesOneConnection(): void
    {
        $result = self::with(
            self::answering(static fn (array $r) => TestServer::response(200, $r['target'])),
            static function (TestServer $server, Client $client): array {
                $bodies = [];
                for ($i = 0; $i < 10; $i++) {
                    $bodies[] = $client->get($server->url("/$i"))->body();
                }
                return [$bodies, $server->connections, $client->stats()];
            },
        );
        [$bodies, $connections, $stats] = $result;
        self::assertSame(['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9'], $bodies);
        self::assertSame(1, $connections, 'ten requests, one connection');
        self::assertSame(['requests' => 10, 'opened' => 1, 'reused' => 9, 'retried' => 0, 'idle' => 1], $stats);
    }

    public function testConnectionCloseFromEitherSideIsHonoured(): void
    {
        self::with(
            self::answering(static fn (array $r) => TestServer::response(200, 'x', $r['target'] === '/close' ? ['Connection' => 'close'] : [])),
            static function (TestServer $server, Client $client): void {
                $client->get($server->url('/close'));
                $client->get($server->url('/'));
                self::assertSame(2, $server->connections, 'the server said close');
                $client->get($server->url('/'), ['Connection' => 'close']);
                $client->get($server->url('/'));
                self::assertSame(3, $server->connections, 'we said close');
                self::assertSame('close', $server->requests[2]['headers']['connection']);
                $noKeepAlive = RequestOptions::defaults()->withKeepAlive(false);
                $client->get($server->url('/'), [], $noKeepAlive);
                self::assertSame('close', $server->requests[4]['headers']['connection']);
                self::assertSame(4, $server->connections);
                self::assertSame(1, $client->stats()['idle'], 'only the connection of the fourth request');
            },
        );
    }

    public function testAnIdleConnectionClosedByTheServerIsNotUsed(): void
    {
        $closed = 0;
        $stats = self::with(
            static function (Socket $socket, TestServer $server) use (&$closed): void {
                $server->readRequest($socket);
                $socket->write(TestServer::response(200, 'once')); // keep-alive promised, then closed
                $socket->close();
                $closed++;
            },
            static function (TestServer $server, Client $client) use (&$closed): array {
                $client->get($server->url());
                // Once close() returned, the FIN is queued on the loopback: this test is about the check
                // before use, not the retry.
                while ($closed === 0) {
                    \Weft\sleep(0.001);
                }
                self::assertSame('once', $client->get($server->url())->body());
                return [$server->connections, $client->stats()];
            },
        );
        self::assertSame(2, $stats[0]);
        self::assertSame(0, $stats[1]['retried'], 'found closed before sending');
        self::assertSame(0, $stats[1]['reused']);
    }

    public function testARequestLostOnAClosingKeptAliveConnectionIsRetriedOnce(): void
    {
        // The race where the server closes an idle connection just as the next request arrives: it reads
        // the request, then closes without answering.
        $handler = static function (Socket $socket, TestServer $server, int $connection): void {
            $server->readRequest($socket, $connection);
            $socket->write(TestServer::response(200, "first on $connection"));
            if ($server->readRequest($socket, $connection) !== null && $connection === 1) {
                return; // dropped unanswered
            }
            $socket->write(TestServer::response(200, "second on $connection"));
        };
        $result = self::with($handler, static function (TestServer $server, Client $client): array {
            $client->get($server->url());
            $retried = $client->get($server->url('/again'))->body();
            return [$retried, $server->connections, $client->stats()['retried'], \array_column($server->requests, 'target')];
        });
        self::assertSame(['first on 2', 2, 1, ['/', '/again', '/again']], $result, 'GET is idempotent: sent again on a fresh connection');

        // POST is not idempotent and it was sent: the error reaches the caller.
        self::with($handler, static function (TestServer $server, Client $client): void {
            $client->get($server->url());
            try {
                $client->post($server->url('/order'), 'buy');
                self::fail('no exception');
            } catch (ConnectionLost $e) {
                self::assertStringContainsString('closed the connection without answering', $e->getMessage());
                self::assertStringContainsString('POST ' . $server->url('/order'), $e->getMessage());
            }
            self::assertSame(1, $server->connections, 'not retried');
        });
    }

    public function testTruncatedAndMalformedResponses(): void
    {
        self::with(
            static function (Socket $socket, TestServer $server): void {
                $request = $server->readRequest($socket);
                $socket->write(match ($request['target']) {
                    '/truncated' => "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                    '/garbage' => "HELLO THERE\r\n\r\n",
                    '/bad-header' => "HTTP/1.1 200 OK\r\nNo Colon Here\r\n\r\n",
                    '/too-big' => "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n",
                    default => "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
                });
                $socket->close();
            },
            function (TestServer $server, Client $client): void {
                try {
                    $client->get($server->url('/truncated'));
                    self::fail('no exception');
                } catch (ConnectionLost $e) {
                    self::assertStringContainsString('before the response was complete', $e->getMessage());
                }
                foreach (['/garbage', '/bad-header'] as $path) {
                    try {
                        $client->get($server->url($path));
                        self::fail("no exception for $path");
                    } catch (MalformedResponse $e) {
                        self::assertStringContainsString('malformed response', $e->getMessage());
                        self::assertSame($server->url($path), $e->url());
                    }
                }
                $this->expectException(MalformedResponse::class);
                $client->get($server->url('/too-big'), [], RequestOptions::defaults()->withMaxBodyBytes(1000));
            },
        );
    }

    public function testInterimResponsesAreSkippedAndHeadHasNoBody(): void
    {
        self::with(
            static function (Socket $socket, TestServer $server): void {
                $server->readRequest($socket);
                $socket->write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n" . TestServer::response(200, 'final'));
                $server->readRequest($socket);
                $socket->write("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");
                $server->readRequest($socket);
                $socket->write(TestServer::response(200, 'after head'));
            },
            static function (TestServer $server, Client $client): void {
                self::assertSame('final', $client->get($server->url())->body());
                $head = $client->request('HEAD', $server->url());
                self::assertSame('', $head->body());
                self::assertSame('1234', $head->header('content-length'));
                self::assertSame('after head', $client->get($server->url())->body(), 'the connection stayed in step');
                self::assertSame(1, $server->connections);
            },
        );
    }

    public function testConnectionRefused(): void
    {
        $listener = Listener::listen('127.0.0.1:0');
        $url = 'http://' . $listener->address() . '/';
        $listener->close();
        foreach ([false, true] as $inCoroutine) {
            try {
                $inCoroutine ? run(static fn () => (new Client())->get($url)) : (new Client())->get($url);
                self::fail('no exception');
            } catch (ConnectFailed $e) {
                self::assertNotInstanceOf(TimeoutException::class, $e);
                self::assertStringContainsString('GET ' . $url, $e->getMessage());
                self::assertStringContainsString('ECONNREFUSED', $e->getMessage());
                self::assertSame($url, $e->url());
            }
        }
    }

    public function testConnectTimeout(): void
    {
        // A backlog of one, filled: the kernel drops further SYNs, so connecting hangs.
        $listener = Listener::listen('127.0.0.1:0', ListenOptions::defaults()->withBacklog(1));
        $held = [];
        try {
            for ($i = 0; $i < 2; $i++) {
                $held[] = Socket::connect($listener->address());
            }
            $url = 'http://' . $listener->address() . '/';
            $options = RequestOptions::defaults()->withConnectTimeout(0.3);
            foreach ([false, true] as $inCoroutine) {
                $start = \hrtime(true);
                try {
                    $call = static fn () => (new Client())->get($url, [], $options);
                    $inCoroutine ? run($call) : $call();
                    self::fail('no exception');
                } catch (ConnectTimeout $e) {
                    self::assertInstanceOf(TimeoutException::class, $e);
                    self::assertStringContainsString("GET $url: connecting timed out after 0.3 s", $e->getMessage());
                }
                $elapsed = (\hrtime(true) - $start) / 1e9;
                self::assertGreaterThanOrEqual(0.29, $elapsed);
                self::assertLessThan(2.0, $elapsed);
            }
        } finally {
            foreach ($held as $socket) {
                $socket->close();
            }
            $listener->close();
        }
    }

    public function testTotalTimeoutNamesTheUrl(): void
    {
        run(static function (): void {
            $server = DelayServer::listen('127.0.0.1:0', 5.0);
            $server->start();
            $client = new Client();
            $start = \hrtime(true);
            try {
                $client->get($server->url('/slow'), [], RequestOptions::defaults()->withTimeout(0.3));
                self::fail('no exception');
            } catch (RequestTimeout $e) {
                self::assertInstanceOf(TimeoutException::class, $e);
                self::assertSame('GET ' . $server->url('/slow') . ' timed out after 0.3 s', $e->getMessage());
            } finally {
                $client->close();
                $server->stop();
            }
            $elapsed = (\hrtime(true) - $start) / 1e9;
            self::assertGreaterThanOrEqual(0.29, $elapsed);
            self::assertLessThan(2.0, $elapsed);
            self::assertSame(0, $client->stats()['idle'], 'a timed-out connection is not reused');
        });
    }

    public function testTheTotalTimeoutCoversRedirectsAndAnEnclosingTimeoutWins(): void
    {
        self::with(
            static function (Socket $socket, TestServer $server): void {
                while (($request = $server->readRequest($socket)) !== null) {
                    \Weft\sleep(0.1);
                    $socket->write(TestServer::response(302, '', ['Location' => '/next'], 'Found'));
                }
            },
            static function (TestServer $server, Client $client): void {
                try {
                    $client->get($server->url('/'), [], RequestOptions::defaults()->withTimeout(0.5)->withMaxRedirects(10));
                    self::fail('no exception');
                } catch (RequestTimeout $e) {
                    self::assertStringContainsString('/next timed out after 0.5 s', $e->getMessage());
                }
                // Weft\timeout() around a call is the caller's own: its Timeout passes through untouched.
                try {
                    \Weft\timeout(0.2, static fn () => $client->get($server->url('/'), [], RequestOptions::defaults()->withTimeout(5.0)));
                    self::fail('no exception');
                } catch (Timeout $e) {
                    self::assertNotInstanceOf(RequestTimeout::class, $e);
                }
            },
        );
    }

    public function testInvalidInputIsRefusedBeforeConnecting(): void
    {
        $client = new Client();
        foreach ([
            static fn () => $client->get('ftp://example.com/'),
            static fn () => $client->get('/relative'),
            static fn () => $client->request("GET\r\nX: y", 'http://127.0.0.1:1/'),
            static fn () => $client->get('http://127.0.0.1:1/', ['X-Evil' => "a\r\nInjected: 1"]),
            static fn () => $client->get('http://127.0.0.1:1/', ["Bad Name" => 'x']),
        ] as $i => $call) {
            try {
                $call();
                self::fail("no exception for case $i");
            } catch (\InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testManyConcurrentRequestsOverlap(): void
    {
        $result = run(static function (): array {
            $server = DelayServer::listen('127.0.0.1:0', 0.2);
            $server->start();
            $client = new Client();
            try {
                $start = \hrtime(true);
                $tasks = [];
                for ($i = 0; $i < 100; $i++) {
                    $tasks[] = go(static fn () => $client->get($server->url("/$i"))->body());
                }
                $bodies = \array_map(static fn ($task) => $task->join(), $tasks);
                $elapsed = (\hrtime(true) - $start) / 1e9;
                return [$bodies, $elapsed, $server->stats()['requests']];
            } finally {
                $client->close();
                $server->stop();
            }
        });
        [$bodies, $elapsed, $served] = $result;
        self::assertSame(\array_fill(0, 100, 'ok'), $bodies);
        self::assertSame(100, $served);
        self::assertLessThan(10.0, $elapsed, '100 x 0.2 s overlapped (sequential: 20 s)');
    }
}
