<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Socket;

use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;
use Weft\Socket\ConnectException;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\ConnectOptions;
use Weft\Socket\ConnectTimeout;
use Weft\Socket\LineTooLong;
use Weft\Socket\Listener;
use Weft\Socket\ListenException;
use Weft\Socket\ListenOptions;
use Weft\Socket\Socket;
use Weft\Tests\Unit\Coroutine\CoroutineTestCase;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

final class SocketTest extends CoroutineTestCase
{
    public function testEchoOverTcpWithOneCoroutinePerConnection(): void
    {
        $replies = run(static function (): array {
            $listener = Listener::listen('127.0.0.1:0');
            $server = go(static function () use ($listener): void {
                $handlers = [];
                for ($i = 0; $i < 20; $i++) {
                    $connection = $listener->accept();
                    $handlers[] = go(static function () use ($connection): void {
                        while (($line = $connection->readLine()) !== null) {
                            $connection->write("echo $line\n");
                        }
                        $connection->close();
                    });
                }
                foreach ($handlers as $handler) {
                    $handler->join();
                }
            });
            $replies = [];
            $wg = new WaitGroup();
            for ($c = 0; $c < 20; $c++) {
                $wg->add();
                go(static function () use ($listener, $c, &$replies, $wg): void {
                    $socket = Socket::connect($listener->address());
                    for ($i = 0; $i < 10; $i++) {
                        $socket->write("$c.$i\n");
                        $replies[] = $socket->readLine();
                    }
                    $socket->close();
                    $wg->done();
                });
            }
            $wg->wait();
            $server->join();
            $listener->close();
            return $replies;
        });
        self::assertCount(200, $replies);
        $expected = [];
        for ($c = 0; $c < 20; $c++) {
            for ($i = 0; $i < 10; $i++) {
                $expected[] = "echo $c.$i";
            }
        }
        \sort($replies);
        \sort($expected);
        self::assertSame($expected, $replies);
    }

    public function testReadLineHandlesCrLfSplitsEofAndLimits(): void
    {
        [$a, $b] = Socket::pair();
        $a->write("one\r\ntw");
        $a->write("o\nthree");
        self::assertSame('one', $b->readLine());
        self::assertSame('two', $b->readLine());
        $a->close();
        self::assertSame('three', $b->readLine(), 'an unterminated last line is returned at EOF');
        self::assertNull($b->readLine());

        [$a, $b] = Socket::pair();
        $a->write(\str_repeat('x', 100) . "\n");
        $this->expectException(LineTooLong::class);
        $b->readLine(10);
    }

    public function testReadExactlyAcrossWritesAndEofInTheMiddle(): void
    {
        [$a, $b] = Socket::pair();
        run(static function () use ($a, $b): void {
            go(static function () use ($a): void {
                foreach (['ab', 'cd', 'ef'] as $part) {
                    $a->write($part);
                    sleep(0.002);
                }
                $a->close();
            });
            self::assertSame('abcd', $b->readExactly(4));
            try {
                $b->readExactly(4);
                self::fail('EOF not reported');
            } catch (ConnectionClosed $e) {
                self::assertStringContainsString('2 received', $e->getMessage());
            }
        });
    }

    public function testWriteWaitsWhileTheKernelBufferIsFull(): void
    {
        [$a, $b] = Socket::pair();
        // 5 MB: far beyond any socket buffer, written in slices; bytes that repeat nowhere, so that a slice
        // taken from the wrong offset shows.
        $payload = \random_bytes(5_000_000);
        $received = run(static function () use ($a, $b, $payload): string {
            $writer = go(static function () use ($a, $payload): void {
                $a->write($payload);
                $a->close();
            });
            self::assertFalse($writer->isFinished(), 'write() must suspend on a full buffer');
            $chunks = [];
            while (($chunk = $b->read()) !== null) {
                $chunks[] = $chunk;
            }
            $writer->join();
            return \implode('', $chunks);
        });
        self::assertSame(\strlen($payload), \strlen($received));
        self::assertTrue($payload === $received, 'the same bytes in the same order');
    }

    public function testReadTimeoutThrowsAndTheSocketStaysUsable(): void
    {
        [$a, $b] = Socket::pair();
        run(static function () use ($a, $b): void {
            try {
                $b->read(100, 0.02);
                self::fail('no timeout');
            } catch (Timeout $e) {
                self::assertSame('Read timed out after 0.02 s', $e->getMessage());
            }
            $a->write('late');
            self::assertSame('late', $b->read(100, 1));
        });
    }

    public function testBlockingModeOutsideOfCoroutines(): void
    {
        $listener = Listener::listen('127.0.0.1:0');
        $pid = \pcntl_fork();
        if ($pid === 0) {
            $connection = $listener->accept();
            $line = $connection->readLine();
            $connection->write(\strtoupper((string) $line) . "\n");
            $connection->close();
            exit(0);
        }
        $socket = Socket::connect($listener->address());
        $socket->write("blocking hello\n");
        self::assertSame('BLOCKING HELLO', $socket->readLine(100, 5));
        self::assertNull($socket->readLine(100, 5));
        \pcntl_waitpid($pid, $status);
        self::assertSame(0, \pcntl_wexitstatus($status));
        try {
            $socket->close();
            [$x, $y] = Socket::pair();
            $y->read(10, 0.01);
            self::fail('no timeout in blocking mode');
        } catch (Timeout $e) {
            self::assertStringContainsString('timed out', $e->getMessage());
        }
    }

    public function testConnectionRefusedNamesTheErrno(): void
    {
        $listener = Listener::listen('127.0.0.1:0');
        $address = $listener->address();
        $listener->close();
        foreach ([false, true] as $inCoroutine) {
            try {
                $inCoroutine ? run(static fn () => Socket::connect($address)) : Socket::connect($address);
                self::fail('connected to a closed port');
            } catch (ConnectException $e) {
                self::assertStringContainsString("\"$address\"", $e->getMessage());
                self::assertStringContainsString('ECONNREFUSED', $e->getMessage());
                self::assertSame(111, $e->getCode());
            }
        }
    }

    public function testConnectTimeoutWhenTheBacklogIsFull(): void
    {
        // A listener with backlog 1 that never accepts: once its queue is full the kernel drops SYNs.
        $listener = Listener::listen('127.0.0.1:0', ListenOptions::defaults()->withBacklog(1));
        $held = [];
        $options = ConnectOptions::defaults()->withConnectTimeout(0.2);
        $timedOut = null;
        run(static function () use ($listener, $options, &$held, &$timedOut): void {
            for ($i = 0; $i < 20 && $timedOut === null; $i++) {
                try {
                    $held[] = Socket::connect($listener->address(), $options);
                } catch (ConnectTimeout $e) {
                    $timedOut = $e;
                }
            }
        });
        self::assertInstanceOf(ConnectTimeout::class, $timedOut);
        self::assertStringContainsString('timed out after 0.2 s', $timedOut->getMessage());
        self::assertStringContainsString('ETIMEDOUT', $timedOut->getMessage());
        $listener->close();
    }

    public function testListenOnABusyPortNamesTheAddressAndErrno(): void
    {
        $listener = Listener::listen('127.0.0.1:0');
        try {
            Listener::listen($listener->address());
            self::fail('bound a busy port');
        } catch (ListenException $e) {
            self::assertSame(
                "Failed to listen on \"{$listener->address()}\": Address already in use (EADDRINUSE)",
                $e->getMessage(),
            );
        } finally {
            $listener->close();
        }
    }

    public function testReusePortLetsTwoListenersShareAPort(): void
    {
        $options = ListenOptions::defaults()->withReusePort();
        $first = Listener::listen('127.0.0.1:0', $options);
        $second = Listener::listen($first->address(), $options);
        self::assertSame($first->port(), $second->port());
        $first->close();
        $second->close();
    }

    public function testUnixSocketsAndIpv6(): void
    {
        $path = \sys_get_temp_dir() . '/weft-test-' . \getmypid() . '.sock';
        $unix = Listener::listen('unix://' . $path);
        $addresses = ['unix://' . $path];
        $v6 = null;
        try {
            $v6 = Listener::listen('[::1]:0');
            $addresses[] = 'tcp://[::1]:' . $v6->port();
        } catch (ListenException) {
            // No IPv6 on this machine: Unix only.
        }
        $got = run(static function () use ($unix, $v6, $addresses): array {
            $got = [];
            foreach (\array_filter([$unix, $v6]) as $i => $listener) {
                go(static function () use ($listener): void {
                    $connection = $listener->accept();
                    $connection->write($connection->readLine() . "!\n");
                    $connection->close();
                });
                $socket = Socket::connect($addresses[$i]);
                $socket->write("hi\n");
                $got[] = $socket->readLine();
            }
            return $got;
        });
        self::assertSame(\array_fill(0, \count($addresses), 'hi!'), $got);
        $unix->close();
        $v6?->close();
        @\unlink($path);
    }

    public function testTwoReadersOnOneConnectionIsAClearError(): void
    {
        [$a, $b] = Socket::pair();
        $message = run(static function () use ($b): string {
            $first = go(static fn () => $b->read(10, 0.05));
            try {
                $b->read(10, 0.05);
            } catch (ConcurrentUse $e) {
                $message = $e->getMessage();
            }
            try {
                $first->join();
            } catch (Timeout) {
            }
            return $message ?? 'no error';
        });
        self::assertStringContainsString('is already reading from', $message);
        self::assertStringContainsString('use a pool', $message);
        $a->close();
    }

    public function testWriteToAPeerThatLeftIsConnectionClosed(): void
    {
        [$a, $b] = Socket::pair();
        $b->close();
        $this->expectException(ConnectionClosed::class);
        for ($i = 0; $i < 100; $i++) {
            $a->write(\str_repeat('x', 65536));
        }
    }
}
