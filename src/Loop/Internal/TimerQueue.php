<?php

declare(strict_types=1);

namespace Weft\Loop\Internal;

/**
 * The loop's timers, in buckets of one millisecond: the loop wakes at whole milliseconds anyway (its timer
 * slack, see AbstractDriver::tick()), so a timer is filed under the millisecond it falls due in (its
 * expiry rounded up) and fires in the loop's first turn at or after that millisecond: never early, at
 * most 1 ms late, and timers due within the same millisecond fire in the order they were set.
 *
 * A thousand requests each sleeping 10 ms make about ten buckets, not a heap of a thousand: setting a
 * timer is an append, cancelling one an unset, and only the distinct milliseconds go into a (native)
 * heap. This runs for every Weft\sleep() and timeout; a binary heap of watchers in PHP cost a sift of
 * ten levels of property reads per timer at that load.
 *
 * @internal
 */
final class TimerQueue
{
    /** @var array<int, array<string, Watcher>> millisecond => the timers due in it, in the order set */
    private array $buckets = [];
    /** @var \SplMinHeap<int> the milliseconds that have a bucket; one whose bucket is gone is skipped */
    private \SplMinHeap $due;
    /** @var list<Watcher> the due bucket being handed out by extract(), in order */
    private array $firing = [];
    private int $next = 0;
    private int $count = 0;
    /** Insertion order, kept on each watcher (tests and diagnostics read it). */
    private int $sequence = 0;

    /** Watcher::$due of a timer taken out of its bucket by extract() and not handed out yet. */
    private const FIRING = -2;

    public function __construct()
    {
        $this->due = new \SplMinHeap();
    }

    public function insert(Watcher $watcher): void
    {
        if ($watcher->due !== -1) {
            $this->remove($watcher);
        }
        $watcher->order = $this->sequence++;
        $due = (int) \ceil($watcher->expiration * 1000.0);
        if (!isset($this->buckets[$due])) {
            $this->buckets[$due] = [];
            $this->due->insert($due);
        }
        $this->buckets[$due][$watcher->id] = $watcher;
        $watcher->due = $due;
        $this->count++;
    }

    public function remove(Watcher $watcher): void
    {
        $due = $watcher->due;
        if ($due < 0) {
            if ($due === self::FIRING) {
                $watcher->due = -1; // extract() skips it
                $this->count--;
            }
            return;
        }
        $watcher->due = -1;
        unset($this->buckets[$due][$watcher->id]);
        if ($this->buckets[$due] === []) {
            unset($this->buckets[$due]);
        }
        $this->count--;
    }

    /**
     * Removes and returns the earliest timer if its millisecond has come at $now, else null. A due bucket
     * is taken whole and handed out in order (unsetting from the front of a PHP array one at a time would
     * scan the holes it leaves); a timer cancelled meanwhile is skipped.
     */
    public function extract(float $now): ?Watcher
    {
        while (true) {
            while ($this->next < \count($this->firing)) {
                $watcher = $this->firing[$this->next++];
                if ($watcher->due === self::FIRING) {
                    $watcher->due = -1;
                    $this->count--;
                    return $watcher;
                }
            }
            if ($this->firing !== []) {
                $this->firing = [];
                $this->next = 0;
            }
            $due = $this->earliest();
            if ($due === null || $due > $now * 1000.0) {
                return null;
            }
            foreach ($this->buckets[$due] as $watcher) {
                $watcher->due = self::FIRING;
                $this->firing[] = $watcher;
            }
            unset($this->buckets[$due]);
        }
    }

    /** When the earliest timer fires (its millisecond, in seconds), or null when there is none. */
    public function peek(): ?float
    {
        for ($i = $this->next; $i < \count($this->firing); $i++) {
            if ($this->firing[$i]->due === self::FIRING) {
                return $this->firing[$i]->expiration;
            }
        }
        $due = $this->earliest();
        return $due === null ? null : $due / 1000.0;
    }

    public function count(): int
    {
        return $this->count;
    }

    /** The earliest millisecond with a bucket; drops those whose bucket emptied since. */
    private function earliest(): ?int
    {
        $heap = $this->due;
        while (!$heap->isEmpty()) {
            $due = $heap->top();
            if (isset($this->buckets[$due])) {
                return $due;
            }
            $heap->extract();
        }
        return null;
    }
}
