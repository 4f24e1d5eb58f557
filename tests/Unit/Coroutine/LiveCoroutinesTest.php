<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Scheduler;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

/**
 * Scheduler::live() (what a DeadlockError, run()'s end and the Dispatcher's requests in flight read) is
 * kept per pooled Fiber, not per coroutine: it must still list exactly the unfinished coroutines, by id
 * (start order), whichever Fiber each runs on, and its count must match stats().
 */
final class LiveCoroutinesTest extends CoroutineTestCase
{
    public function testLiveListsTheUnfinishedCoroutinesInStartOrderAcrossReusedFibers(): void
    {
        $scheduler = Scheduler::get();
        $seen = run(static function () use ($scheduler): array {
            $main = $scheduler->self()->id;
            $a = go(static fn () => sleep(0.02));
            $b = go(static fn () => sleep(0.001));
            $c = go(static fn () => sleep(0.02));
            $seen = [[\array_keys($scheduler->live()), [$main, $a->id, $b->id, $c->id], $scheduler->stats()['live']]];
            $b->join();
            $seen[] = [\array_keys($scheduler->live()), [$main, $a->id, $c->id], $scheduler->stats()['live']];
            // Started on the Fiber $b let go of (the pool's last in), listed after $c all the same.
            $d = go(static fn () => sleep(0.001));
            $seen[] = [\array_keys($scheduler->live()), [$main, $a->id, $c->id, $d->id], $scheduler->stats()['live']];
            foreach ($scheduler->live() as $id => $coroutine) {
                $seen[] = [$coroutine->id, $id, $coroutine->isFinished() ? 1 : 0];
            }
            $a->join();
            $c->join();
            $d->join();
            $seen[] = [\array_keys($scheduler->live()), [$main], $scheduler->stats()['live']];
            return $seen;
        });
        foreach ($seen as [$listed, $expected, $count]) {
            if (\is_array($listed)) {
                self::assertSame($expected, $listed);
                self::assertSame(\count($expected), $count);
            } else {
                self::assertSame($listed, $expected); // keyed by its own id
                self::assertSame(0, $count); // and not finished
            }
        }
        self::assertSame([], $scheduler->live());
        self::assertSame(0, $scheduler->stats()['live']);
    }

    public function testTrimmedFibersLeaveNoEntryBehind(): void
    {
        $scheduler = Scheduler::get();
        run(static function (): void {
            $all = [];
            for ($i = 0; $i < 600; $i++) {
                $all[] = go(static fn () => sleep(0.001));
            }
            foreach ($all as $coroutine) {
                $coroutine->join();
            }
        });
        $scheduler->trimIdle(); // the peak (601) is kept once
        $scheduler->trimIdle(); // then back to the minimum
        self::assertSame(512, $scheduler->stats()['idle']);
        self::assertSame([], $scheduler->live());
        $ids = run(static function () use ($scheduler): array {
            $one = go(static fn () => sleep(0.001));
            return [\array_keys($scheduler->live()), $scheduler->self()->id, $one->id];
        });
        self::assertSame([$ids[1], $ids[2]], $ids[0]);
    }
}
