<?php

declare(strict_types=1);

namespace Weft\Bridge;

use Weft\Coroutine\ProcessState;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\StateSet;
use Weft\Coroutine\WaitQueue;
use Weft\Hook\BlockingDetector;
use Weft\Pool\Pool;
use Weft\Pool\PoolOptions;
use Weft\Server\Stats;

/**
 * The booted framework instances of one worker, each serving one request at a time.
 *
 * A request borrows an instance for its whole life (until its response is written and the instance
 * reset) and gives it back; when all are busy it waits its turn, first come first served. The first
 * instance boots when the worker starts; a further one when a request is let in (below) and none is
 * free, up to the pool's size, and each is kept: the most recently released one is reused first, so a
 * worker whose requests never wait keeps serving from one instance and never boots a second.
 *
 * Booting all of them at the start would cost every request CPU under the tracing JIT: N boots in a
 * row make the framework's shared functions (its container, its array helpers) hot on the boot's
 * paths, the JIT traces them there, and requests, which take other branches, leave those traces for
 * the interpreter (Laravel's hello route with 50 instances booted: 13 % more instructions a request
 * than with one; booted on demand, the same as one).
 *
 * A further request is let into the framework only when the worker would otherwise idle (admission):
 * while one or more requests are in it, a new one waits its turn unless nothing else is queued to run.
 * It is let in when a request in the framework leaves with nothing queued, or when the worker is about
 * to have nothing to run (every request in the framework waits on I/O: Scheduler::whenIdle()). Each
 * one in flight costs something (its object graph out of the caches, a switch of the followed state at
 * every wait), so a request is not let in while another one could use the CPU. This does not keep the
 * number in flight small when what they wait on is itself saturated: a database serving many queries
 * at once answers each later, the worker idles meanwhile, and the pool fills up (Laravel's and
 * Symfony's three-query route on MariaDB at c=100, in one process: 3 to 4 in flight on average with a
 * pool of 4; with a pool of 64, 7 at the median and 62 at the 90th percentile, for no more CPU a
 * request). Long waits (an upstream call, a sleep) fill the pool by design.
 *
 * Each instance has its own copy of the process-wide values that follow the coroutine (ProcessState):
 * it boots with the values the worker had before any framework booted, and whatever its boot and its
 * requests set (the current container, the facades' cache, Eloquent's resolver...) is installed
 * whenever one of its coroutines runs. Every static property a boot writes follows too
 * (ProcessState::followWrittenBy()): a resolver closure over one instance's application that a later
 * boot would overwrite for all, a callback registry that every boot would append to.
 *
 * @internal
 * @template T of object
 */
final class InstancePool
{
    /** Effectively forever: a request waiting for an instance is bounded by --max-request-time, not by the pool. */
    private const WAIT = 86_400.0;

    /**
     * PHP runs its cycle collector whenever 10,000 possible roots have gathered, and each run walks
     * everything reachable from them: with several instances in flight, the roots reach several
     * instances' object graphs, so a run costs more with every instance in use (Laravel's `/sql3`
     * with 64 instances: 18 % of a request's CPU, against nothing measurable with 16). A pool that booted
     * N > 1 instances collects itself after min(N, 4) times as many roots, between two requests: about as
     * much collecting per request as one instance pays, for a few more MB of garbage kept meanwhile. A
     * pool that never booted a second leaves PHP's collector as it is.
     */
    private const GC_ROOTS = 10_000;
    private const GC_SCALE_MAX = 4;

    /** @var Pool<Instance<T>> */
    private readonly Pool $pool;
    private readonly Scheduler $scheduler;
    private readonly StateSet $pristine;
    private int $booted = 0;
    /** Requests let into the framework and not yet released: at most one per instance. */
    private int $inFlight = 0;
    /** Requests waiting to be let in (admission). */
    private readonly WaitQueue $admission;
    private bool $checkScheduled = false;
    /** Possible roots at which release() collects cycles; 0: PHP's own collector is left as it is. */
    private int $gcRoots = 0;

    /**
     * @param \Closure(): T $boot makes and boots one instance
     * @param StateSet $pristine the followed values before any instance booted
     */
    public function __construct(private readonly \Closure $boot, public readonly int $size, StateSet $pristine)
    {
        if ($size < 1) {
            throw new \InvalidArgumentException('A framework needs at least one instance per worker');
        }
        $this->scheduler = Scheduler::get();
        // A further instance boots for a request that found every booted one busy: Weft's work, not the application's call.
        BlockingDetector::excuse(self::class . '::open');
        $this->pristine = $pristine->copy();
        $this->admission = new WaitQueue();
        $this->pool = new Pool(
            $this->grow(...),
            static function (): void {
            },
            null,
            PoolOptions::defaults()->withMax($size)->withBorrowTimeout(self::WAIT)->withIdleTimeout(\INF),
        );
    }

    /**
     * Boots the first instance now, in the worker's start: a broken application fails the worker and
     * not a request. The others boot when the load needs them (grow()).
     *
     * @return Instance<T> the first instance
     */
    public function warm(): Instance
    {
        $first = $this->pool->borrow();
        $this->pool->release($first);
        Stats::figure('app_instances', fn (): int => $this->booted);
        return $first;
    }

    /**
     * Takes an instance (booting one if none is free and the pool is not full, else waiting) and binds
     * the calling coroutine to its state.
     *
     * @return Instance<T>
     */
    public function acquire(): Instance
    {
        if ($this->inFlight >= $this->size
            || ($this->inFlight > 0 && (\count($this->admission) > 0 || $this->scheduler->hasQueued()))) {
            // Counted in flight by whoever lets it in.
            $this->awaitAdmission();
        } else {
            ++$this->inFlight;
        }
        try {
            $instance = $this->pool->borrow();
        } catch (\Throwable $e) {
            // Booting a further instance failed: the request fails, the pool stays as it was.
            --$this->inFlight;
            $this->admitIfIdle();
            throw $e;
        }
        $instance->lent = true;
        $this->scheduler->bind($instance->state);
        return $instance;
    }

    /** @param Instance<T> $instance */
    public function release(Instance $instance): void
    {
        $instance->lent = false;
        // The releasing coroutine leaves the framework: unbound, its next resumes (the connection's next
        // read, an admission wait) switch nothing; the values in place stay the instance's until another
        // bound coroutine runs, which saves them into the instance's set as any switch does.
        if ($this->scheduler->self()->state === $instance->state) {
            $this->scheduler->bind(null);
        }
        --$this->inFlight;
        $this->pool->release($instance);
        $this->admitIfIdle();
        if ($this->gcRoots > 0 && \gc_status()['roots'] >= $this->gcRoots) {
            \gc_collect_cycles();
        }
    }

    /** Requests in the framework now, and waiting to be let in. @return array{inFlight: int, waiting: int} */
    public function load(): array
    {
        return ['inFlight' => $this->inFlight, 'waiting' => \count($this->admission)];
    }

    private function awaitAdmission(): void
    {
        if (\count($this->admission) === 0) {
            $this->scheduler->whenIdle($this, $this->admitOne(...));
        }
        if (!$this->checkScheduled) {
            // Turned away while the loop's dispatch still owed callbacks (often the other requests of the
            // same batch): look again once they have run, before the loop waits.
            $this->checkScheduled = true;
            $this->scheduler->driver->defer($this->check(...));
        }
        try {
            $this->admission->wait(null, 'admission into the framework');
        } catch (\Throwable $e) {
            // Cancelled while waiting: WaitQueue took it out of the queue.
            if (\count($this->admission) === 0) {
                $this->scheduler->whenIdle($this, null);
            }
            throw $e;
        }
    }

    private function check(): void
    {
        $this->checkScheduled = false;
        $this->admitIfIdle();
    }

    /** A request left the framework: let the next one in if the worker has nothing else to run, or none is in. */
    private function admitIfIdle(): void
    {
        if (\count($this->admission) > 0 && ($this->inFlight === 0 || !$this->scheduler->hasQueued())) {
            $this->admitOne();
        }
    }

    /**
     * Lets the longest waiting request in if an instance is free for it (Scheduler::whenIdle() calls it
     * when the worker is about to idle).
     */
    private function admitOne(): void
    {
        if ($this->inFlight >= $this->size) {
            return;
        }
        $entry = $this->admission->shift();
        if (\count($this->admission) === 0) {
            $this->scheduler->whenIdle($this, null);
        }
        if ($entry !== null) {
            ++$this->inFlight;
            $this->scheduler->resume($entry[0]);
        }
    }

    /** Instances booted so far. */
    public function booted(): int
    {
        return $this->booted;
    }

    /**
     * Boots one more instance. In a request (the pool growing under load) the boot runs in a Fiber of
     * its own, which the hooks do not suspend (Scheduler::running() is null there): its I/O blocks as
     * at the worker's start, so no other request runs in the middle of a boot, whose statics are half
     * written and watched (ProcessState::followWrittenBy()). It holds the worker for as long as a boot
     * takes (tens of milliseconds for a Laravel application), once per instance.
     *
     * @return Instance<T>
     */
    private function grow(): Instance
    {
        if ($this->scheduler->running() === null) {
            return $this->open();
        }
        $boot = new \Fiber($this->open(...));
        $boot->start();
        if (!$boot->isTerminated()) {
            // Its code suspended the Fiber itself: nothing will resume it, and the instance is lost.
            throw new \LogicException('The application suspended a Fiber while it booted: a framework instance must boot without waiting on a Fiber or a coroutine');
        }
        return $boot->getReturn();
    }

    /**
     * From the second instance booted on, the pool collects cycles itself (GC_ROOTS): after 10,000
     * possible roots per instance booted, at most 40,000. Unless PHP's own collector was already off
     * (the application's choice) when the second booted; an application that calls gc_enable() later
     * gets PHP's schedule back besides.
     */
    private function collectCyclesForMore(): void
    {
        if ($this->booted === 2 && \gc_enabled()) {
            \gc_disable();
        } elseif ($this->gcRoots === 0) {
            return;   // one instance, or PHP's collector was the application's business
        }
        $this->gcRoots = self::GC_ROOTS * \min($this->booted, self::GC_SCALE_MAX);
    }

    /** @return Instance<T> */
    private function open(): Instance
    {
        // Each instance boots from the worker's own values, not from what another instance set.
        $state = $this->pristine->copy();
        $previous = $this->scheduler->bind($state);
        try {
            // What the boot stores in statics is this instance's: it follows the coroutine from now on,
            // and every later instance boots from the value it had before the first boot.
            $framework = ProcessState::followWrittenBy($this->boot, $before);
            foreach ($before as $name => $value) {
                $this->pristine->put($name, $value);
            }
            $state->save();
        } finally {
            // acquire() binds the borrower; warm() at the worker's start leaves {main} unbound.
            $this->scheduler->bind($previous);
        }
        $this->booted++;
        $this->collectCyclesForMore();
        return new Instance($framework, $state, $this->booted);
    }
}
