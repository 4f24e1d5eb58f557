<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Ext\Conn;
use Weft\Ext\Epoll;
use Weft\Loop\Loop;
use Weft\Loop\NativeDriver;
use Weft\Loop\UnsupportedStream;

/**
 * Weft\Ext\Conn (ext/weft_conn.c): a plain connection's reads and writes in C on the native loop, on its
 * own, outside and inside a coroutine. Whole connections on it are compared byte for byte with the PHP
 * stream path in ConnectionOracleTest.
 */
final class NativeConnTest extends TestCase
{
    private NativeDriver $loop;

    protected function setUp(): void
    {
        if (!\class_exists(Conn::class, false)) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $driver = Loop::reset('epoll');
        if (!$driver instanceof NativeDriver) {
            self::markTestSkipped('not the native loop');
        }
        $this->loop = $driver;
    }

    protected function tearDown(): void
    {
        Loop::reset();
    }

    /** @return array{resource, resource, int} the server end, the client end, the server end's descriptor */
    private static function pair(): array
    {
        [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \stream_set_blocking($server, false);
        \stream_set_blocking($client, false);
        return [$server, $client, (int) Epoll::descriptorOf($server)];
    }

    /** Runs $body outside, then inside a coroutine (on a fresh loop each time). */
    private function both(\Closure $body): void
    {
        self::assertNull(\Weft\current());
        $body();
        $this->loop = Loop::reset('epoll');
        \Weft\run(static function () use ($body): void {
            self::assertNotNull(\Weft\current(), 'inside a coroutine');
            $body();
        });
    }

    public function testReadsAreHandedOverAsTheyArriveThenTheEnd(): void
    {
        $this->both(function (): void {
            [$server, $client, $fd] = self::pair();
            $got = [];
            $conn = null;
            $conn = new Conn($this->loop, $fd, function (string|false $data) use (&$got, &$conn, $client): void {
                $got[] = $data;
                if ($data === 'hello') {
                    \fwrite($client, 'world');
                    \stream_socket_shutdown($client, \STREAM_SHUT_WR);
                } elseif ($data === '') {
                    $conn->close(); // the end: nothing more to read, the loop has nothing left
                }
            });
            self::assertMatchesRegularExpression('/^w\d+$/', (string) $conn->watcher());
            \fwrite($client, 'hello');
            $this->loop->run();
            self::assertSame(['hello', 'world', ''], $got);
            self::assertNull($conn->watcher());
            self::assertSame(0, $this->loop->watcherCount()['total']);
        });
    }

    public function testReadAtIsTheLoopTimeOfTheLastReadWithBytes(): void
    {
        $this->both(function (): void {
            [$server, $client, $fd] = self::pair();
            $seen = [];
            $conn = null;
            $conn = new Conn($this->loop, $fd, function (string|false $data) use (&$seen, &$conn, $client): void {
                $seen[] = [$data, $conn->readAt(), $this->loop->now()];
                if ($data === 'one') {
                    // The next read comes at a later tick of the loop.
                    $this->loop->delay(0.02, static function () use ($client): void {
                        \fwrite($client, 'two');
                    });
                } elseif ($data === 'two') {
                    \stream_socket_shutdown($client, \STREAM_SHUT_WR);
                } else {
                    $conn->close();
                }
            });
            self::assertSame(0.0, $conn->readAt(), 'no read yet');
            \fwrite($client, 'one');
            $this->loop->run();
            self::assertSame(['one', 'two', ''], \array_column($seen, 0));
            self::assertSame($seen[0][2], $seen[0][1], 'the loop time of the read that brought "one"');
            self::assertSame($seen[1][2], $seen[1][1]);
            self::assertGreaterThan($seen[0][1], $seen[1][1], 'later');
            self::assertSame(0.0, $conn->readAt(), 'closed');
        });
    }

    public function testAReadTakesAtMost64KiB(): void
    {
        [$server, $client, $fd] = self::pair();
        $sizes = [];
        $conn = new Conn($this->loop, $fd, function (string|false $data) use (&$sizes, &$conn): void {
            $sizes[] = \strlen((string) $data);
            if (\array_sum($sizes) >= 100000) {
                $conn->close();
            }
        });
        \stream_set_blocking($client, true);
        \fwrite($client, \str_repeat('x', 100000));
        $this->loop->run();
        self::assertSame(65536, $sizes[0]);
        self::assertSame(100000, \array_sum($sizes));
    }

    public function testTheWatcherIsTheLoopsToDisableAndEnable(): void
    {
        [$server, $client, $fd] = self::pair();
        $got = '';
        $conn = new Conn($this->loop, $fd, function (string|false $data) use (&$got, &$conn): void {
            $got .= $data;
            $conn->close();
        });
        $id = (string) $conn->watcher();
        $this->loop->disable($id);
        \fwrite($client, 'x');
        self::assertSame(['enabled' => 0, 'referenced' => 0, 'total' => 1], $this->loop->watcherCount());
        $this->loop->run(); // nothing enabled: returns at once
        self::assertSame('', $got);
        $this->loop->enable($id);
        $this->loop->run();
        self::assertSame('x', $got);
        // The loop's cancel() of a watcher already gone is a no-op; so is a second close().
        $this->loop->cancel($id);
        $conn->close();
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testWritesSayWhatTheSocketTookAndWhyItFailed(): void
    {
        $this->both(function (): void {
            [$server, $client, $fd] = self::pair();
            $conn = new Conn($this->loop, $fd, static function (): void {
            });
            self::assertSame(5, $conn->write('hello'));
            self::assertSame(3, $conn->write('abcdef', 2, 3));
            self::assertSame(2, $conn->write('abcdef', 4));
            self::assertSame(0, $conn->write('abc', 3));
            self::assertSame('hellocdeef', \fread($client, 100));
            // A full socket takes part, then nothing (0, not an error).
            $big = \str_repeat('y', 1 << 22);
            $taken = $conn->write($big);
            self::assertGreaterThan(0, $taken);
            self::assertLessThan(\strlen($big), $taken);
            self::assertSame(0, $conn->write($big, $taken));
            // The peer gone: -EPIPE (32) without a SIGPIPE.
            \fclose($client);
            self::assertSame(-32, $conn->write('more'));
            $conn->close();
            self::assertSame(-9, $conn->write('after close'), '-EBADF');
            \fclose($server);
        });
    }

    public function testAReadErrorIsFalse(): void
    {
        // A TCP reset: the peer closes with unread data in its buffer.
        $listener = \stream_socket_server('tcp://127.0.0.1:0');
        $client = \stream_socket_client('tcp://' . \stream_socket_get_name($listener, false));
        $server = \stream_socket_accept($listener);
        \stream_set_blocking($server, false);
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), static function (): void {
        });
        $conn->write('unread');
        $got = [];
        $conn->close();
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), function (string|false $data) use (&$got, &$conn): void {
            $got[] = $data;
            $conn->close();
        });
        \usleep(20000);
        \fclose($client); // unread data: the kernel sends a reset
        $this->loop->run();
        self::assertContains($got, [[false], ['']], 'a reset reads as an error (or, if it raced the FIN, as the end)');
        \fclose($server);
        \fclose($listener);
    }

    public function testAnObjectIsCalledThroughItsReceivedMethod(): void
    {
        $this->both(function (): void {
            [$server, $client, $fd] = self::pair();
            // Its own callback, holding its Conn: a cycle through the C watcher, which the collector finds too.
            $reader = new class {
                /** @var list<string|false> */
                public array $got = [];
                public ?Conn $conn = null;

                public function received(string|false $data, ?object $request = null): void
                {
                    $this->got[] = $data;
                    if ($data === '') {
                        $this->conn?->close();
                    }
                }
            };
            $reader->conn = new Conn($this->loop, $fd, $reader);
            \fwrite($client, 'hello');
            \stream_socket_shutdown($client, \STREAM_SHUT_WR);
            $this->loop->run();
            self::assertSame(['hello', ''], $reader->got);
            $other = new class {
                public ?Conn $conn = null;

                public function received(string|false $data): void
                {
                }
            };
            $other->conn = new Conn($this->loop, $fd, $other);
            self::assertSame(1, $this->loop->watcherCount()['total']);
            unset($other);
            \gc_collect_cycles();
            self::assertSame(0, $this->loop->watcherCount()['total']);
        });
    }

    public function testAnObjectWithoutAPublicReceivedIsATypeError(): void
    {
        [$server, $client, $fd] = self::pair();
        $hidden = new class {
            private function received(string|false $data): void
            {
            }
        };
        foreach ([new \stdClass(), $hidden] as $object) {
            try {
                new Conn($this->loop, $fd, $object, true);
                self::fail('no public received() on ' . $object::class);
            } catch (\TypeError $e) {
                self::assertStringContainsString('public method received()', $e->getMessage());
            }
        }
        self::assertSame(0, $this->loop->watcherCount()['total'], 'nothing registered');
    }

        public function testBadArgumentsAreRefused(): void
    {
        [$server, $client, $fd] = self::pair();
        try {
            new Conn($this->loop, -1, static function (): void {
            });
            self::fail('a negative descriptor');
        } catch (\ValueError) {
        }
        $this->expectException(UnsupportedStream::class);
        try {
            new Conn($this->loop, 99999, static function (): void {
            });
        } finally {
            self::assertSame(0, $this->loop->watcherCount()['total'], 'nothing left registered');
        }
    }

    public function testNotAWeftLoopIsATypeError(): void
    {
        $this->expectException(\TypeError::class);
        new Conn(new \stdClass(), 0, static function (): void {
        });
    }

    public function testAConnDroppedWithoutCloseLeavesNothingOnTheLoop(): void
    {
        $this->both(function (): void {
            [$server, $client, $fd] = self::pair();
            $conn = new Conn($this->loop, $fd, static function (): void {
            });
            self::assertSame(1, $this->loop->watcherCount()['total']);
            unset($conn);
            self::assertSame(0, $this->loop->watcherCount()['total']);
            // A closure holding its own Conn (a cycle through the C watcher) is found by the collector.
            $holder = new \ArrayObject();
            $holder['conn'] = new Conn($this->loop, $fd, static function () use ($holder): void {
            });
            unset($holder);
            \gc_collect_cycles();
            self::assertSame(0, $this->loop->watcherCount()['total']);
        });
    }

    public function testTheLoopFreedFirstLeavesAConnThatNoLongerReads(): void
    {
        [$server, $client, $fd] = self::pair();
        $conn = new Conn($this->loop, $fd, static function (): void {
        });
        $this->loop = Loop::reset('epoll'); // the old loop is freed: its watchers are released
        self::assertNull($conn->watcher());
        self::assertSame(1, $conn->write('x'), 'writing needs no loop');
        $conn->close();
    }

    public function testAReadThatIsOneWholeHeadComesWithItsRequest(): void
    {
        self::assertNull(\Weft\Ext\checkRequestLayout(\Weft\Http\Message\Request::class));
        $limits = new \Weft\Http\Parser\Limits();
        $this->both(function () use ($limits): void {
            [$server, $client, $fd] = self::pair();
            $reads = [];
            $conn = null;
            $conn = new Conn($this->loop, $fd, function (string|false $data, ?\Weft\Http\Message\Request $request = null) use (&$reads, &$conn): void {
                $reads[] = [$data, $request];
                if ($data === '') {
                    $conn->close();
                }
            });
            $conn->frameRequests($limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet, '192.0.2.5');
            $sends = [
                "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",           // framed
                "HEAD / HTTP/1.0\r\n\r\n",                                          // framed
                "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",         // framing fields: bytes only
                "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", // pipelined: bytes only
                "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",                             // an empty line first: bytes only
                "GET / HTTP/1.1\r\nHost: x\r\n",                                    // incomplete: bytes only
                "GET / HTTP/1.1\r\n\r\n",                                           // refused (no Host): bytes only
                "GET /after HTTP/1.1\r\nHost: x\r\n\r\n",                           // sent after frameNothing()
            ];
            foreach ($sends as $i => $bytes) {
                if ($i === 7) {
                    $conn->frameNothing();
                }
                \fwrite($client, $bytes);
                $this->loop->delay(0.0, fn () => $this->loop->stop());
                $this->loop->run();
            }
            \fclose($client);
            $this->loop->run();
            self::assertSame(\array_merge($sends, ['']), \array_column($reads, 0), 'each send was one read');
            self::assertEquals(new \Weft\Http\Message\Request('GET', '/a?b=1', "\r\nHost: x\r\nAccept: */*", '', '1.1', '192.0.2.5'), $reads[0][1]);
            self::assertEquals(new \Weft\Http\Message\Request('HEAD', '/', '', '', '1.0', '192.0.2.5'), $reads[1][1]);
            self::assertSame([null, null, null, null, null, null, null], \array_column(\array_slice($reads, 2), 1));
        });
    }

    public function testAnOwnedDescriptorOutlivesItsStreamAndGoesWithTheConn(): void
    {
        $this->both(function (): void {
            [$server, $client, $fd] = self::pair();
            $got = [];
            $conn = null;
            $conn = new Conn($this->loop, $fd, function (string|false $data) use (&$got, &$conn): void {
                $got[] = $data;
                $conn->write('pong');
                $conn->close();
            }, true);
            $own = $conn->fd();
            self::assertNotSame($fd, $own, 'a copy of its own');
            self::assertFileExists("/proc/self/fd/$own");
            \fclose($server); // the caller's stream goes: the connection lives on through the copy
            \fwrite($client, 'ping');
            $this->loop->run();
            self::assertSame(['ping'], $got);
            self::assertSame('pong', \fread($client, 10));
            self::assertSame(-1, $conn->fd());
            self::assertFileDoesNotExist("/proc/self/fd/$own", 'close() closed it');
            self::assertSame('', \fread($client, 10));
            self::assertTrue(\feof($client), 'the peer sees the end');
            // Dropped without close(): freed with the object.
            [$server, $client, $fd] = self::pair();
            $conn = new Conn($this->loop, $fd, static function (): void {
            }, true);
            $own = $conn->fd();
            unset($conn);
            self::assertFileDoesNotExist("/proc/self/fd/$own");
            self::assertSame(0, $this->loop->watcherCount()['total']);
        });
    }
}
