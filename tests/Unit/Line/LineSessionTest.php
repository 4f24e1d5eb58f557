<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Line;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Psr\Log\LoggerInterface;
use Psr\Log\NullLogger;
use Weft\Line\LineProtocol;
use Weft\Line\LineSession;
use Weft\Line\Peer;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Server\Connection;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;

/**
 * The line protocol's behaviour, the same on every path: with the extension's I/O (reads of whole lines
 * cut in C, Conn::frameLines()), PHP streams on the native loop (WEFT_NATIVE_HTTP=0), and the select loop
 * without the extension. Real Connections, LineProtocol and Dispatcher over socket pairs, in one process.
 */
final class LineSessionTest extends TestCase
{
    private Driver $driver;
    private ?Connections $connections = null;

    /** @return array<string, array{string}> */
    public static function paths(): array
    {
        return ['extension I/O' => ['native'], 'PHP streams, native loop' => ['streams'], 'select loop' => ['select']];
    }

    protected function tearDown(): void
    {
        $this->connections?->closeAll();
        Connection::useNativeIo(null);
        Loop::reset();
    }

    /** @param \Closure(string, Peer): ?string $app */
    private function serve(string $path, \Closure $app, int $maxLine = 65536, float $idle = 300.0, ?LoggerInterface $logger = null): void
    {
        $native = \class_exists(\Weft\Ext\Conn::class, false);
        if ($path !== 'select' && !$native) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        Connection::useNativeIo($path === 'native');
        $this->driver = Loop::reset($path === 'select' ? 'select' : 'epoll');
        $logger ??= new NullLogger();
        $protocol = new LineProtocol($app, $logger, $maxLine, $idle);
        $this->connections = new Connections($protocol, new Dispatcher($this->driver, $logger), $this->driver, $logger, 100);
    }

    /** @return resource the client end of a new connection */
    private function open(): mixed
    {
        [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \stream_set_blocking($client, false);
        $this->connections->add($server, '127.0.0.1:5000');
        return $client;
    }

    private function connection(): Connection
    {
        $open = (new \ReflectionProperty(Connections::class, 'open'))->getValue($this->connections);
        return \end($open);
    }

    /** Runs the loop for $n short turns. */
    private function turns(int $n): void
    {
        for ($i = 0; $i < $n; $i++) {
            $driver = $this->driver;
            $driver->delay(0.005, static function () use ($driver): void {
                $driver->stop();
            });
            $driver->run();
        }
    }

    /**
     * Writes $bytes, runs the loop until what came back holds $until (or the peer closed, or 3 s passed),
     * returns what came.
     *
     * @param resource $client
     */
    private function exchange(mixed $client, string $bytes, string $until, ?bool &$closed = null): string
    {
        if ($bytes !== '') {
            \fwrite($client, $bytes);
        }
        $got = '';
        $closed = false;
        $deadline = \hrtime(true) + 3_000_000_000;
        do {
            $driver = $this->driver;
            $driver->delay(0.005, static function () use ($driver): void {
                $driver->stop();
            });
            $driver->run();
            while (($chunk = \fread($client, 1 << 20)) !== '' && $chunk !== false) {
                $got .= $chunk;
            }
            if (\feof($client)) {
                $closed = true;
                break;
            }
        } while (!\str_contains($got, $until) && \hrtime(true) < $deadline);
        return $got;
    }

    #[DataProvider('paths')]
    public function testLinesAreAnsweredInOrderWithTheEndingTheyCameWith(string $path): void
    {
        $this->serve($path, static fn (string $line): ?string => $line === 'silent' ? null : "<$line>");
        $client = $this->open();
        self::assertSame("<a>\n<b>\r\n<>\n", $this->exchange($client, "a\nb\r\nsilent\n\n", "<>\n"), 'several lines in one read');
        \fwrite($client, 'hel');
        $this->turns(3);
        self::assertSame("<hello>\r\n", $this->exchange($client, "lo\r\n", "\n"), 'a line in two reads');
        self::assertSame("<x\0y>\n", $this->exchange($client, "x\0y\n", "\n"));
        self::assertInstanceOf(LineSession::class, $this->connection()->session);
    }

    #[DataProvider('paths')]
    public function testAHandlerThatFailsOrReturnsNoStringIsAnsweredWithAnErrorLineAndLogged(string $path): void
    {
        $logger = new class () extends AbstractLogger {
            /** @var list<string> */
            public array $lines = [];

            public function log($level, string|\Stringable $message, array $context = []): void
            {
                $this->lines[] = $level . ' ' . \strtr((string) $message, ['{message}' => $context['message'] ?? '', '{type}' => $context['type'] ?? '']);
            }
        };
        $this->serve($path, static fn (string $line): mixed => match ($line) {
            'fail' => throw new \RuntimeException('boom'),
            'int' => 42,
            default => "<$line>",
        }, logger: $logger);
        $client = $this->open();
        self::assertSame(
            "ERROR internal server error\r\nERROR internal server error\n<ok>\n",
            $this->exchange($client, "fail\r\nint\nok\n", "<ok>\n", $closed),
            'each line answered in order, the connection goes on',
        );
        self::assertFalse($closed);
        self::assertSame(['error Line handler failed: boom', 'error Line handler returned int; expected a string or null'], $logger->lines);
        self::assertSame("<again>\n", $this->exchange($client, "again\n", "\n"), 'a line of its own read');
        self::assertSame("ERROR internal server error\n", $this->exchange($client, "fail\n", "\n"));
    }

    #[DataProvider('paths')]
    public function testALineAtTheLimitIsAnsweredAndOneOverItIsAnErrorAndTheEnd(string $path): void
    {
        $this->serve($path, static fn (string $line): string => $line, 8);
        $client = $this->open();
        self::assertSame("12345678\r\n", $this->exchange($client, "12345678\r\n", "\n"));
        self::assertSame("ERROR line too long (limit 8 bytes)\r\n", $this->exchange($client, "ok\n123456789\n", 'bytes)', $closed));
        $this->exchange($client, '', "\0", $closed);
        self::assertTrue($closed, 'closed after the error');
        // Still arriving, already over the limit (one byte of slack for a "\r"): the same error, no waiting for its end.
        $client = $this->open();
        self::assertSame("ERROR line too long (limit 8 bytes)\r\n", $this->exchange($client, '1234567890', 'bytes)'));
        $this->exchange($client, '', "\0", $closed);
        self::assertTrue($closed);
    }

    #[DataProvider('paths')]
    public function testThePeerSendsKeepsStateSaysWhoAndHangsUp(string $path): void
    {
        $this->serve($path, static function (string $line, Peer $peer): ?string {
            if ($line === 'quit') {
                $peer->close();
                return 'bye';
            }
            $peer->set('n', $peer->get('n', 0) + 1);
            $peer->send('from ' . $peer->remoteAddress());
            return $line . ' #' . $peer->get('n');
        });
        $client = $this->open();
        self::assertSame("from 127.0.0.1:5000\r\none #1\r\n", $this->exchange($client, "one\r\n", "#1\r\n"));
        self::assertSame("from 127.0.0.1:5000\r\ntwo #2\r\n", $this->exchange($client, "two\r\n", "#2\r\n"));
        self::assertSame("bye\r\n", $this->exchange($client, "quit\r\nnever\r\n", "bye\r\n"));
        $this->exchange($client, '', "\0", $closed);
        self::assertTrue($closed, 'closed once "bye" was sent; the line after quit is never answered');
    }

    #[DataProvider('paths')]
    public function testAHandlerThatWaitsHoldsItsConnectionsNextLinesOnly(string $path): void
    {
        $this->serve($path, static function (string $line): string {
            if (\str_starts_with($line, 'slow')) {
                \Weft\sleep(0.05);
            }
            return $line;
        });
        $slow = $this->open();
        $other = $this->open();
        \fwrite($slow, "slow1\nfast\nslow2\n");
        // The other connection is answered while the first one's handler sleeps.
        self::assertSame("quick\n", $this->exchange($other, "quick\n", "\n"));
        self::assertSame("slow1\nfast\nslow2\n", $this->exchange($slow, '', "slow2\n"), 'in order, one at a time');
        self::assertSame("again\n", $this->exchange($slow, "again\n", "\n"));
    }

    #[DataProvider('paths')]
    public function testAnIdleConnectionIsClosedAfterTheIdleTimeout(string $path): void
    {
        $this->serve($path, static fn (string $line): string => $line, 65536, 0.2);
        $client = $this->open();
        $started = \hrtime(true); // before the line: the timeout counts from its read, a little later
        self::assertSame("hi\n", $this->exchange($client, "hi\n", "\n"));
        $this->exchange($client, '', "\0", $closed);
        self::assertTrue($closed);
        self::assertGreaterThanOrEqual(0.19, (\hrtime(true) - $started) / 1e9, 'not before the timeout');
        // A line that never ends shares the idle timeout.
        $client = $this->open();
        $this->exchange($client, 'no end', "\0", $closed);
        self::assertTrue($closed);
    }

    #[DataProvider('paths')]
    public function testADrainAnswersTheLineInFlightThenCloses(string $path): void
    {
        $this->serve($path, static function (string $line): string {
            \Weft\sleep(0.05);
            return $line;
        });
        $busy = $this->open();
        $idle = $this->open();
        self::assertSame("warm\n", $this->exchange($idle, "warm\n", "\n"));
        \fwrite($busy, "last\n");
        $this->driver->delay(0.01, fn () => $this->driver->stop());
        $this->driver->run(); // the line is in the application now
        $empty = false;
        $this->connections->drain(static function () use (&$empty): void {
            $empty = true;
        });
        self::assertSame("last\n", $this->exchange($busy, '', "last\n"));
        $this->exchange($busy, '', "\0", $closed);
        self::assertTrue($closed, 'closed once answered');
        $this->exchange($idle, '', "\0", $closed);
        self::assertTrue($closed, 'the idle one too');
        self::assertTrue($empty);
    }

    #[DataProvider('paths')]
    public function testAReplyToAPeerThatIsGoneEndsTheConnectionQuietly(string $path): void
    {
        $answered = 0;
        $this->serve($path, static function (string $line) use (&$answered): string {
            \Weft\sleep(0.03);
            $answered++;
            return $line;
        });
        $client = $this->open();
        $other = $this->open();
        \fwrite($client, "bye\n");
        $this->turns(1);
        \fclose($client); // gone while its line runs: the reply finds no one
        $this->turns(20);
        self::assertSame(1, $answered);
        self::assertSame(1, $this->connections->count(), 'only the other connection is left');
        self::assertSame("still\n", $this->exchange($other, "still\n", "\n"));
    }

    #[DataProvider('paths')]
    public function testAPeerThatDoesNotReadStopsItsOwnReadingAndGetsEverythingLater(string $path): void
    {
        $big = \str_repeat('x', 400_000);
        $this->serve($path, static fn (string $line): string => $line . $big);
        $client = $this->open();
        \fwrite($client, \str_repeat("l\n", 10));
        $this->turns(20); // the peer reads nothing: output piles up to the high-water mark, no further
        $connection = $this->connection();
        self::assertGreaterThan(0, $connection->unsent());
        self::assertLessThan(Connection::HIGH_WATER + 400_010, $connection->unsent(), 'no more lines run past the mark');
        $expected = \str_repeat("l$big\n", 10);
        $got = '';
        for ($i = 0; $i < 1000 && \strlen($got) < \strlen($expected); $i++) {
            $this->turns(1);
            while (($chunk = \fread($client, 1 << 20)) !== '' && $chunk !== false) {
                $got .= $chunk;
            }
        }
        self::assertSame(\strlen($expected), \strlen($got));
        self::assertSame($expected, $got, 'every answer, whole and in order');
    }
}
