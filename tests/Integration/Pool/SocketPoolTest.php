<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Pool;

use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Coroutine;
use Weft\Coroutine\WaitGroup;
use Weft\Loop\Loop;
use Weft\Pool\Pool;
use Weft\Pool\PoolOptions;
use Weft\Socket\ConnectException;
use Weft\Socket\Listener;
use Weft\Socket\Socket;

use function Weft\go;
use function Weft\run;

/**
 * The generic pool holding real TCP connections to an in-process line server: "PING" -> "PONG",
 * "QUIT" -> the server closes, anything else is echoed back prefixed with the connection's number.
 */
final class SocketPoolTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    public function testCoroutinesShareFewConnectionsToARealServer(): void
    {
        $this->withServer(PoolOptions::defaults()->withMax(3)->withBorrowTimeout(30.0), function (Pool $pool): void {
            $wg = new WaitGroup();
            $answers = [];
            for ($i = 0; $i < 30; $i++) {
                $wg->add();
                go(function () use ($pool, $i, $wg, &$answers): void {
                    $answers[$i] = $pool->use(static function (Socket $socket) use ($i): string {
                        $socket->write("hello $i\n");
                        return (string) $socket->readLine();
                    });
                    $wg->done();
                });
            }
            $wg->wait();
            self::assertCount(30, $answers);
            foreach ($answers as $i => $answer) {
                self::assertMatchesRegularExpression("/^#[123] hello $i$/", $answer);
            }
            self::assertSame(3, $pool->stats()['created']);
        });
    }

    public function testAConnectionClosedByTheServerFailsItsHealthCheckAndIsReplaced(): void
    {
        $this->withServer(PoolOptions::defaults()->withCheckAfterIdle(0.0), function (Pool $pool): void {
            $first = $pool->borrow();
            $first->write("QUIT\n");
            self::assertNull($first->readLine(), 'the server closed it');
            $pool->release($first);     // the pool cannot know yet
            \Weft\sleep(0.01);

            $second = $pool->borrow();  // the check fails on the first; a new connection is opened
            self::assertNotSame($first, $second);
            self::assertTrue($first->isClosed());
            $second->write("again\n");
            self::assertSame('#2 again', $second->readLine());
            $pool->release($second);
            $stats = $pool->stats();
            self::assertSame([1, 2], [$stats['discarded'], $stats['created']]);
        });
    }

    public function testConnectFailureReachesTheBorrowerInSyncMode(): void
    {
        $listener = Listener::listen('127.0.0.1:0');
        $address = $listener->address();
        $listener->close();
        $pool = new Pool(
            static fn (): Socket => Socket::connect($address),
            static function (Socket $socket): void {
                $socket->close();
            },
        );
        try {
            $pool->borrow();
            self::fail();
        } catch (ConnectException $e) {
            self::assertStringContainsString('ECONNREFUSED', $e->getMessage());
        }
        self::assertSame(0, $pool->stats()['total']);
    }

    /**
     * Runs $test with a pool of connections to a fresh server, and always stops both afterwards (a
     * failed assertion must not leave coroutines that keep Weft\run() waiting).
     *
     * @param \Closure(Pool): void $test
     */
    private function withServer(PoolOptions $options, \Closure $test): void
    {
        run(function () use ($options, $test): void {
            $clients = new \ArrayObject();
            [$listener, $server] = $this->server($clients);
            $pool = $this->socketPool($listener, $options);
            try {
                $test($pool);
            } finally {
                $pool->close();
                $listener->close();
                $server->cancel();
                foreach ($clients as $client) {
                    $client->close();
                }
            }
        });
    }

    /**
     * @param \ArrayObject<int, Socket> $clients the server's side of every connection
     * @return array{Listener, Coroutine}
     */
    private function server(\ArrayObject $clients): array
    {
        $listener = Listener::listen('127.0.0.1:0');
        $server = go(static function () use ($listener, $clients): void {
            $number = 0;
            try {
                while (true) {
                    $clients[] = $client = $listener->accept();
                    $id = ++$number;
                    go(static function () use ($client, $id): void {
                        try {
                            while (($line = $client->readLine()) !== null) {
                                if ($line === 'QUIT') {
                                    break;
                                }
                                $client->write($line === 'PING' ? "PONG\n" : "#$id $line\n");
                            }
                        } catch (\Weft\Socket\SocketException) {
                            // Closed by the test's cleanup.
                        } finally {
                            $client->close();
                        }
                    });
                }
            } catch (\Throwable) {
                // Cancelled or closed: the test is over.
            }
        });
        return [$listener, $server];
    }

    private function socketPool(Listener $listener, PoolOptions $options): Pool
    {
        $address = $listener->address();
        return new Pool(
            static fn (): Socket => Socket::connect($address),
            static function (Socket $socket): void {
                $socket->close();
            },
            static function (Socket $socket): bool {
                $socket->write("PING\n");
                return $socket->readLine(64, 1.0) === 'PONG';
            },
            $options,
            static fn (Socket $socket): bool => !$socket->isClosed(),
        );
    }
}
