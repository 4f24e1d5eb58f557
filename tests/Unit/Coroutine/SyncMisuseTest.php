<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Mutex;
use Weft\Coroutine\SyncMisuse;
use Weft\Coroutine\WaitGroup;
use Weft\WeftException;

use function Weft\go;
use function Weft\run;

/** Each misuse of Mutex and WaitGroup is a typed SyncMisuse, and leaves the primitive as it was. */
final class SyncMisuseTest extends CoroutineTestCase
{
    public function testRelockingAHeldMutexIsSyncMisuseAndKeepsTheLock(): void
    {
        [$error, $locked] = run(static function (): array {
            $mutex = new Mutex();
            $mutex->lock();
            try {
                $mutex->lock();
            } catch (SyncMisuse $e) {
                return [$e, $mutex->isLocked()];
            }
            return [null, $mutex->isLocked()];
        });
        self::assertInstanceOf(SyncMisuse::class, $error);
        self::assertInstanceOf(WeftException::class, $error);
        self::assertSame('Mutex is not reentrant: this coroutine already holds it', $error->getMessage());
        self::assertTrue($locked);
    }

    public function testUnlockingAFreeMutexIsSyncMisuse(): void
    {
        $this->expectException(SyncMisuse::class);
        $this->expectExceptionMessage('Mutex is not locked');
        (new Mutex())->unlock();
    }

    public function testUnlockByAnotherCoroutineIsSyncMisuseAndTheHolderKeepsTheLock(): void
    {
        [$class, $stillLocked, $unlockedByHolder] = run(static function (): array {
            $mutex = new Mutex();
            $mutex->lock();
            $class = go(static function () use ($mutex): string {
                try {
                    $mutex->unlock();
                } catch (\Throwable $e) {
                    return $e::class;
                }
                return 'none';
            })->join();
            $stillLocked = $mutex->isLocked();
            $mutex->unlock();
            return [$class, $stillLocked, !$mutex->isLocked()];
        });
        self::assertSame(SyncMisuse::class, $class);
        self::assertTrue($stillLocked);
        self::assertTrue($unlockedByHolder);
    }

    public function testMoreDoneThanAddIsSyncMisuseAndKeepsTheCount(): void
    {
        $group = new WaitGroup();
        $group->add(2);
        $group->done();
        $group->done();
        try {
            $group->done();
            self::fail('a third done() after add(2) must throw');
        } catch (SyncMisuse $e) {
            self::assertSame('WaitGroup counter cannot go below zero: it is 0, add(-1) (more done() than add())', $e->getMessage());
        }
        self::assertSame(0, $group->count());
        $group->add(1);
        self::assertSame(1, $group->count());
    }
}
