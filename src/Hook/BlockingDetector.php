<?php

declare(strict_types=1);

namespace Weft\Hook;

use Psr\Log\LoggerInterface;
use Weft\Coroutine\Scheduler;
use Weft\Ext\Watchdog;
use Weft\Loop\Driver;

/**
 * Finds what holds a coroutine-mode worker: a call that blocks (one no hook covers, or any call with
 * the hooks off) or a long computation keeps every other request on the worker waiting.
 *
 * A repeating loop timer measures the loop's lag (how late it fires: the worst is in `bin/weft status`)
 * and beats the extension's watchdog thread. When no beat came for longer than the threshold, the
 * watchdog has the engine call back here, in the code that holds the worker, which is then logged with
 * the request it serves and its PHP stack, at most once per site per interval. Without the extension
 * only the lag is measured.
 */
final class BlockingDetector
{
    public const DEFAULT_THRESHOLD = 0.05;
    private const REPORT_INTERVAL = 60.0;
    private const STACK_FRAMES = 8;
    /** How deep the stack is looked at for error rendering: frameworks' are deep. */
    private const TRACE_DEPTH = 256;

    /**
     * Where frameworks render an error page: "Class::method" (and its overrides in subclasses) or a
     * namespace prefix ending in a backslash. A debug page that highlights the source of every frame
     * takes ~90 ms, an error view compiled on its first use as long; it is the framework's, and no
     * change to the application would make it faster, so a hold caught there is not reported.
     * (Loading code, the other first-request cost, is left out of the held time by the extension.)
     */
    public const ERROR_RENDERING = [
        'Symfony\Component\ErrorHandler\ErrorRenderer\\',
        'Symfony\Bridge\Twig\ErrorRenderer\\',
        'Symfony\Component\ErrorHandler\ErrorHandler::handleException',
        'Symfony\Component\HttpKernel\EventListener\ErrorListener::onKernelException',
        'Illuminate\Foundation\Exceptions\Handler::render',
        'Illuminate\Foundation\Exceptions\Renderer\\',
    ];

    /** @var array<string, true> "Class::method" of Weft's own work in a request (excuse()) */
    private static array $excused = [];

    private ?string $timer = null;
    private float $worstLag = 0.0;
    private float $worstEver = 0.0;
    /** @var array<string, float> site => when it was last logged */
    private array $reported = [];
    /** @var array<string, int> site => reports suppressed since */
    private array $suppressed = [];
    private int $blocked = 0;
    private float $lastBusyReport = -\INF;

    /**
     * @param null|\Closure(): ?string $currentRequest names the request whose code runs now (the server's
     *        dispatcher knows it; the hooks know nothing of requests)
     */
    public function __construct(
        private readonly LoggerInterface $logger,
        private readonly float $threshold = self::DEFAULT_THRESHOLD,
        private readonly float $interval = self::REPORT_INTERVAL,
        private readonly ?\Closure $currentRequest = null,
    ) {
        if ($threshold <= 0) {
            throw new \InvalidArgumentException('The blocking threshold must be positive');
        }
    }

    public function start(Driver $driver): void
    {
        $this->stop($driver);
        $period = \max(0.005, $this->threshold / 2);
        $expected = \hrtime(true) / 1e9 + $period;
        $native = \class_exists(Watchdog::class, false);
        $this->timer = $driver->repeat($period, function () use (&$expected, $period, $native): void {
            $now = \hrtime(true) / 1e9;
            $lag = \max(0.0, $now - $expected);
            $expected = $now + $period;
            $this->worstLag = \max($this->worstLag, $lag);
            $this->worstEver = \max($this->worstEver, $lag);
            if ($native) {
                Watchdog::beat();
            }
        });
        $driver->unreference($this->timer);
        if ($native) {
            // A beat may come up to one period before the block starts.
            Watchdog::start($this->threshold + $period, $this->onBlocked(...));
        }
    }

    public function stop(Driver $driver): void
    {
        if ($this->timer !== null) {
            $driver->cancel($this->timer);
            $this->timer = null;
        }
        if (\class_exists(Watchdog::class, false)) {
            Watchdog::stop();
        }
    }

    /**
     * Holds caught inside this method (or a method it calls) are not reported: work Weft itself does in
     * a request, which no change to the application would shorten, such as booting a further framework
     * instance when the load needs one (Weft\Bridge\InstancePool). A hold there is still counted as lag.
     */
    public static function excuse(string $classMethod): void
    {
        self::$excused[$classMethod] = true;
    }

    /**
     * Where a request's work changes hands between the application and the server (a framework's
     * handle() starts or returns): the held time starts again here, so what the application holds
     * and what the server does around it are measured apart. Without it, the time of a framework's
     * error page (not reported where it is caught) was carried into the server's own work after it
     * and reported there, at a line of the bridge. Costs one atomic store; nothing without the
     * extension.
     */
    public static function boundary(): void
    {
        if (\class_exists(Watchdog::class, false)) {
            Watchdog::beat();
        }
    }

    /**
     * The worst loop lag since the last call (then reset) and since the start, in milliseconds, and how
     * many times the watchdog caught the worker held.
     *
     * @return array{lag_ms: float, lag_max_ms: float, blocked: int}
     */
    public function stats(): array
    {
        $stats = ['lag_ms' => \round($this->worstLag * 1000, 1), 'lag_max_ms' => \round($this->worstEver * 1000, 1), 'blocked' => $this->blocked];
        $this->worstLag = 0.0;
        return $stats;
    }

    /** Called by the watchdog, inside the code that holds the worker. */
    private function onBlocked(float $seconds, ?string $call, int $line): void
    {
        $trace = \debug_backtrace(\DEBUG_BACKTRACE_PROVIDE_OBJECT, self::TRACE_DEPTH);
        // [0] is this method, called from the blocked code: its file and line are where that code is.
        $file = $trace[0]['file'] ?? '?';
        $line = $line > 0 ? $line : ($trace[0]['line'] ?? 0);
        $site = $file . ':' . $line;
        $now = \hrtime(true) / 1e9;
        if (self::compressing($file)) {
            // Weft's own gzip layer, deflating a large response without a pause: not "many requests at
            // once", and not the application's call; say what it is and what avoids it.
            $this->blocked++;
            if (!isset($this->reported[$site]) || $now - $this->reported[$site] >= $this->interval) {
                $this->reported[$site] = $now;
                $this->logger->warning(
                    'gzip compression of a response held the worker for {ms} ms (threshold {threshold} ms){request}: '
                    . 'serve a precompressed copy (FILE.gz next to a --static file), lower --gzip-level, or leave the type out of --gzip-types',
                    ['ms' => (int) \round($seconds * 1000), 'threshold' => (int) \round($this->threshold * 1000), 'request' => $this->describeRequest()],
                );
            }
            return;
        }
        if (self::inWeftCore($file)) {
            // The watchdog caught Weft's own code (the loop, a suspension, the connection core): no single
            // call held the worker; it was busy with many requests at once (a burst of connections, say).
            // That is load, not a blocking call: logged as lag, and not counted as blocked.
            if ($now - $this->lastBusyReport >= $this->interval) {
                $this->lastBusyReport = $now;
                $this->logger->notice(
                    'The worker\'s loop ran {ms} ms late (threshold {threshold} ms) while busy in Weft itself at {site}: '
                    . 'many requests at once, not one call holding it',
                    ['ms' => (int) \round($seconds * 1000), 'threshold' => (int) \round($this->threshold * 1000), 'site' => \basename($file) . ':' . $line],
                );
            }
            return;
        }
        if (self::excusedIn($trace)) {
            return;
        }
        $this->blocked++;
        if (isset($this->reported[$site]) && $now - $this->reported[$site] < $this->interval) {
            $this->suppressed[$site] = ($this->suppressed[$site] ?? 0) + 1;
            return;
        }
        $this->reported[$site] = $now;
        $suppressed = $this->suppressed[$site] ?? 0;
        unset($this->suppressed[$site]);

        $this->logger->warning(
            'A blocking call held the worker for {ms} ms (threshold {threshold} ms){request}: {call}{site}{again}; stack: {stack}',
            [
                'ms' => (int) \round($seconds * 1000),
                'threshold' => (int) \round($this->threshold * 1000),
                'request' => $this->describeRequest(),
                'call' => $call !== null ? $call . '() at ' : 'at ',
                'site' => $site,
                'again' => $suppressed > 0 ? " (and {$suppressed} more time(s) here since it was last logged)" : '',
                'stack' => self::describeStack($trace),
            ],
        );
    }

    /** Whether the worker is held in Weft's gzip layer (zlib called from it: the site is its file). */
    private static function compressing(string $file): bool
    {
        return \str_starts_with($file, \dirname(__DIR__) . \DIRECTORY_SEPARATOR . 'Http' . \DIRECTORY_SEPARATOR . 'Compression' . \DIRECTORY_SEPARATOR);
    }

    /**
     * Whether a file is part of Weft's core (loop, coroutines, sockets, server, HTTP session, hooks):
     * code that only runs the requests, never an application's call. (A client of Weft's, such as the
     * PostgreSQL one, can block on its own, and is reported like application code.)
     */
    private static function inWeftCore(string $file): bool
    {
        static $roots = null;
        $src = \dirname(__DIR__) . \DIRECTORY_SEPARATOR;
        $roots ??= \array_map(static fn (string $dir): string => $src . $dir . \DIRECTORY_SEPARATOR,
            ['Loop', 'Coroutine', 'Socket', 'Server', 'Hook', 'Http', 'WebSocket']);
        foreach ($roots as $root) {
            if (\str_starts_with($file, $root)) {
                return true;
            }
        }
        return $file === $src . 'functions.php';
    }

    /**
     * Whether the hold was caught in work no change to the application would shorten: a framework
     * rendering an error page (ERROR_RENDERING) or Weft's own work in a request (excuse()). An entry is
     * a namespace prefix ending in a backslash, or "Class::method", which covers its overrides too.
     *
     * @param list<array<string, mixed>> $trace
     */
    private static function excusedIn(array $trace): bool
    {
        $entries = self::$excused === [] ? self::ERROR_RENDERING : [...self::ERROR_RENDERING, ...\array_keys(self::$excused)];
        foreach ($trace as $frame) {
            $class = $frame['class'] ?? null;
            if ($class === null) {
                continue;
            }
            foreach ($entries as $entry) {
                if (\str_ends_with($entry, '\\')) {
                    if (\str_starts_with($class, $entry)) {
                        return true;
                    }
                    continue;
                }
                [$owner, $method] = \explode('::', $entry, 2);
                if ($frame['function'] === $method && ($class === $owner || \is_subclass_of($class, $owner, false))) {
                    return true;
                }
            }
        }
        return false;
    }

    private function describeRequest(): string
    {
        if (($request = $this->currentRequest === null ? null : ($this->currentRequest)()) !== null) {
            // Up to the query: the site is what matters, and a query may carry a token the log must not keep.
            $query = \strpos($request, '?');
            return ' in ' . ($query === false ? $request : \substr($request, 0, $query));
        }
        $coroutine = Scheduler::get()->current;
        return $coroutine !== null ? " in coroutine #{$coroutine->id}" : ' outside any coroutine';
    }

    /** @param list<array<string, mixed>> $trace */
    private static function describeStack(array $trace): string
    {
        $frames = [];
        foreach (\array_slice($trace, 1, self::STACK_FRAMES) as $frame) {
            $function = isset($frame['class']) ? $frame['class'] . $frame['type'] . $frame['function'] : $frame['function'];
            $frames[] = $function . '()' . (isset($frame['file']) ? ' ' . \basename($frame['file']) . ':' . $frame['line'] : '');
        }
        return $frames === [] ? '(top level)' : \implode(' < ', $frames);
    }
}
