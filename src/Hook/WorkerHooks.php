<?php

declare(strict_types=1);

namespace Weft\Hook;

use Psr\Log\LoggerInterface;
use Weft\Loop\Loop;

/**
 * The hooks as the server uses them: enabled in each coroutine-mode worker right after fork (before the
 * application loads, so connections it opens at boot are hooked too), announced once at start-up, and
 * reported to `bin/weft status` with the loop lag the blocking-call detector measures. The server hands
 * in plain values: the hooks sit below it and know nothing of its configuration.
 */
final class WorkerHooks
{
    private static ?BlockingDetector $detector = null;

    /** In a worker, after fork: turns on the kinds in $hooks (Hooks::KINDS; 0: off). */
    public static function install(int $hooks): void
    {
        if ($hooks === 0) {
            Hooks::disable();
        } else {
            Hooks::enable($hooks);
        }
        self::$detector = null;
    }

    /**
     * In coroutine mode, once the application has loaded: the blocking-call detector. Loading blocks
     * by nature (a framework compiles its container and autoloads hundreds of classes before any
     * request is served), and reporting it would warn at every worker start of every framework app.
     *
     * @param float $threshold seconds a call may hold the worker (0: no detector)
     * @param \Closure(): ?string $currentRequest names the request whose code runs now
     */
    public static function startDetector(float $threshold, LoggerInterface $logger, \Closure $currentRequest): void
    {
        if ($threshold > 0) {
            self::$detector = new BlockingDetector($logger, $threshold, currentRequest: $currentRequest);
            self::$detector->start(Loop::get());
        }
    }

    /**
     * The start-up line: which calls suspend, and a warning when the extension cannot hook them.
     *
     * @param string $buildCommand how this installation builds the extension (PhpRuntime::buildCommand())
     */
    public static function announce(string $mode, int $hooks, string $buildCommand, LoggerInterface $logger): void
    {
        if ($mode !== 'coroutine') {
            return;
        }
        if ($hooks === 0) {
            $logger->info('Hooks off (--hooks none): ordinary blocking calls (PDO, mysqli, phpredis, file_get_contents, curl, sleep) block the worker while they wait');
            return;
        }
        if (!Hooks::isSupported()) {
            $logger->warning(
                'The weft extension is not loaded: ordinary blocking calls (PDO, mysqli, phpredis, file_get_contents, curl, sleep) '
                . 'block the whole worker and every request on it; Weft\'s own clients and Weft\\sleep() do not. '
                . 'Build it with: {build}',
                ['build' => $buildCommand],
            );
            return;
        }
        $active = $hooks & Hooks::available();
        $missing = Hooks::ALL & ~$active;
        $logger->info('Hooks on: {active} (these blocking PHP calls suspend the coroutine); not hooked: {missing}', [
            'active' => Hooks::describe($active),
            'missing' => Hooks::describe($missing),
        ]);
        $curl = Hooks::KINDS['curl'];
        if (($hooks & $curl) !== 0 && ($active & $curl) === 0 && \extension_loaded('curl') && \defined('Weft\\Ext\\CURL_HOOK')) {
            // The extension says why (its start-up check failed, or WEFT_CURL_HOOK=off).
            $logger->warning('curl is not hooked ({why}): curl_exec() and curl_multi_select() block the worker while they wait', [
                'why' => (string) \constant('Weft\\Ext\\CURL_HOOK'),
            ]);
        }
    }

    /** @return array<string, string|int|float> this worker's figures for `bin/weft status` */
    public static function stats(): array
    {
        return ['hooks' => Hooks::describe()] + (self::$detector?->stats() ?? []);
    }

    /** @param list<array<string, mixed>> $workers as `bin/weft status` receives them */
    public static function render(array $workers): string
    {
        $out = '';
        $lags = [];
        foreach ($workers as $worker) {
            if ($out === '' && isset($worker['hooks'])) {
                $out = 'Hooks: ' . $worker['hooks'] . "\n";
            }
            if (isset($worker['lag_max_ms'])) {
                $lags[] = \sprintf(
                    'worker %s: %s ms (worst %s ms, held %d time(s))',
                    $worker['slot'] ?? '?',
                    $worker['lag_ms'],
                    $worker['lag_max_ms'],
                    $worker['blocked'] ?? 0,
                );
            }
        }
        if ($lags !== []) {
            $out .= 'Loop lag (last interval): ' . \implode('; ', $lags) . "\n";
        }
        return $out === '' ? '' : $out . "\n";
    }
}
