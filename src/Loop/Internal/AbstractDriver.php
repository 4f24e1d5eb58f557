<?php

declare(strict_types=1);

namespace Weft\Loop\Internal;

use Weft\Loop\Driver;
use Weft\Loop\InvalidWatcher;

/**
 * Everything a driver shares: watcher bookkeeping, timers, deferred callbacks, signals, run/stop.
 * A backend implements only how streams are activated, deactivated and waited on.
 *
 * @internal
 */
abstract class AbstractDriver implements Driver
{
    /** @var array<string, Watcher> */
    protected array $watchers = [];
    /** @var array<string, Watcher> deferred watchers waiting for the next tick, in order */
    private array $deferQueue = [];
    private TimerQueue $timers;
    /** @var array<int, array<string, Watcher>> */
    private array $signalWatchers = [];
    /** @var list<int> */
    private array $pendingSignals = [];
    private int $nextId = 0;
    private bool $running = false;
    private bool $stopped = false;
    private float $now;
    /** Enabled and referenced watchers other than deferred ones: what keeps run() alive. */
    private int $referencedCount = 0;
    private ?\Closure $errorHandler = null;
    private ?\Throwable $pendingError = null;
    /** Deferred callbacks of the running tick not yet run (taken off $deferQueue, still owed this tick). */
    private int $deferLeft = 0;
    /** Streams the running dispatch found ready whose watchers have not run yet (the backend keeps it). */
    protected int $undispatched = 0;

    public function __construct()
    {
        $this->timers = new TimerQueue();
        $this->now = \hrtime(true) / 1e9;
    }

    /** Start watching an enabled stream watcher. */
    abstract protected function activateStream(Watcher $watcher): void;

    /** Stop watching a stream watcher (disabled or cancelled). */
    abstract protected function deactivateStream(Watcher $watcher): void;

    /**
     * Wait for stream events for at most $timeout seconds (null: no limit, 0: poll) and invoke the callbacks
     * of ready watchers through invokeStream(). Must return early, without error, when a signal interrupts.
     */
    abstract protected function dispatch(?float $timeout): void;

    /** Whether any stream watcher is active: a backend with none may simply sleep. */
    abstract protected function hasActiveStreams(): bool;

    public function onReadable(mixed $stream, \Closure $callback): string
    {
        return $this->addStream(Watcher::READABLE, $stream, $callback);
    }

    public function onWritable(mixed $stream, \Closure $callback): string
    {
        return $this->addStream(Watcher::WRITABLE, $stream, $callback);
    }

    public function delay(float $seconds, \Closure $callback): string
    {
        $watcher = new Watcher($this->newId(), Watcher::DELAY, $callback);
        $watcher->interval = \max(0.0, $seconds);
        return $this->add($watcher);
    }

    public function repeat(float $interval, \Closure $callback): string
    {
        $watcher = new Watcher($this->newId(), Watcher::REPEAT, $callback);
        $watcher->interval = \max(0.0, $interval);
        return $this->add($watcher);
    }

    public function onSignal(int $signal, \Closure $callback): string
    {
        if (!\function_exists('pcntl_signal')) {
            throw new \Error('Signal watchers need the pcntl extension');
        }
        $watcher = new Watcher($this->newId(), Watcher::SIGNAL, $callback);
        $watcher->signal = $signal;
        return $this->add($watcher);
    }

    public function defer(\Closure $callback): string
    {
        $watcher = new Watcher($this->newId(), Watcher::DEFER, $callback);
        $watcher->referenced = true;
        $this->watchers[$watcher->id] = $watcher;
        $this->deferQueue[$watcher->id] = $watcher;
        return $watcher->id;
    }

    public function enable(string $id): void
    {
        $watcher = $this->watchers[$id] ?? throw InvalidWatcher::unknown($id);
        if ($watcher->enabled) {
            return;
        }
        $watcher->enabled = true;
        $this->activate($watcher);
    }

    public function disable(string $id): void
    {
        $watcher = $this->watchers[$id] ?? throw InvalidWatcher::unknown($id);
        if (!$watcher->enabled) {
            return;
        }
        $watcher->enabled = false;
        $this->deactivate($watcher);
    }

    public function cancel(string $id): void
    {
        $watcher = $this->watchers[$id] ?? null;
        if ($watcher === null) {
            return;
        }
        if ($watcher->enabled) {
            $watcher->enabled = false;
            $this->deactivate($watcher);
        }
        unset($this->watchers[$id]);
    }

    public function reference(string $id): void
    {
        $watcher = $this->watchers[$id] ?? throw InvalidWatcher::unknown($id);
        if ($watcher->referenced) {
            return;
        }
        $watcher->referenced = true;
        if ($watcher->enabled && $watcher->type !== Watcher::DEFER) {
            $this->referencedCount++;
        }
    }

    public function unreference(string $id): void
    {
        $watcher = $this->watchers[$id] ?? throw InvalidWatcher::unknown($id);
        if (!$watcher->referenced) {
            return;
        }
        $watcher->referenced = false;
        if ($watcher->enabled && $watcher->type !== Watcher::DEFER) {
            $this->referencedCount--;
        }
    }

    public function run(): void
    {
        if ($this->running) {
            throw new \Error('The event loop is already running');
        }
        $this->running = true;
        $this->stopped = false;
        try {
            while (!$this->stopped) {
                $this->tick();
                if ($this->pendingError !== null) {
                    $error = $this->pendingError;
                    $this->pendingError = null;
                    throw $error;
                }
                if ($this->deferQueue === [] && $this->referencedCount <= 0) {
                    break;
                }
            }
        } finally {
            $this->running = false;
        }
    }

    public function stop(): void
    {
        $this->stopped = true;
    }

    public function isRunning(): bool
    {
        return $this->running;
    }

    public function owesWork(): bool
    {
        return $this->deferQueue !== [] || $this->deferLeft > 0 || $this->pendingSignals !== [] || $this->undispatched > 0;
    }

    public function now(): float
    {
        return $this->now;
    }

    public function setErrorHandler(?\Closure $handler): void
    {
        $this->errorHandler = $handler;
    }

    public function watcherCount(): array
    {
        $enabled = 0;
        foreach ($this->watchers as $watcher) {
            $enabled += $watcher->enabled ? 1 : 0;
        }
        return ['enabled' => $enabled, 'referenced' => $this->referencedCount, 'total' => \count($this->watchers)];
    }

    private function tick(): void
    {
        if ($this->deferQueue !== []) {
            $queue = $this->deferQueue;
            $this->deferQueue = [];
            $this->deferLeft = \count($queue);
            foreach ($queue as $id => $watcher) {
                unset($queue[$id]);
                --$this->deferLeft;
                // Disabled after being queued: it waits for enable(). Cancelled: it is gone.
                if (!$watcher->enabled || !isset($this->watchers[$id])) {
                    continue;
                }
                unset($this->watchers[$id]);
                $this->invoke($watcher->callback, $watcher->id);
                if ($this->stopped) {
                    $this->deferQueue = $queue + $this->deferQueue;
                    $this->deferLeft = 0;
                    return;
                }
            }
        }

        if ($this->signalWatchers !== []) {
            // A signal that arrived while PHP code ran (a coroutine, a hooked call's idle poll) is only
            // queued: run its watchers now rather than after a wait that nothing else may end.
            \pcntl_signal_dispatch();
            $this->dispatchSignals();
        }

        $this->now = \hrtime(true) / 1e9;
        $timeout = null;
        if ($this->deferQueue !== [] || $this->stopped) {
            $timeout = 0.0;
        } elseif ($this->referencedCount <= 0) {
            // Only unreferenced watchers are left: nothing may keep run() waiting.
            return;
        } else {
            $next = $this->timers->peek();
            if ($next !== null) {
                // Timer slack: wait until the next whole millisecond after the earliest timer, so every
                // timer due within it runs in this one tick. Under load (thousands of 10 ms sleeps a
                // second) that is one wait per millisecond instead of one wait per timer; a timer is
                // never early and at most 1 ms late.
                $timeout = \max(0.0, \ceil(($next - $this->now) * 1000.0) / 1000.0);
            }
        }

        if ($this->hasActiveStreams()) {
            $this->dispatch($timeout);
        } elseif ($timeout === null) {
            // Only signal watchers: wait until a signal interrupts the sleep.
            \usleep(1_000_000);
        } elseif ($timeout > 0) {
            \usleep((int) ($timeout * 1e6));
        }

        $this->now = \hrtime(true) / 1e9;
        while (($watcher = $this->timers->extract($this->now)) !== null) {
            if ($watcher->type === Watcher::REPEAT) {
                $watcher->expiration = $this->now + $watcher->interval;
                $this->timers->insert($watcher);
            } else {
                $watcher->enabled = false;
                $this->referencedCount -= $watcher->referenced ? 1 : 0;
                unset($this->watchers[$watcher->id]);
            }
            // invoke() inlined: a timer fires for every sleep and timeout, and its variadic call
            // allocates an argument array each time.
            try {
                ($watcher->callback)($watcher->id);
            } catch (\Throwable $e) {
                $this->handleError($e);
            }
        }

        if ($this->signalWatchers !== []) {
            \pcntl_signal_dispatch();
            $this->dispatchSignals();
        }
    }

    /** Called by backends for a ready stream watcher. */
    final protected function invokeStream(Watcher $watcher): void
    {
        if (!$watcher->enabled) {
            return;
        }
        try {
            ($watcher->callback)($watcher->id, $watcher->stream);
        } catch (\Throwable $e) {
            $this->handleError($e);
        }
    }

    private function invoke(\Closure $callback, string $id, mixed ...$args): void
    {
        try {
            $callback($id, ...$args);
        } catch (\Throwable $e) {
            $this->handleError($e);
        }
    }

    /** A callback threw: the error handler's, else run() rethrows it. For backends that call stream callbacks inline. */
    final protected function handleError(\Throwable $e): void
    {
        if ($this->errorHandler !== null) {
            try {
                ($this->errorHandler)($e);
                return;
            } catch (\Throwable $inner) {
                $e = $inner;
            }
        }
        $this->pendingError ??= $e;
        $this->stopped = true;
    }

    private function dispatchSignals(): void
    {
        while ($this->pendingSignals !== []) {
            $signal = \array_shift($this->pendingSignals);
            foreach ($this->signalWatchers[$signal] ?? [] as $watcher) {
                if ($watcher->enabled) {
                    $this->invoke($watcher->callback, $watcher->id, $signal);
                }
            }
        }
    }

    private function addStream(int $type, mixed $stream, \Closure $callback): string
    {
        if (!\is_resource($stream)) {
            throw new \TypeError('Expected an open stream resource');
        }
        $watcher = new Watcher($this->newId(), $type, $callback);
        $watcher->stream = $stream;
        $watcher->streamId = \get_resource_id($stream);
        return $this->add($watcher);
    }

    /**
     * A watcher on a raw descriptor, for backends that can watch one directly (DescriptorDriver). Its
     * stream id is negative (-1 - fd), so it never collides with a resource id; the callback receives
     * the descriptor number where a stream watcher's receives the stream.
     */
    protected function addDescriptor(int $type, int $fd, \Closure $callback): string
    {
        if ($fd < 0) {
            throw new \ValueError('A descriptor number must be >= 0');
        }
        $watcher = new Watcher($this->newId(), $type, $callback);
        $watcher->stream = $fd;
        $watcher->streamId = -1 - $fd;
        return $this->add($watcher);
    }

    private function add(Watcher $watcher): string
    {
        $this->watchers[$watcher->id] = $watcher;
        $this->activate($watcher);
        return $watcher->id;
    }

    private function activate(Watcher $watcher): void
    {
        switch ($watcher->type) {
            case Watcher::READABLE:
            case Watcher::WRITABLE:
                $this->activateStream($watcher);
                break;
            case Watcher::DELAY:
            case Watcher::REPEAT:
                $watcher->expiration = (\hrtime(true) / 1e9) + $watcher->interval;
                $this->timers->insert($watcher);
                break;
            case Watcher::SIGNAL:
                if (!isset($this->signalWatchers[$watcher->signal])) {
                    \pcntl_signal($watcher->signal, function (int $signal): void {
                        $this->pendingSignals[] = $signal;
                    });
                }
                $this->signalWatchers[$watcher->signal][$watcher->id] = $watcher;
                break;
            case Watcher::DEFER:
                $this->deferQueue[$watcher->id] = $watcher;
                return;
        }
        if ($watcher->referenced) {
            $this->referencedCount++;
        }
    }

    private function deactivate(Watcher $watcher): void
    {
        switch ($watcher->type) {
            case Watcher::READABLE:
            case Watcher::WRITABLE:
                $this->deactivateStream($watcher);
                break;
            case Watcher::DELAY:
            case Watcher::REPEAT:
                $this->timers->remove($watcher);
                break;
            case Watcher::SIGNAL:
                unset($this->signalWatchers[$watcher->signal][$watcher->id]);
                if ($this->signalWatchers[$watcher->signal] === []) {
                    unset($this->signalWatchers[$watcher->signal]);
                    \pcntl_signal($watcher->signal, \SIG_DFL);
                }
                break;
            case Watcher::DEFER:
                unset($this->deferQueue[$watcher->id]);
                return;
        }
        if ($watcher->referenced) {
            $this->referencedCount--;
        }
    }

    /** Never a numeric string, so an id never turns into an integer key; cheaper than base_convert(). */
    private function newId(): string
    {
        return 'w' . $this->nextId++;
    }
}
