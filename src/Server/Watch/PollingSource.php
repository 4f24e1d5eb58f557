<?php

declare(strict_types=1);

namespace Weft\Server\Watch;

use Weft\Loop\Driver;

/**
 * The fallback without inotify: every half second, a pass stat()s every file the list counts and
 * compares with the previous pass. A pass is spread over the master's loop in slices of at most 5 ms,
 * so a large tree (a --watch-path over vendor/: 5,000 files, about 60 ms a pass) never holds the
 * master's loop for long; a small application's pass is a fraction of a millisecond, one slice.
 *
 * stat() gives PHP whole seconds, so a second save within the second of the first, of the same size,
 * would look unchanged: files modified in the last two seconds are also compared by a checksum of their
 * content, which costs only for the files just edited.
 */
final class PollingSource implements ChangeSource
{
    public const DEFAULT_INTERVAL = 0.5;
    /** Files modified this recently (seconds) are compared by content too. */
    private const RECENT = 2;
    /** The longest slice of a pass, in nanoseconds, before the loop gets a turn. */
    private const SLICE_NS = 5_000_000;

    /** @var array<string, array{0: string, 1: ?string}> path => [metadata, checksum of a recent file] */
    private array $known = [];
    /** @var array<string, array{0: string, 1: ?string}> the pass under way */
    private array $next = [];
    private ?\Generator $walk = null;
    private int $recent = 0;
    private float $passStarted = 0.0;
    private float $lastPass = 0.0;
    private ?string $timer = null;
    private ?Driver $driver = null;
    private ?\Closure $onChange = null;

    public function __construct(private readonly WatchList $list, private readonly float $interval = self::DEFAULT_INTERVAL)
    {
        if ($interval <= 0) {
            throw new \InvalidArgumentException('The polling interval must be positive');
        }
    }

    public function start(Driver $driver, \Closure $onChange): void
    {
        $this->driver = $driver;
        $this->onChange = $onChange;
        $this->poll(); // what there is now, to compare with
        $this->schedule($this->interval);
    }

    /** One whole pass at once: the paths created, modified or deleted since the last one. @return list<string> */
    public function poll(): array
    {
        $this->walk = null;
        return $this->step(\PHP_INT_MAX) ?? [];
    }

    public function latency(): float
    {
        // A burst may straddle a pass: only a pass that saw nothing new ends it.
        return $this->interval + $this->lastPass;
    }

    public function watched(): int
    {
        return \count($this->known);
    }

    public function name(): string
    {
        return 'polling';
    }

    public function stop(): void
    {
        if ($this->timer !== null) {
            $this->driver?->cancel($this->timer);
            $this->timer = null;
        }
        $this->walk = null;
    }

    public function forked(): void
    {
        // The child's loop is a new one (Loop::reset()): the timer is not carried over.
        $this->timer = null;
        $this->walk = null;
        $this->known = $this->next = [];
    }

    private function schedule(float $delay): void
    {
        \assert($this->driver !== null);
        $this->timer = $this->driver->delay($delay, function (): void {
            $this->timer = null;
            $changed = $this->step(self::SLICE_NS);
            if ($changed === null) {
                $this->schedule(0.0); // the rest of the pass, after the loop's other work
                return;
            }
            $this->schedule($this->interval);
            if ($changed !== [] && $this->onChange !== null) {
                ($this->onChange)($changed);
            }
        });
        $this->driver->unreference($this->timer);
    }

    /**
     * Goes on with the pass under way (or starts one) for at most $budget nanoseconds.
     *
     * @return null|list<string> null while the pass is unfinished; then what changed
     */
    private function step(int $budget): ?array
    {
        if ($this->walk === null) {
            \clearstatcache();
            $this->walk = $this->list->files();
            $this->next = [];
            $this->recent = \time() - self::RECENT;
            $this->passStarted = \microtime(true);
        }
        $until = \hrtime(true) + \min($budget, \PHP_INT_MAX - \hrtime(true));
        while ($this->walk->valid()) {
            [, $path] = $this->walk->current();
            $stat = @\stat($path);
            if ($stat !== false) {
                $this->next[$path] = [
                    $stat['mtime'] . ':' . $stat['size'] . ':' . $stat['ino'] . ':' . $stat['ctime'],
                    $stat['mtime'] >= $this->recent ? (@\hash_file('crc32b', $path) ?: null) : null,
                ];
            }
            $this->walk->next();
            if (\hrtime(true) > $until) {
                return null;
            }
        }
        $this->walk = null;
        $this->lastPass = \microtime(true) - $this->passStarted;
        $changed = [];
        foreach ($this->next as $path => [$meta, $sum]) {
            $before = $this->known[$path] ?? null;
            if ($before === null || $before[0] !== $meta || ($sum !== null && $before[1] !== null && $sum !== $before[1])) {
                $changed[] = $path;
            }
        }
        foreach ($this->known as $path => $_) {
            if (!isset($this->next[$path])) {
                $changed[] = $path;
            }
        }
        $this->known = $this->next;
        $this->next = [];
        return $changed;
    }
}
