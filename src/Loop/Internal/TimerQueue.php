<?php

declare(strict_types=1);

namespace Weft\Loop\Internal;

/**
 * A binary min-heap of timers keyed by expiry, with removal by id.
 *
 * Each watcher is in the heap at most once; the position map makes remove() and re-insert O(log n),
 * so timers that are armed and cancelled per request (timeouts) never pile up as stale entries.
 *
 * @internal
 */
final class TimerQueue
{
    /** @var list<Watcher> */
    private array $heap = [];
    /** @var array<string, int> watcher id => heap index */
    private array $pointers = [];
    /** Tie-break so that equal expiries fire in insertion order. */
    private int $sequence = 0;
    /** @var array<string, int> */
    private array $order = [];

    public function insert(Watcher $watcher): void
    {
        if (isset($this->pointers[$watcher->id])) {
            $this->remove($watcher);
        }
        $index = \count($this->heap);
        $this->heap[$index] = $watcher;
        $this->pointers[$watcher->id] = $index;
        $this->order[$watcher->id] = $this->sequence++;
        $this->up($index);
    }

    public function remove(Watcher $watcher): void
    {
        $id = $watcher->id;
        if (!isset($this->pointers[$id])) {
            return;
        }
        $index = $this->pointers[$id];
        $last = \count($this->heap) - 1;
        unset($this->pointers[$id], $this->order[$id]);
        if ($index === $last) {
            unset($this->heap[$last]);
            return;
        }
        $moved = $this->heap[$last];
        unset($this->heap[$last]);
        $this->heap[$index] = $moved;
        $this->pointers[$moved->id] = $index;
        $this->up($index);
        $this->down($this->pointers[$moved->id]);
    }

    /** Removes and returns the earliest timer if it expired at $now, else null. */
    public function extract(float $now): ?Watcher
    {
        if ($this->heap === [] || $this->heap[0]->expiration > $now) {
            return null;
        }
        $top = $this->heap[0];
        $this->remove($top);
        return $top;
    }

    public function peek(): ?float
    {
        return $this->heap === [] ? null : $this->heap[0]->expiration;
    }

    public function count(): int
    {
        return \count($this->heap);
    }

    private function less(int $a, int $b): bool
    {
        $x = $this->heap[$a];
        $y = $this->heap[$b];
        return $x->expiration < $y->expiration
            || ($x->expiration === $y->expiration && $this->order[$x->id] < $this->order[$y->id]);
    }

    private function up(int $index): void
    {
        while ($index > 0) {
            $parent = ($index - 1) >> 1;
            if (!$this->less($index, $parent)) {
                return;
            }
            $this->swap($index, $parent);
            $index = $parent;
        }
    }

    private function down(int $index): void
    {
        $count = \count($this->heap);
        while (true) {
            $smallest = $index;
            $left = 2 * $index + 1;
            $right = $left + 1;
            if ($left < $count && $this->less($left, $smallest)) {
                $smallest = $left;
            }
            if ($right < $count && $this->less($right, $smallest)) {
                $smallest = $right;
            }
            if ($smallest === $index) {
                return;
            }
            $this->swap($index, $smallest);
            $index = $smallest;
        }
    }

    private function swap(int $a, int $b): void
    {
        $x = $this->heap[$a];
        $this->heap[$a] = $this->heap[$b];
        $this->heap[$b] = $x;
        $this->pointers[$this->heap[$a]->id] = $a;
        $this->pointers[$x->id] = $b;
    }
}
