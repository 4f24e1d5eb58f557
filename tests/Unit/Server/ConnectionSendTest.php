<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Psr\Log\NullLogger;
use Weft\Ext\Conn;
use Weft\Loop\Loop;
use Weft\Loop\NativeDriver;
use Weft\Server\Connection;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;
use Weft\Server\Protocol;
use Weft\Server\Session;
use Weft\Server\Timeouts;
use Weft\Tests\Support\QuietSession;

/**
 * Connection::send(), the native path's write of the one answer to a request the extension framed alone:
 * sent at once with Weft\Ext\Conn when nothing waits before it, the rest queued exactly as write() would
 * have, in order behind anything queued, and a peer that is gone ends the connection. Real socket pairs
 * on the native loop.
 */
final class ConnectionSendTest extends TestCase
{
    private NativeDriver $loop;
    private ?Connection $connection = null;
    private Connections $connections;

    protected function setUp(): void
    {
        if (!\class_exists(Conn::class, false)) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $driver = Loop::reset('epoll');
        if (!$driver instanceof NativeDriver) {
            self::markTestSkipped('not the native loop');
        }
        Connection::useNativeIo(true);
        $this->loop = $driver;
        $protocol = new class ($this) implements Protocol {
            public function __construct(private readonly ConnectionSendTest $test)
            {
            }

            public function open(Connection $connection): Session
            {
                $this->test->opened($connection);
                return new class () extends QuietSession {
                };
            }

            public function refusal(string $reason): string
            {
                return '';
            }

            public function timeouts(): Timeouts
            {
                return new Timeouts(5.0, 5.0, 5.0, 5.0);
            }
        };
        $this->connections = new Connections($protocol, new Dispatcher($driver, new NullLogger()), $driver, new NullLogger(), 10);
    }

    protected function tearDown(): void
    {
        $this->connection?->close();
        Connection::useNativeIo(null);
        Loop::reset();
    }

    /** @internal the test protocol's open() */
    public function opened(Connection $connection): void
    {
        $this->connection = $connection;
    }

    /** @return resource the client end; the server end is a Connection with native I/O ($this->connection) */
    private function connect(?int $sendBuffer = null): mixed
    {
        [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        if ($sendBuffer !== null) {
            $socket = \socket_import_stream($server);
            \socket_set_option($socket, \SOL_SOCKET, \SO_SNDBUF, $sendBuffer);
        }
        $this->connections->add($server, '127.0.0.1:1');
        self::assertNotNull($this->connection?->io(), 'the connection reads and writes through Weft\Ext\Conn');
        \stream_set_blocking($client, false);
        return $client;
    }

    /** Runs the loop while the client reads, until it holds $length bytes or the loop has nothing left. */
    private function readAll(mixed $client, int $length): string
    {
        $got = '';
        $watcher = $this->loop->onReadable($client, function () use ($client, $length, &$got, &$watcher): void {
            $got .= (string) \fread($client, 65536);
            if (\strlen($got) >= $length || \feof($client)) {
                $this->loop->cancel($watcher);
                $this->loop->stop(); // the connection's own watcher and timer would keep it running
            }
        });
        $this->loop->run();
        return $got;
    }

    public function testAnAnswerTheSocketTakesWholeIsOutAtOnceWithNothingQueued(): void
    {
        $client = $this->connect();
        $this->connection->send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
        self::assertSame(0, $this->connection->unsent(), 'nothing queued: the socket took it');
        self::assertSame("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", \fread($client, 100), 'on the socket before any flush()');
    }

    public function testWhatTheSocketDoesNotTakeIsQueuedAndSentInOrder(): void
    {
        $client = $this->connect(4096);
        $answer = '';
        for ($i = 0; \strlen($answer) < 300000; $i++) {
            $answer .= \sprintf("%08d\n", $i);
        }
        $this->connection->send($answer);
        $unsent = $this->connection->unsent();
        self::assertGreaterThan(0, $unsent, 'a small socket buffer takes part of it');
        self::assertLessThan(\strlen($answer), $unsent, 'and the socket took some at once');
        self::assertSame(\strlen($answer), $this->connection->held(), 'held whole until its last byte is out, as a written piece');
        $this->connection->flush(); // the writable watcher sends the rest as the client reads
        self::assertSame($answer, $this->readAll($client, \strlen($answer)));
        self::assertSame(0, $this->connection->unsent());
        self::assertSame(0, $this->connection->held());
    }

    public function testAnAnswerGoesBehindWhatIsAlreadyQueued(): void
    {
        $client = $this->connect();
        $this->connection->write('first ');
        $this->connection->send('second');
        self::assertSame(12, $this->connection->unsent(), 'queued behind the first, not sent ahead of it');
        self::assertSame('', \fread($client, 100), 'nothing on the socket before flush()');
        $this->connection->flush();
        self::assertSame('first second', $this->readAll($client, 12));
    }

    public function testAPeerThatIsGoneEndsTheConnection(): void
    {
        $client = $this->connect();
        \fclose($client);
        $this->connection->send('too late');
        self::assertTrue($this->connection->isClosed());
        self::assertSame(0, $this->connection->unsent());
        self::assertSame(0, $this->connection->held());
    }
}
