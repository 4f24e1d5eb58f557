<?php

declare(strict_types=1);

namespace Weft\Server\Watch;

use Psr\Log\LoggerInterface;
use Weft\Loop\Driver;
use Weft\Server\MasterHook;

/**
 * `serve --watch`: beside the master's loop, waits for files of the watch list to change and then asks
 * for the same graceful reload as `bin/weft reload` (SIGHUP to the master): new workers load the code
 * on disk, the old ones drain, no connection is refused, and code that cannot load leaves the old
 * workers serving.
 *
 * A burst of changes (a `git checkout`, an editor saving several files, a formatter) makes one reload:
 * the reload waits until nothing has changed for the debounce delay (plus, when polling, a pass). A
 * change seen while a reload is under way makes another once it is over, since the workers being
 * started may already have loaded the older file.
 */
final class ReloadOnChange implements MasterHook
{
    public const DEFAULT_DEBOUNCE = 0.2;
    /** Names listed in the log line; the rest are counted. */
    private const NAMES_SHOWN = 10;

    /** @var array<string, true> */
    private array $pending = [];
    private ?string $timer = null;
    private bool $reloading = false;
    private bool $stopped = false;
    private ?Driver $driver = null;
    private \Closure $reload;

    /**
     * @param string $baseDir paths under it are logged relative to it (the application's directory)
     * @param null|\Closure(): void $reload what a reload is (default: SIGHUP to this process, the master)
     */
    public function __construct(
        private readonly ChangeSource $source,
        private readonly LoggerInterface $logger,
        private readonly string $baseDir,
        private readonly float $debounce = self::DEFAULT_DEBOUNCE,
        ?\Closure $reload = null,
    ) {
        $this->reload = $reload ?? static fn () => \posix_kill((int) \getmypid(), \SIGHUP);
    }

    public function start(\Closure $status): void
    {
        $this->driver = \Weft\Loop\Loop::get();
        $this->source->start($this->driver, fn (array $paths) => $this->changed($paths));
        // Loud on purpose: a server that reloads whenever a file changes is a development server.
        $this->logger->warning('Watching {n} {what} under {dir} for changes ({source}): workers reload when one changes. --watch is for development only', [
            'n' => $this->source->watched(),
            'what' => ($this->source->name() === 'inotify' ? 'director' : 'file') . ($this->source->watched() === 1 ? ($this->source->name() === 'inotify' ? 'y' : '') : ($this->source->name() === 'inotify' ? 'ies' : 's')),
            'dir' => $this->baseDir,
            'source' => $this->source->name(),
        ]);
    }

    public function event(string $event): void
    {
        match ($event) {
            MasterHook::RELOADING => $this->reloading = true,
            MasterHook::RELOADED => $this->reloaded(),
            MasterHook::STOPPING => $this->stop(),
            default => null,
        };
    }

    public function workerExited(array $stats): void
    {
    }

    public function forked(): void
    {
        $this->stopped = true;
        $this->timer = null;
        $this->source->forked();
    }

    public function stop(): void
    {
        if ($this->stopped) {
            return;
        }
        $this->stopped = true;
        if ($this->timer !== null) {
            $this->driver?->cancel($this->timer);
            $this->timer = null;
        }
        $this->source->stop();
    }

    /** @param list<string> $paths */
    private function changed(array $paths): void
    {
        if ($this->stopped || $paths === []) {
            return;
        }
        foreach ($paths as $path) {
            $this->pending[$path] = true;
        }
        $this->arm();
    }

    private function arm(): void
    {
        if ($this->driver === null) {
            return;
        }
        if ($this->timer !== null) {
            $this->driver->cancel($this->timer);
        }
        $this->timer = $this->driver->delay($this->debounce + $this->source->latency(), function (): void {
            $this->timer = null;
            $this->fire();
        });
        $this->driver->unreference($this->timer);
    }

    private function fire(): void
    {
        if ($this->stopped || $this->pending === []) {
            return;
        }
        if ($this->reloading) {
            return; // reloaded() comes back here
        }
        $paths = \array_keys($this->pending);
        $this->pending = [];
        \sort($paths);
        $this->forgetCompiled($paths);
        $names = \array_map(fn (string $path): string => \str_starts_with($path, $this->baseDir . '/') ? \substr($path, \strlen($this->baseDir) + 1) : $path, $paths);
        $shown = \implode(', ', \array_slice($names, 0, self::NAMES_SHOWN));
        if (\count($names) > self::NAMES_SHOWN) {
            $shown .= \sprintf(' and %d more', \count($names) - self::NAMES_SHOWN);
        }
        $this->logger->info('reloading: {n} {files} changed: {names}', [
            'n' => \count($names), 'files' => \count($names) === 1 ? 'file' : 'files', 'names' => $shown,
        ]);
        $this->reloading = true;
        ($this->reload)();
    }

    private function reloaded(): void
    {
        $this->reloading = false;
        if ($this->pending !== []) {
            $this->arm();
        }
    }

    /**
     * The workers share the master's opcache: a script saved twice within one second keeps its
     * timestamp, and a new worker would get the compiled copy of the first save. The master knows what
     * changed, so it drops those scripts for every worker to come.
     *
     * @param list<string> $paths
     */
    private function forgetCompiled(array $paths): void
    {
        if (!\function_exists('opcache_invalidate') || !\ini_get('opcache.enable_cli')) {
            return;
        }
        foreach ($paths as $path) {
            if (\str_ends_with($path, '.php')) {
                @\opcache_invalidate($path, true);
            }
        }
    }
}
