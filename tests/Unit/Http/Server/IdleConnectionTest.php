<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Server;

use PHPUnit\Framework\TestCase;
use Psr\Log\NullLogger;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Parser\RequestParser;
use Weft\Http\Server\HttpProtocol;
use Weft\Http\Server\HttpSession;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Server\Connection;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;
use Weft\Server\Session;

/**
 * What an idle keep-alive connection holds: with the extension framing its requests, no RequestParser
 * (made when bytes must be parsed in PHP, dropped once empty again); without, one that holds nothing.
 * Real Connections, HttpProtocol and Dispatcher over socket pairs, in one process.
 */
final class IdleConnectionTest extends TestCase
{
    private Driver $driver;
    private Connections $connections;

    protected function setUp(): void
    {
        $this->driver = Loop::reset(\class_exists(\Weft\Ext\Conn::class, false) ? 'epoll' : 'select');
        $logger = new NullLogger();
        $app = static fn (Request $request): Response => new Response(200, ['Content-Type' => 'text/plain'], $request->method() . ' ' . $request->target() . ' ' . \strlen($request->body()));
        $this->connections = new Connections(new HttpProtocol($app, $logger), new Dispatcher($this->driver, $logger), $this->driver, $logger, 100);
    }

    protected function tearDown(): void
    {
        $this->connections->closeAll();
        Loop::reset();
    }

    /** @return array{resource, HttpSession, Connection} the client end, the server's session and connection */
    private function open(): array
    {
        [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \stream_set_blocking($client, false);
        $this->connections->add($server, '127.0.0.1:5000');
        $open = (new \ReflectionProperty(Connections::class, 'open'))->getValue($this->connections);
        $connection = \end($open);
        self::assertInstanceOf(HttpSession::class, $connection->session);
        return [$client, $connection->session, $connection];
    }

    /** Writes $bytes, runs the loop until $answers answers came (or nothing more moves), returns what came. */
    private function exchange(mixed $client, string $bytes, int $answers): string
    {
        \fwrite($client, $bytes);
        $got = '';
        $deadline = \hrtime(true) + 2_000_000_000;
        do { // at least one turn: the loop reads what was written
            $driver = $this->driver;
            $driver->delay(0.005, static function () use ($driver): void {
                $driver->stop();
            });
            $driver->run();
            $got .= (string) \stream_socket_recvfrom($client, 65536);
        } while (\substr_count($got, 'HTTP/1.1 ') < $answers && \hrtime(true) < $deadline);
        return $got;
    }

    private static function parser(HttpSession $session): ?RequestParser
    {
        return (new \ReflectionProperty(HttpSession::class, 'parser'))->getValue($session);
    }

    public function testAnIdleConnectionHoldsNoParserWhenTheExtensionFramesItsRequests(): void
    {
        [$client, $session, $connection] = $this->open();
        $framed = $connection->io() !== null && RequestParser::buildsRequests();
        self::assertNull(self::parser($session), 'none before the first byte');
        $answer = $this->exchange($client, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n", 1);
        self::assertStringEndsWith("\r\n\r\nGET /a 0", $answer);
        if ($framed) {
            self::assertNull(self::parser($session), 'the usual request never needed one');
        } else {
            self::assertTrue(self::parser($session)->isEmpty());
        }
        self::assertSame(Session::IDLE, $session->phase());
        self::assertTrue($session->wantsInput());
        self::assertNull($session->timedOut(), 'an idle connection is closed quietly');

        // A head in pieces needs the parser; it says HEAD meanwhile, and is dropped again once answered.
        self::assertSame('', $this->exchange($client, "GET /b HTTP/1.1\r\n", 0));
        self::assertNotNull(self::parser($session));
        self::assertSame(Session::HEAD, $session->phase());
        self::assertStringEndsWith("\r\n\r\nGET /b 0", $this->exchange($client, "Host: x\r\n\r\n", 1));
        $framed ? self::assertNull(self::parser($session)) : self::assertTrue(self::parser($session)->isEmpty());

        // A body in pieces, then a pipelined pair: the same answers, and nothing held after them.
        self::assertSame('', $this->exchange($client, "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab", 0));
        self::assertSame(Session::BODY, $session->phase());
        $answer = $this->exchange($client, "cde", 1);
        self::assertStringEndsWith("\r\n\r\nPOST /c 5", $answer);
        $answer = $this->exchange($client, "GET /d HTTP/1.1\r\nHost: x\r\n\r\nGET /e HTTP/1.1\r\nHost: x\r\n\r\n", 2);
        self::assertMatchesRegularExpression('~GET /d 0HTTP/1.1 200 OK\r\n.*GET /e 0$~s', $answer);
        $framed ? self::assertNull(self::parser($session)) : self::assertTrue(self::parser($session)->isEmpty());
        self::assertSame(Session::IDLE, $session->phase());
        self::assertFalse($connection->isClosed());
    }

    public function testAnEmptyParserSaysSoAndOneHoldingAnythingDoesNot(): void
    {
        $parser = new RequestParser();
        self::assertTrue($parser->isEmpty());
        $parser->push("GET / HTTP/1.1\r\n");
        self::assertNull($parser->next());
        self::assertFalse($parser->isEmpty(), 'a partial head');
        $parser->push("Host: x\r\nContent-Length: 2\r\n\r\n");
        self::assertNull($parser->next());
        self::assertFalse($parser->isEmpty(), 'a body under way');
        $parser->push('ok');
        self::assertSame('ok', $parser->next()?->body());
        self::assertTrue($parser->isEmpty());
        $parser->push("GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n");
        self::assertNull($parser->next());
        self::assertFalse($parser->isEmpty(), 'a 100 Continue owed');
    }
}
