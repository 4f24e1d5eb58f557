<?php

declare(strict_types=1);

namespace Weft\Server\Watch;

use Weft\Loop\Driver;

/**
 * The fallback without inotify: every half second, stat() every file the list counts and compare with
 * the previous pass. A pass over a few thousand files takes a few milliseconds of the master's loop.
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

    /** @var array<string, array{0: string, 1: ?string}> path => [metadata, checksum of a recent file] */
    private array $known = [];
    private ?string $timer = null;
    private ?Driver $driver = null;

    public function __construct(private readonly WatchList $list, private readonly float $interval = self::DEFAULT_INTERVAL)
    {
        if ($interval <= 0) {
            throw new \InvalidArgumentException('The polling interval must be positive');
        }
    }

    public function start(Driver $driver, \Closure $onChange): void
    {
        $this->driver = $driver;
        $this->known = $this->scan();
        $this->timer = $driver->repeat($this->interval, function () use ($onChange): void {
            $changed = $this->poll();
            if ($changed !== []) {
                $onChange($changed);
            }
        });
        $driver->unreference($this->timer);
    }

    /** One pass: the paths created, modified or deleted since the last one. @return list<string> */
    public function poll(): array
    {
        $now = $this->scan();
        $changed = [];
        foreach ($now as $path => [$meta, $sum]) {
            $before = $this->known[$path] ?? null;
            if ($before === null || $before[0] !== $meta || ($sum !== null && $before[1] !== null && $sum !== $before[1])) {
                $changed[] = $path;
            }
        }
        foreach ($this->known as $path => $_) {
            if (!isset($now[$path])) {
                $changed[] = $path;
            }
        }
        $this->known = $now;
        return $changed;
    }

    public function latency(): float
    {
        // A burst may straddle a pass: only a pass that saw nothing new ends it.
        return $this->interval;
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
    }

    public function forked(): void
    {
        // The child's loop is a new one (Loop::reset()): the timer is not carried over.
        $this->timer = null;
        $this->known = [];
    }

    /** @return array<string, array{0: string, 1: ?string}> */
    private function scan(): array
    {
        \clearstatcache();
        $recent = \time() - self::RECENT;
        $files = [];
        foreach ($this->list->files() as [, $path]) {
            $stat = @\stat($path);
            if ($stat === false) {
                continue;
            }
            $files[$path] = [
                $stat['mtime'] . ':' . $stat['size'] . ':' . $stat['ino'] . ':' . $stat['ctime'],
                $stat['mtime'] >= $recent ? (@\hash_file('crc32b', $path) ?: null) : null,
            ];
        }
        return $files;
    }
}
