<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Cancelled;
use Weft\Coroutine\Context;
use Weft\Coroutine\DeadlockError;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\Timeout;
use Weft\Coroutine\TooManyCoroutines;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;
use function Weft\timeout;

final class CoroutineTest extends CoroutineTestCase
{
    public function testRunReturnsTheMainResult(): void
    {
        self::assertSame(42, run(static fn () => 42));
    }

    public function testRunRethrowsTheMainException(): void
    {
        $this->expectException(\DomainException::class);
        run(static function (): void {
            throw new \DomainException('main failed');
        });
    }

    public function testGoStartsAtOnceAndRunsUntilTheFirstWait(): void
    {
        $log = [];
        run(static function () use (&$log): void {
            go(static function () use (&$log): void {
                $log[] = 'child start';
                sleep(0.001);
                $log[] = 'child end';
            });
            $log[] = 'parent';
        });
        self::assertSame(['child start', 'parent', 'child end'], $log);
    }

    public function testJoinReturnsResultOrRethrows(): void
    {
        $result = run(static function (): array {
            $a = go(static function (): string {
                sleep(0.01);
                return 'a';
            });
            $b = go(static fn (int $x): int => $x * 2, 21);
            $c = go(static function (): void {
                sleep(0.001);
                throw new \RuntimeException('c failed');
            });
            try {
                $c->join();
                $error = null;
            } catch (\RuntimeException $e) {
                $error = $e->getMessage();
            }
            return [$a->join(), $b->join(), $error];
        });
        self::assertSame(['a', 42, 'c failed'], $result);
    }

    public function testJoinOutsideOfACoroutineDrivesTheLoop(): void
    {
        $coroutine = go(static function (): string {
            sleep(0.01);
            return 'done';
        });
        self::assertFalse($coroutine->isFinished());
        self::assertSame('done', $coroutine->join());
    }

    public function testSleepingCoroutinesOverlap(): void
    {
        $start = \hrtime(true);
        run(static function (): void {
            for ($i = 0; $i < 100; $i++) {
                go(static fn () => sleep(0.1));
            }
        });
        // 100 sequential sleeps would take 10 s.
        self::assertLessThan(5.0, (\hrtime(true) - $start) / 1e9);
    }

    public function testUnjoinedFailureIsReportedNotDropped(): void
    {
        $reported = [];
        Scheduler::get()->setUncaughtHandler(static function (\Throwable $e, int $id) use (&$reported): void {
            $reported[] = [$e->getMessage(), $id];
        });
        run(static function (): void {
            go(static function (): void {
                sleep(0.001);
                throw new \LogicException('nobody listens');
            });
        });
        self::assertCount(1, $reported);
        self::assertSame('nobody listens', $reported[0][0]);
    }

    public function testDefaultReportGoesToStderrWithTheTrace(): void
    {
        $php = \PHP_BINARY;
        $script = <<<'PHP'
            require 'vendor/autoload.php';
            Weft\run(function () {
                Weft\go(function () { Weft\sleep(0.001); throw new LogicException('lost failure'); });
            });
            echo "main finished\n";
            PHP;
        $process = \proc_open([$php, '-r', $script], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, \dirname(__DIR__, 3));
        $out = \stream_get_contents($pipes[1]);
        $err = \stream_get_contents($pipes[2]);
        \proc_close($process);
        self::assertStringContainsString('main finished', $out);
        self::assertStringContainsString('Unhandled exception in coroutine', $err);
        self::assertStringContainsString('lost failure', $err);
        self::assertStringContainsString('#0', $err);
    }

    public function testDeadlockIsReportedWithTheWaitingCoroutines(): void
    {
        try {
            run(static function (): void {
                $channel = new \Weft\Coroutine\Channel();
                go(static fn () => $channel->receive());
                $channel->receive();
            });
            self::fail('no deadlock reported');
        } catch (DeadlockError $e) {
            self::assertStringContainsString('2 coroutine(s) still wait', $e->getMessage());
            self::assertStringContainsString(__FILE__, $e->getMessage());
            self::assertStringContainsString('Channel::receive', $e->getMessage());
        }
    }

    public function testTimeoutCancelsTheWaitInside(): void
    {
        $result = run(static function (): array {
            $start = \hrtime(true);
            try {
                timeout(0.05, static fn () => sleep(10));
                $message = 'no timeout';
            } catch (Timeout $e) {
                $message = $e->getMessage();
            }
            return [$message, (\hrtime(true) - $start) / 1e9];
        });
        self::assertSame('Operation timed out after 0.05 s', $result[0]);
        self::assertLessThan(5.0, $result[1]);
    }

    public function testTimeoutReturnsTheResultWhenInTime(): void
    {
        self::assertSame('ok', run(static fn () => timeout(1, static function (): string {
            sleep(0.001);
            return 'ok';
        })));
    }

    public function testNestedTimeoutsEachFireTheirOwn(): void
    {
        $log = run(static function (): array {
            $log = [];
            try {
                timeout(0.05, static function () use (&$log): void {
                    try {
                        timeout(5, static fn () => sleep(10), 'inner');
                    } catch (Timeout $e) {
                        $log[] = 'inner saw: ' . $e->getMessage();
                        throw $e;
                    }
                }, 'outer');
            } catch (Timeout $e) {
                $log[] = 'outer saw: ' . $e->getMessage();
            }
            try {
                timeout(5, static fn () => timeout(0.01, static fn () => sleep(10), 'inner'), 'outer');
            } catch (Timeout $e) {
                $log[] = 'second: ' . $e->getMessage();
            }
            return $log;
        });
        self::assertSame([
            'inner saw: outer timed out after 0.05 s',
            'outer saw: outer timed out after 0.05 s',
            'second: inner timed out after 0.01 s',
        ], $log);
    }

    public function testCancelThrowsIntoTheWait(): void
    {
        $result = run(static function (): string {
            $sleeper = go(static function (): string {
                try {
                    sleep(10);
                    return 'woke';
                } catch (Cancelled $e) {
                    return 'cancelled';
                }
            });
            sleep(0.01);
            $sleeper->cancel();
            return $sleeper->join();
        });
        self::assertSame('cancelled', $result);
    }

    public function testContextIsPerCoroutineAndInheritedByChildren(): void
    {
        $seen = run(static function (): array {
            Context::current()->set('request', 'parent');
            $seen = [];
            $a = go(static function () use (&$seen): void {
                $seen['child reads parent'] = Context::current()->get('request');
                Context::current()->set('request', 'child');
                sleep(0.001);
                $seen['child reads own'] = Context::current()->get('request');
            });
            $b = go(static function () use (&$seen): void {
                sleep(0.002);
                $seen['sibling unaffected'] = Context::current()->get('request');
                $seen['missing'] = Context::current()->get('nope', 'default');
            });
            $a->join();
            $b->join();
            $seen['parent unaffected'] = Context::current()->get('request');
            return $seen;
        });
        self::assertSame([
            'child reads parent' => 'parent',
            'child reads own' => 'child',
            'sibling unaffected' => 'parent',
            'missing' => 'default',
            'parent unaffected' => 'parent',
        ], $seen);
    }

    public function testCoroutineLimitFailsWithAClearError(): void
    {
        $scheduler = Scheduler::get();
        $scheduler->setMaxCoroutines(10);
        $error = run(static function (): ?string {
            try {
                for ($i = 0; $i < 20; $i++) {
                    go(static fn () => sleep(0.01));
                }
            } catch (TooManyCoroutines $e) {
                return $e->getMessage();
            }
            return null;
        });
        self::assertNotNull($error);
        self::assertStringContainsString('Too many coroutines: 10', $error);
        self::assertStringContainsString('vm.max_map_count', $error);
    }

    public function testFibersAreReused(): void
    {
        run(static function (): void {
            for ($i = 0; $i < 1000; $i++) {
                go(static fn () => $i);
            }
        });
        $stats = Scheduler::get()->stats();
        self::assertLessThanOrEqual(2, $stats['fibers'], 'finished coroutines must hand their Fiber on');
        self::assertSame(0, $stats['live']);
    }
}
