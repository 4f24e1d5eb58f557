<?php

declare(strict_types=1);

namespace Weft\Server\Watch;

use Weft\Ext\Inotify;
use Weft\Ext\InotifyException;
use Weft\Loop\Driver;

/**
 * Changes as the kernel reports them (inotify, through the native extension): a watch on every directory
 * of the list, the descriptor read by the master's loop when it is readable, so nothing is polled and a
 * change is seen at once.
 *
 * inotify does not recurse: a directory created later gets its watch when its creation is read, and the
 * files already in it by then are reported as changed (they were created before the watch could see
 * them). A queue overflow (more events than the kernel keeps) loses names, not the fact that something
 * changed: it is reported as such. When inotify cannot be set up (no watches left: fs.inotify.
 * max_user_watches), it says why and polls instead.
 */
final class InotifySource implements ChangeSource
{
    /** What makes a file or directory "changed"; ATTRIB for `touch`, which tools use to force a reload. */
    private const EVENTS = Inotify::MODIFY | Inotify::ATTRIB | Inotify::CLOSE_WRITE | Inotify::CREATE | Inotify::DELETE
        | Inotify::MOVED_FROM | Inotify::MOVED_TO | Inotify::DELETE_SELF | Inotify::MOVE_SELF;
    private const FLAGS = Inotify::ONLYDIR | Inotify::DONT_FOLLOW | Inotify::EXCL_UNLINK;
    /** errno values a directory may give that skip it rather than inotify as a whole */
    private const ENOENT = 2;
    private const EACCES = 13;
    private const ENOTDIR = 20;
    public const OVERFLOW = '(inotify queue overflowed: changes not named)';

    private ?Inotify $inotify = null;
    /** @var resource|null the descriptor as a stream, for any loop driver (select cannot take a number) */
    private $stream = null;
    private ?string $watcher = null;
    private ?Driver $driver = null;
    /** @var array<int, string> watch descriptor => directory */
    private array $directories = [];
    private ?PollingSource $fallback = null;
    private ?string $unavailable = null;

    public function __construct(private readonly WatchList $list)
    {
    }

    public static function available(): bool
    {
        return \class_exists(Inotify::class, false);
    }

    public function start(Driver $driver, \Closure $onChange): void
    {
        $this->driver = $driver;
        try {
            $this->inotify = new Inotify();
            foreach ($this->list->directories() as $dir) {
                $this->watch($dir);
            }
            $stream = \fopen('php://fd/' . $this->inotify->fd(), 'r');
            if ($stream === false) {
                throw new InotifyException('cannot open its descriptor as a stream');
            }
        } catch (InotifyException $e) {
            $this->inotify?->close();
            $this->inotify = null;
            $this->directories = [];
            $this->unavailable = $e->getMessage();
            $this->fallback = new PollingSource($this->list);
            $this->fallback->start($driver, $onChange);
            return;
        }
        $this->stream = $stream;
        $this->watcher = $driver->onReadable($stream, function () use ($onChange): void {
            $changed = $this->drain();
            if ($changed !== []) {
                $onChange($changed);
            }
        });
        $driver->unreference($this->watcher);
    }

    /** Reads what the kernel queued: the paths that changed, new directories watched. @return list<string> */
    public function drain(): array
    {
        if ($this->inotify === null) {
            return [];
        }
        $changed = [];
        foreach ($this->inotify->read() as [$wd, $mask, , $name]) {
            if ($mask & Inotify::Q_OVERFLOW) {
                $changed[self::OVERFLOW] = true;
                // Directories created meanwhile were missed too: watch whatever is there now (adding a
                // watch twice returns the same descriptor).
                foreach ($this->list->directories() as $dir) {
                    $this->watch($dir, quiet: true);
                }
                continue;
            }
            $dir = $this->directories[$wd] ?? null;
            if ($dir === null) {
                continue;
            }
            if ($mask & Inotify::IGNORED) {
                unset($this->directories[$wd]); // its directory is gone
                continue;
            }
            if ($name === '') {
                continue; // about the directory itself (DELETE_SELF, MOVE_SELF): its parent reports it
            }
            $path = $dir . '/' . $name;
            $root = $this->list->rootOf($path);
            if ($mask & Inotify::ISDIR) {
                if ($root === null || !$this->list->enters($root, $path)) {
                    continue;
                }
                if ($mask & (Inotify::CREATE | Inotify::MOVED_TO)) {
                    foreach ($this->watchTree($root, $path) as $file) {
                        $changed[$file] = true;
                    }
                } elseif ($mask & (Inotify::DELETE | Inotify::MOVED_FROM)) {
                    $changed[$path] = true;
                }
                continue;
            }
            if ($this->list->anyCounts($path)) {
                $changed[$path] = true;
            }
        }
        return \array_keys($changed);
    }

    public function latency(): float
    {
        return $this->fallback?->latency() ?? 0.0;
    }

    public function watched(): int
    {
        return $this->fallback?->watched() ?? \count($this->directories);
    }

    public function name(): string
    {
        return $this->fallback === null ? 'inotify' : "polling, as inotify failed: {$this->unavailable}";
    }

    public function stop(): void
    {
        $this->fallback?->stop();
        if ($this->watcher !== null) {
            $this->driver?->cancel($this->watcher);
            $this->watcher = null;
        }
        $this->close();
    }

    public function forked(): void
    {
        // The child's loop is new; its copies of the descriptors go, the master's watches stay.
        $this->fallback?->forked();
        $this->watcher = null;
        $this->close();
    }

    private function close(): void
    {
        if (\is_resource($this->stream)) {
            \fclose($this->stream);
        }
        $this->stream = null;
        $this->inotify?->close();
        $this->inotify = null;
        $this->directories = [];
    }

    /**
     * Watches a directory created after the start and its subdirectories, and returns the files in
     * them that count: written before the watch existed, no event will name them.
     *
     * @return list<string>
     */
    private function watchTree(string $root, string $dir): array
    {
        $found = [];
        foreach ([$dir, ...$this->list->subdirectories($root, $dir)] as $sub) {
            if (!$this->watch($sub, quiet: true)) {
                continue;
            }
            foreach (@\scandir($sub) ?: [] as $name) {
                $path = $sub . '/' . $name;
                if ($name !== '.' && $name !== '..' && \is_file($path) && $this->list->anyCounts($path)) {
                    $found[] = $path;
                }
            }
        }
        return $found;
    }

    /**
     * @throws InotifyException when inotify as a whole cannot do it (no watches left: ENOSPC), unless
     *         $quiet; a directory gone again or unreadable is skipped (polling would skip it too)
     */
    private function watch(string $dir, bool $quiet = false): bool
    {
        \assert($this->inotify !== null);
        try {
            $this->directories[$this->inotify->add($dir, self::EVENTS | self::FLAGS)] = $dir;
            return true;
        } catch (InotifyException $e) {
            if ($quiet || \in_array($e->getCode(), [self::ENOENT, self::EACCES, self::ENOTDIR], true)) {
                return false;
            }
            throw $e;
        }
    }
}
