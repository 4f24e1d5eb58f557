<?php

declare(strict_types=1);

namespace Weft\Loop;

use Weft\Ext\Epoll;
use Weft\Ext\EpollException;
use Weft\Loop\Internal\AbstractDriver;
use Weft\Loop\Internal\Watcher;

/**
 * The native backend: level-triggered epoll(7) through the weft extension (ext/). The cost of a wait
 * does not grow with idle connections the way select's does, and any descriptor number can be watched.
 *
 * One kernel registration per stream, keyed by its resource id, with the union of its enabled read and
 * write watchers' interests. Registering a new stream happens at once, so errors reach the caller; other
 * changes to a stream's interest are applied just before the next wait, so the usual disable-then-enable
 * of one tick (a coroutine woken to read, which reads again) costs no system call. Cancelling a watcher
 * applies its stream's change at once instead: the stream is often closed right after, and a descriptor
 * closed while registered stays in the kernel's set if its open file lives on in another process.
 *
 * Like the select driver, a stream closed while watched wakes its watchers once (so their owners see
 * EOF) and they are then cancelled; regular files, which epoll refuses, are always ready, as select says.
 * After fork() the child must build its own driver (Loop::reset()): the extension refuses to wait on an
 * epoll instance inherited from the parent, which would share its registrations.
 */
final class EpollDriver extends AbstractDriver implements DescriptorDriver
{
    private const EPERM = 1;
    private const MAX_EVENTS = 1024;

    private readonly Epoll $epoll;
    /** @var array<int, int> interest registered for each stream (by resource id) */
    private array $registered = [];
    /** @var array<int, resource|int> streams, and raw descriptors (DescriptorDriver) under -1 - fd */
    private array $streams = [];
    /** @var array<int, true> streams whose interest may have changed since their last epoll_ctl() */
    private array $dirty = [];
    /** @var array<int, true> streams not in the kernel's set (regular files, closed streams): always ready */
    private array $alwaysReady = [];
    /** Events of the running dispatch not yet handed to their watchers. */
    private int $undispatched = 0;
    /** @var array<int, array<string, Watcher>> */
    private array $readWatchers = [];
    /** @var array<int, array<string, Watcher>> */
    private array $writeWatchers = [];

    public function __construct()
    {
        if (!self::isSupported()) {
            throw new \Error('The epoll loop needs the weft extension (Weft\\Ext\\Epoll), which is not loaded');
        }
        parent::__construct();
        $this->epoll = new Epoll();
    }

    public static function isSupported(): bool
    {
        return \extension_loaded('weft') && \class_exists(Epoll::class, false);
    }

    public function name(): string
    {
        return 'epoll';
    }

    public function canWatch(mixed $stream): bool
    {
        return Epoll::descriptorOf($stream) !== null;
    }

    public function onReadableFd(int $fd, \Closure $callback): string
    {
        return $this->addDescriptor(Watcher::READABLE, $fd, $callback);
    }

    public function onWritableFd(int $fd, \Closure $callback): string
    {
        return $this->addDescriptor(Watcher::WRITABLE, $fd, $callback);
    }

    public function cancel(string $id): void
    {
        $watcher = $this->watchers[$id] ?? null;
        parent::cancel($id);
        if ($watcher !== null && isset($this->dirty[$watcher->streamId])
            && ($watcher->type === Watcher::READABLE || $watcher->type === Watcher::WRITABLE)) {
            unset($this->dirty[$watcher->streamId]);
            $this->apply($watcher->streamId);
        }
    }

    protected function activateStream(Watcher $watcher): void
    {
        $id = $watcher->streamId;
        if ($watcher->type === Watcher::READABLE) {
            $this->readWatchers[$id][$watcher->id] = $watcher;
        } else {
            $this->writeWatchers[$id][$watcher->id] = $watcher;
        }
        if (isset($this->registered[$id])) {
            $this->dirty[$id] = true;
            return;
        }
        try {
            $this->register($id, $watcher->stream);
        } catch (UnsupportedStream $e) {
            unset($this->readWatchers[$id][$watcher->id], $this->writeWatchers[$id][$watcher->id]);
            if (($this->readWatchers[$id] ?? null) === []) {
                unset($this->readWatchers[$id]);
            }
            if (($this->writeWatchers[$id] ?? null) === []) {
                unset($this->writeWatchers[$id]);
            }
            $watcher->enabled = false;
            unset($this->watchers[$watcher->id]);
            throw $e;
        }
    }

    protected function deactivateStream(Watcher $watcher): void
    {
        $id = $watcher->streamId;
        if ($watcher->type === Watcher::READABLE) {
            unset($this->readWatchers[$id][$watcher->id]);
            if (($this->readWatchers[$id] ?? null) === []) {
                unset($this->readWatchers[$id]);
            }
        } else {
            unset($this->writeWatchers[$id][$watcher->id]);
            if (($this->writeWatchers[$id] ?? null) === []) {
                unset($this->writeWatchers[$id]);
            }
        }
        if (isset($this->registered[$id])) {
            $this->dirty[$id] = true;
        }
    }

    protected function hasActiveStreams(): bool
    {
        return $this->registered !== [];
    }

    /** The epoll object the loop waits on: a hook's idle poll watches its descriptor (FdWaiter). @internal */
    public function epoll(): Epoll
    {
        return $this->epoll;
    }

    /**
     * Also brings the kernel's registrations in line with the watchers (what the next wait would do
     * first), so that a poll of the epoll descriptor sees what the loop's wait would.
     */
    protected function hasPendingEvents(): bool
    {
        $this->applyDirty();
        return $this->undispatched > 0 || $this->alwaysReady !== [];
    }

    private function applyDirty(): void
    {
        if ($this->dirty !== []) {
            $dirty = $this->dirty;
            $this->dirty = [];
            foreach ($dirty as $id => $_) {
                $this->apply($id);
            }
        }
    }

    protected function dispatch(?float $timeout): void
    {
        $this->applyDirty();

        if ($this->alwaysReady !== []) {
            $timeout = 0.0;
        }
        // Nothing left after applying the changes: the wait below is then a sleep a signal can end.
        $events = $this->epoll->wait($timeout ?? -1.0, self::MAX_EVENTS);
        foreach ($this->alwaysReady as $id => $_) {
            $stream = $this->streams[$id];
            $events[$id] = \is_resource($stream) || \is_int($stream) ? $this->registered[$id] : Epoll::CLOSED;
        }

        $this->undispatched = \count($events);
        foreach ($events as $id => $flags) {
            --$this->undispatched;
            if (($flags & (Epoll::ERR | Epoll::HUP | Epoll::CLOSED)) !== 0) {
                if (($flags & Epoll::CLOSED) !== 0) {
                    $this->dropClosed($id);
                    continue;
                }
                // Errors and hang-ups end both directions: wake every watcher so its owner sees them.
                $flags |= Epoll::IN | Epoll::OUT;
            }
            if (($flags & Epoll::IN) !== 0 && isset($this->readWatchers[$id])) {
                foreach ($this->readWatchers[$id] as $watcher) {
                    $this->invokeStream($watcher);
                }
            }
            if (($flags & Epoll::OUT) !== 0 && isset($this->writeWatchers[$id])) {
                foreach ($this->writeWatchers[$id] as $watcher) {
                    $this->invokeStream($watcher);
                }
            }
        }
    }

    /** @param resource $stream */
    private function register(int $id, mixed $stream): void
    {
        $interest = $this->interest($id);
        if (!\is_resource($stream) && !\is_int($stream)) {
            // Closed before its watcher was enabled again: the next dispatch wakes and cancels it.
            $this->alwaysReady[$id] = true;
        } else {
            try {
                $this->epoll->add($stream, $interest, $id);
            } catch (EpollException $e) {
                if ($e->getCode() !== self::EPERM) {
                    throw new UnsupportedStream('The epoll loop cannot watch this stream: ' . $e->getMessage(), $e->getCode(), $e);
                }
                // A regular file or directory: never blocks, so always ready (what select reports).
                $this->alwaysReady[$id] = true;
            }
        }
        $this->registered[$id] = $interest;
        $this->streams[$id] = $stream;
    }

    /** Brings the kernel's registration of a stream in line with its enabled watchers. */
    private function apply(int $id): void
    {
        $old = $this->registered[$id] ?? null;
        if ($old === null) {
            return;
        }
        $interest = $this->interest($id);
        if ($interest === $old) {
            return;
        }
        if ($interest === 0) {
            unset($this->registered[$id], $this->streams[$id]);
            if (isset($this->alwaysReady[$id])) {
                unset($this->alwaysReady[$id]);
            } else {
                $this->epoll->remove($id);
            }
            return;
        }
        $this->registered[$id] = $interest;
        if (!isset($this->alwaysReady[$id])) {
            $this->epoll->modify($id, $interest);
        }
    }

    private function interest(int $id): int
    {
        return (isset($this->readWatchers[$id]) ? Epoll::IN : 0) | (isset($this->writeWatchers[$id]) ? Epoll::OUT : 0);
    }

    /** A stream closed while watched: its watchers can never fire; wake them so their owners see EOF. */
    private function dropClosed(int $id): void
    {
        $watchers = ($this->readWatchers[$id] ?? []) + ($this->writeWatchers[$id] ?? []);
        unset($this->registered[$id], $this->streams[$id], $this->alwaysReady[$id], $this->dirty[$id]);
        foreach ($watchers as $watcher) {
            $this->invokeStream($watcher);
            $this->cancel($watcher->id);
        }
    }
}
