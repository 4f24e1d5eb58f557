<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Coroutine\ConcurrentUse;
use Weft\Hook\Hooks;
use Weft\Loop\NativeDriver;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/**
 * The stream hooks on local sockets: big writes that must wait for the reader, write timeouts, lines,
 * unix and udp sockets, a peer that hangs up, refused connects, and a GC destructor (where a Fiber
 * cannot switch, so the original blocking code runs).
 */
final class StreamHookEdgesTest extends TestCase
{
    /** @var list<string> */
    private array $files = [];

    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        Loop::reset('select');
        Hooks::enable(Hooks::KINDS['stream'] | Hooks::KINDS['sleep']);
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        Loop::reset('select');
        foreach ($this->files as $file) {
            @\unlink($file);
        }
    }

    /** @return iterable<string, array{string}> */
    public static function backends(): iterable
    {
        yield 'select' => ['select'];
        yield 'epoll' => ['epoll'];
    }

    #[DataProvider('backends')]
    public function testABigWriteWaitsForTheReaderInsteadOfBlocking(string $backend): void
    {
        $this->useLoop($backend);
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = \stream_socket_get_name($server, false);
        $size = 8 * 1024 * 1024;
        [$written, $read] = run(static function () use ($server, $address, $size): array {
            $client = \stream_socket_client('tcp://' . $address, $errno, $error, 5);
            \stream_set_timeout($client, 10);
            $peer = \stream_socket_accept($server, 5);
            $reader = go(static function () use ($peer, $size): int {
                $got = 0;
                while ($got < $size) {
                    $chunk = \fread($peer, 65536);
                    if ($chunk === '' || $chunk === false) {
                        break;
                    }
                    $got += \strlen($chunk);
                    \usleep(100); // a slow reader: the writer must wait for it many times
                }
                return $got;
            });
            $written = \fwrite($client, \str_repeat('x', $size));
            return [$written, $reader->join()];
        });
        self::assertSame($size, $written);
        self::assertSame($size, $read);
    }

    public function testAWriteToAPeerThatNeverReadsTimesOut(): void
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = \stream_socket_get_name($server, false);
        [$written, $timedOut, $other] = run(static function () use ($server, $address): array {
            $client = \stream_socket_client('tcp://' . $address, $errno, $error, 5);
            $peer = \stream_socket_accept($server, 5);
            \stream_set_timeout($client, 0, 300_000);
            $other = go(static function (): string {
                \usleep(10_000);
                return 'ran';
            });
            $written = @\fwrite($client, \str_repeat('x', 64 * 1024 * 1024));
            $meta = \stream_get_meta_data($client);
            \fclose($peer);
            return [$written, $meta['timed_out'], $other->join()];
        });
        self::assertTrue($written === false || $written < 64 * 1024 * 1024, 'the write stopped at the timeout');
        self::assertTrue($timedOut);
        self::assertSame('ran', $other);
    }

    #[DataProvider('backends')]
    public function testLinesOverAUnixSocketAndAPeerThatHangsUp(string $backend): void
    {
        $this->useLoop($backend);
        $path = $this->files[] = \sys_get_temp_dir() . '/weft-hook-' . \bin2hex(\random_bytes(4)) . '.sock';
        $server = \stream_socket_server('unix://' . $path);
        $lines = run(static function () use ($server, $path): array {
            $client = \stream_socket_client('unix://' . $path, $errno, $error, 5);
            $writer = go(static function () use ($server): void {
                $peer = \stream_socket_accept($server, 5);
                foreach (['one', 'two'] as $line) {
                    \usleep(20_000);
                    \fwrite($peer, $line . "\n");
                }
                \fclose($peer);
            });
            $lines = [];
            while (($line = \fgets($client)) !== false) {
                $lines[] = \rtrim($line);
            }
            $lines[] = \feof($client) ? 'eof' : 'not eof';
            $writer->join();
            return $lines;
        });
        self::assertSame(['one', 'two', 'eof'], $lines);
    }

    public function testUdpReceiveWaitsForADatagram(): void
    {
        $receiver = \stream_socket_server('udp://127.0.0.1:0', $errno, $error, \STREAM_SERVER_BIND);
        $address = \stream_socket_get_name($receiver, false);
        $received = run(static function () use ($receiver, $address): string {
            $sender = go(static function () use ($address): void {
                \usleep(20_000);
                $socket = \stream_socket_client('udp://' . $address);
                \fwrite($socket, 'datagram');
            });
            $data = \stream_socket_recvfrom($receiver, 100);
            $sender->join();
            return $data;
        });
        self::assertSame('datagram', $received);
    }

    public function testFsockopenAndARefusedConnect(): void
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) \substr((string) \stream_socket_get_name($server, false), 10);
        \fclose($server); // nothing listens there now
        $result = run(static function () use ($port): array {
            $socket = @\fsockopen('127.0.0.1', $port, $errno, $error, 2.0);
            return [$socket, $errno, $error];
        });
        self::assertFalse($result[0]);
        self::assertSame(111, $result[1]);
        self::assertStringContainsString('refused', $result[2]);
    }

    public function testInAGcDestructorTheOriginalBlockingReadRuns(): void
    {
        [$a, $b] = [null, null];
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = \stream_socket_get_name($server, false);
        $got = run(static function () use ($server, $address): string {
            $client = \stream_socket_client('tcp://' . $address, $errno, $error, 5);
            $peer = \stream_socket_accept($server, 5);
            $box = new \ArrayObject();
            \fwrite($peer, 'data');
            // A cycle whose destructor reads: the collector runs it where no Fiber may switch.
            $node = new class ($client, $box) {
                public ?object $self = null;

                public function __construct(private mixed $client, private \ArrayObject $box)
                {
                }

                public function __destruct()
                {
                    $this->box['read'] = \fread($this->client, 4);
                }
            };
            $node->self = $node;
            unset($node);
            \gc_collect_cycles();
            return (string) ($box['read'] ?? 'destructor did not run');
        });
        self::assertSame('data', $got);
    }

    #[DataProvider('backends')]
    public function testASecondReaderOfAWaitedOnConnectionGetsConcurrentUseWorded(string $backend): void
    {
        // The hook hands the facts to PHP (Hooks::install()'s concurrentUse), and ConcurrentUse writes
        // the message every "used by two coroutines at once" error has, naming the intruder.
        $this->useLoop($backend);
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = \stream_socket_get_name($server, false);
        [$error, $first] = run(static function () use ($server, $address): array {
            $client = \stream_socket_client('tcp://' . $address, $errno, $error, 5);
            \stream_set_timeout($client, 10);
            $peer = \stream_socket_accept($server, 5);
            $reader = go(static fn () => \fread($client, 4));
            $intruder = go(static function () use ($client): ?\Throwable {
                try {
                    \fread($client, 4);
                } catch (ConcurrentUse $e) {
                    return $e;
                }
                return null;
            });
            $error = $intruder->join();
            \fwrite($peer, 'data');
            return [[$error, $intruder->id], $reader->join()];
        });
        [$error, $intruder] = $error;
        self::assertInstanceOf(ConcurrentUse::class, $error);
        self::assertSame(
            "This connection is in use by another coroutine (waiting on it); coroutine #{$intruder} cannot use it at the same time "
            . '(a connection serves one coroutine at a time): use one connection per coroutine, or a pool',
            $error->getMessage(),
        );
        self::assertSame('data', $first, 'the holder\'s read is not disturbed');
    }

    public function testTheMainProgramAsTheSecondReaderIsNamedSo(): void
    {
        // Outside any coroutine the hook refuses the same way, and ConcurrentUse names the main program.
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = \stream_socket_get_name($server, false);
        $client = \stream_socket_client('tcp://' . $address, $errno, $error, 5);
        \stream_set_timeout($client, 10);
        $peer = \stream_socket_accept($server, 5);
        $reader = go(static fn () => \fread($client, 4));
        try {
            \fread($client, 4);
            self::fail('the main program read a connection a coroutine waits on');
        } catch (ConcurrentUse $e) {
            self::assertStringStartsWith(
                'This connection is in use by another coroutine (waiting on it); the main program (outside of any coroutine) cannot use it',
                $e->getMessage(),
            );
        }
        \fwrite($peer, 'data');
        self::assertSame('data', $reader->join());
    }

    private function useLoop(string $backend): void
    {
        if ($backend === 'epoll' && !\Weft\Loop\DriverFactory::epollAvailable()) {
            self::markTestSkipped('no epoll backend');
        }
        Loop::reset($backend);
    }
}
