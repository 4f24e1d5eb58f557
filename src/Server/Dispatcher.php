<?php

declare(strict_types=1);

namespace Weft\Server;

use Psr\Log\LoggerInterface;
use Weft\Coroutine\Scheduler;
use Weft\Loop\Driver;
use Weft\Server\Internal\Deadlines;

/**
 * Runs application calls, each in a (pooled) coroutine of its own. This is where the two modes differ,
 * and only here: coroutine mode runs any number at once; sync mode runs one at a time per worker
 * (the others queue, in arrival order), so while a request waits no other request of the worker runs,
 * which is the classic resident model. Every wait still goes through the one wait path.
 *
 * Also keeps what `status` and the master's liveness check read: calls completed, and the requests in
 * flight, oldest first. With --max-request-time, a request running longer is cancelled: its waits throw
 * RequestTimeout, and with the native extension its own code is interrupted too (CodeDeadline).
 *
 * @internal
 */
final class Dispatcher
{
    /**
     * Stop and reload signals, held back while a sync-mode call runs (see runner()); and the master's
     * question to a silent worker (SIGWINCH, Worker::answerWhenStuck()), which a sync worker need not
     * answer: the one request it runs is the one its scoreboard names.
     */
    private const HELD_SIGNALS = [\SIGTERM, \SIGINT, \SIGHUP, \SIGUSR1, \SIGUSR2, \SIGWINCH];

    /*
     * calls, active, nextKey and starting are written for every request: untyped, their types in @var
     * (see the note in Coroutine on what a typed property costs per assignment under the JIT).
     */
    /** @var int */
    private $calls = 0;
    /** @var int */
    private $active = 0;
    /** @var int */
    private $nextKey = 0;
    /*
     * The calls in flight are not listed here: they are the live coroutines that run $this->run
     * (Scheduler::live(), in start order) and have not been released by it, with their session and
     * request as the coroutine's arguments and their start in its startedAt. A list of our own cost an array and a hash insert and delete per
     * request (~880 instructions under the tracing JIT, scripts/dispatch-ir.php).
     */
    /** After abandonAll(): the calls in flight were answered and are not answered again. */
    private bool $abandoned = false;
    /** @var list<array{Session, mixed}> sync mode: requests waiting for their turn */
    private array $queue = [];
    private ?\Closure $listener = null;
    private readonly Scheduler $scheduler;
    private readonly \Closure $run;
    private ?Deadlines $deadlines = null;
    /** Whether the extension interrupts a request's running code at its deadline (CodeDeadline). */
    private bool $interrupts = false;
    /**
     * The key of the call dispatch() is starting now (null: none): a call that ends while its key is still
     * here was answered inside dispatch(), whose caller goes on by itself; any other is reported to its
     * session (Session::resume()) when it ends.
     *
     * @var ?int
     */
    private $starting = null;
    /** Sync mode with pcntl: the stop and reload signals are held back while a call runs (see runner()). */
    private readonly bool $holdsSignals;

    /**
     * @param int $concurrency application calls at once (1: sync mode, 0: no limit)
     * @param float $maxRequestTime seconds a call may run before it is cancelled (0: no limit)
     * @param Scoreboard|null $scoreboard this worker's slot shared with the master: each call is written
     *        there when it starts and ends, so a stuck worker's request can be named (--worker-timeout)
     */
    public function __construct(
        private readonly Driver $driver,
        private readonly LoggerInterface $logger,
        private readonly int $concurrency = 0,
        private readonly float $maxRequestTime = 0.0,
        private readonly ?Scoreboard $scoreboard = null,
    ) {
        $this->scheduler = Scheduler::get();
        $this->run = $this->runner();
        $this->holdsSignals = $concurrency === 1 && \function_exists('pcntl_sigprocmask');
        if ($maxRequestTime > 0) {
            $this->deadlines = new Deadlines($driver);
            $this->interrupts = CodeDeadline::enable($maxRequestTime);
        }
    }

    public function mode(): string
    {
        return $this->concurrency === 1 ? 'sync' : 'coroutine';
    }

    /**
     * Hands a request to the application, in a (pooled) coroutine of its own. This is the request's one
     * way in and out: the session's serve() runs the application and writes the answer; then either
     * this returns true (answered before dispatch() returned: the caller goes on with its next
     * request), or it returns false (the call waits: it suspended, or queues in sync mode) and the
     * session's resume() is called once the call has ended. Never both, never re-entered.
     *
     * @param Session $session untyped: an interface type is checked through zend_check_user_type_slow
     *        on every call, and this is every request (the callers are the server's sessions)
     */
    public function dispatch($session, mixed $request): bool
    {
        if ($this->concurrency > 0 && $this->active >= $this->concurrency) {
            $this->queue[] = [$session, $request];
            return false;
        }
        // Started here, in place (every request comes through): one call fewer than a start() of its own.
        $this->active++;
        $outer = $this->starting;
        $key = $this->starting = $this->nextKey;
        try {
            $coroutine = $this->scheduler->spawn($this->run, [$session, $request]);
        } catch (\Throwable $e) {
            $this->starting = $outer;
            if ($this->nextKey === $key) {
                $this->active--; // never started (no coroutine to be had): its call did not count it down
            }
            throw $e;
        }
        $this->starting = $outer;
        return $coroutine->isFinished();
    }

    /** Application calls completed so far (requests, lines). */
    public function calls(): int
    {
        return $this->calls;
    }

    /** @param null|\Closure(int): void $listener told the running count after every completed call */
    public function onCall(?\Closure $listener): void
    {
        $this->listener = $listener;
    }

    /**
     * The oldest requests in flight, for `status` and the master's liveness check.
     *
     * @return list<array{request: string, since: float}>
     */
    public function running(int $max = 3): array
    {
        $list = [];
        $offset = \microtime(true) - $this->driver->now();
        foreach ($this->inFlight() as $coroutine) {
            [$session, $request] = $coroutine->args();
            $since = $coroutine->startedAt;
            $description = $session->describe($request);
            if (\strlen($description) > 200) {
                $description = \substr($description, 0, 200) . '...'; // a target can be as long as --max-header
            }
            $list[] = ['request' => $description, 'since' => \round($offset + $since, 3)];
            if (\count($list) >= $max) {
                break;
            }
        }
        return $list;
    }

    /** The request of the coroutine running now (the one a fatal error happened in), if any. */
    public function currentRequest(): ?string
    {
        $current = $this->scheduler->current;
        if ($current === null || !$this->inFlightCall($current)) {
            return null;
        }
        [$session, $request] = $current->args();
        return $session->describe($request);
    }

    /** @return list<\Weft\Coroutine\Coroutine> the calls in flight (the coroutines running runner()'s closure), oldest first */
    private function inFlight(): array
    {
        $list = [];
        foreach ($this->scheduler->live() as $coroutine) {
            if ($this->inFlightCall($coroutine)) {
                $list[] = $coroutine;
            }
        }
        return $list;
    }

    /** Whether $coroutine runs one of our calls that has not ended (nor been answered by abandonAll()). */
    private function inFlightCall(\Weft\Coroutine\Coroutine $coroutine): bool
    {
        return !$this->abandoned && $coroutine->task() === $this->run && !$coroutine->released;
    }

    /**
     * After a fatal error or an exit() in a request, from the shutdown function: every request in
     * flight (and in sync mode every one waiting for its turn) gets a last answer where its session can
     * still give one (the request that was running when it happened a 500, the others a 503), instead
     * of an empty reply when the process ends.
     *
     * @return int how many were answered
     */
    public function abandonAll(): int
    {
        $current = $this->scheduler->current;
        $answered = 0;
        foreach ($this->inFlight() as $coroutine) {
            [$session, $request] = $coroutine->args();
            if ($session instanceof Abandonable) {
                try {
                    $session->abandon($request, $coroutine === $current);
                    $answered++;
                } catch (\Throwable) {
                    // The process is ending: the next one still gets its answer.
                }
            }
        }
        // Sync mode: those waiting for their turn would be dropped as well.
        foreach ($this->queue as [$session, $request]) {
            if ($session instanceof Abandonable) {
                try {
                    $session->abandon($request, false);
                    $answered++;
                } catch (\Throwable) {
                }
            }
        }
        $this->abandoned = true;
        $this->queue = [];
        return $answered;
    }

    /**
     * What every call runs in its coroutine: a closure literal, not run(...) of a method. The tracing JIT
     * stops recording a trace at the dynamic call of a closure made from a method (a "fake closure"), so
     * Coroutine::execute(), from that call on, ran in the interpreter; measured with
     * scripts/dispatch-ir.php, ~500 instructions per request. Its parameters are untyped (a Session and
     * the request): an interface type is checked through zend_check_user_type_slow on every call.
     */
    private function runner(): \Closure
    {
        return function ($session, $request): void {
            $key = $this->nextKey++;
            if ($this->scoreboard !== null) {
                $this->scoreboard->started($key + 1, $session->describe($request));
            }
            if ($this->deadlines !== null) {
                $coroutine = $this->scheduler->current;
                $limit = $this->maxRequestTime;
                $this->deadlines->arm($key, $limit, static function () use ($coroutine, $limit): void {
                    $coroutine->cancel(RequestTimeout::after($limit, 'Request (--max-request-time)'));
                });
                if ($this->interrupts) {
                    CodeDeadline::arm($limit);
                }
            }
            // Sync mode: the stop and reload signals wait while the application runs. A signal delivered
            // during the app's own usleep()/sleep()/blocking read would end that call early (EINTR), so a
            // stop would shorten a 2 s sleep to whenever it arrived. Held back, it is delivered when the
            // call returns and the worker drains as usual; a stuck worker still meets the master's SIGKILL.
            $hold = $this->holdsSignals;
            if ($hold) {
                \pcntl_sigprocmask(\SIG_BLOCK, self::HELD_SIGNALS);
            }
            // No finally below: the tracing JIT does not compile finally blocks (see Scheduler::spawn()), and
            // this runs for every request. Every exit goes through the bookkeeping below, in place (no call).
            $failure = null;
            try {
                $session->serve($request);
            } catch (\Throwable $e) {
                // serve() answers every failure of the application itself; this is a failure of ours.
                try {
                    $this->logger->error('Serving {request} failed: {class}: {message}', [
                        'request' => $session->describe($request), 'class' => $e::class, 'message' => $e->getMessage(), 'exception' => $e,
                    ]);
                } catch (\Throwable $e) {
                    $failure = $e;
                }
            }
            // The call under $key has ended: its bookkeeping, then the next queued call in sync mode.
            if ($hold) {
                \pcntl_sigprocmask(\SIG_UNBLOCK, self::HELD_SIGNALS);
            }
            if ($this->scoreboard !== null) {
                $this->scoreboard->ended($key + 1);
            }
            if ($this->deadlines !== null) {
                $this->deadlines->disarm($key);
            }
            // Whatever the session left with the extension for this request (its deadline, its last words)
            // goes with it, even when the application was never reached.
            if (CodeDeadline::$leaves) {
                CodeDeadline::leave();
            }
            $this->active--;
            $this->calls++;
            if ($this->listener !== null || $this->queue !== [] || $this->starting !== $key) {
                // More code runs on this coroutine before it finishes (the listener, the next queued
                // call, the session's next request): this call is not in flight any more for running()
                // and abandonAll(), which must not answer it twice after a fatal error in that code.
                $this->scheduler->current->released = true;
            }
            if ($this->listener !== null) {
                ($this->listener)($this->calls);
            }
            if ($this->queue !== []) {
                // Its session's dispatch() returned false long ago: it hears of the answer from here.
                [$nextSession, $nextRequest] = \array_shift($this->queue);
                if ($this->dispatch($nextSession, $nextRequest)) { // below the limit now: it starts
                    $nextSession->resume();
                }
            }
            if ($failure !== null) {
                throw $failure;
            }
            if ($this->starting !== $key) {
                $session->resume(); // answered after dispatch() returned: the session goes on from here
            }
        };
    }
}
