<?php

declare(strict_types=1);

namespace Weft\Loop\Internal;

/**
 * A binary min-heap of timers keyed by expiry, with removal in O(log n).
 *
 * Each watcher is in the heap at most once and carries its own heap index and insertion order, so
 * timers armed and cancelled per request (sleeps, timeouts) never pile up as stale entries. This runs
 * for every Weft\sleep(): comparisons are inlined rather than method calls.
 *
 * @internal
 */
final class TimerQueue
{
    /** @var list<Watcher> */
    private array $heap = [];
    /** Tie-break so that equal expiries fire in insertion order. */
    private int $sequence = 0;

    public function insert(Watcher $watcher): void
    {
        if ($watcher->heapIndex >= 0) {
            $this->remove($watcher);
        }
        $watcher->order = $this->sequence++;
        // An explicit index, not $heap[]: after an unset() of the last slot PHP would append past a gap.
        $index = \count($this->heap);
        $this->heap[$index] = $watcher;
        $watcher->heapIndex = $index;
        $this->up($index);
    }

    public function remove(Watcher $watcher): void
    {
        $index = $watcher->heapIndex;
        if ($index < 0) {
            return;
        }
        $watcher->heapIndex = -1;
        $last = \count($this->heap) - 1;
        $moved = $this->heap[$last];
        unset($this->heap[$last]);
        if ($index === $last) {
            return;
        }
        $this->heap[$index] = $moved;
        $moved->heapIndex = $index;
        $this->up($index);
        $this->down($moved->heapIndex);
    }

    /** Removes and returns the earliest timer if it expired at $now, else null. */
    public function extract(float $now): ?Watcher
    {
        $top = $this->heap[0] ?? null;
        if ($top === null || $top->expiration > $now) {
            return null;
        }
        $this->remove($top);
        return $top;
    }

    public function peek(): ?float
    {
        return isset($this->heap[0]) ? $this->heap[0]->expiration : null;
    }

    public function count(): int
    {
        return \count($this->heap);
    }

    private function up(int $index): void
    {
        $heap = &$this->heap;
        $node = $heap[$index];
        $expiration = $node->expiration;
        $order = $node->order;
        while ($index > 0) {
            $parentIndex = ($index - 1) >> 1;
            $parent = $heap[$parentIndex];
            if ($parent->expiration < $expiration || ($parent->expiration === $expiration && $parent->order < $order)) {
                break;
            }
            $heap[$index] = $parent;
            $parent->heapIndex = $index;
            $index = $parentIndex;
        }
        $heap[$index] = $node;
        $node->heapIndex = $index;
    }

    private function down(int $index): void
    {
        $heap = &$this->heap;
        $count = \count($heap);
        $node = $heap[$index];
        $expiration = $node->expiration;
        $order = $node->order;
        while (($child = 2 * $index + 1) < $count) {
            $candidate = $heap[$child];
            $right = $child + 1;
            if ($right < $count) {
                $other = $heap[$right];
                if ($other->expiration < $candidate->expiration
                    || ($other->expiration === $candidate->expiration && $other->order < $candidate->order)) {
                    $candidate = $other;
                    $child = $right;
                }
            }
            if ($expiration < $candidate->expiration || ($expiration === $candidate->expiration && $order < $candidate->order)) {
                break;
            }
            $heap[$index] = $candidate;
            $candidate->heapIndex = $index;
            $index = $child;
        }
        $heap[$index] = $node;
        $node->heapIndex = $index;
    }
}
