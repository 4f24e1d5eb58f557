<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Server\ControlSocket;
use Weft\Server\PidFile;
use Weft\Server\RuntimeFiles;
use Weft\Server\UnsafePath;

/**
 * `bin/weft stop|reload|status`: finds the master by its pid file and signals or asks it. Nothing is
 * signalled before the pid is known to be a Weft master of this pid file (PidFile::whyNotMaster): a
 * stale or planted pid file must not make `stop` kill an unrelated process.
 */
final class ControlCommand
{
    public function __construct(private readonly string $command)
    {
    }

    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(string $command): array
    {
        $spec = [
            'pid-file' => ['string', null, 'pid file of the server (default: RUNDIR/weft-PORT.pid)'],
            'port' => ['int', 8080, 'port of the server, to find its default pid file'],
            'config' => ['string', null, "the server's configuration file, to find its pid file (also WEFT_CONFIG, WEFT_PID_FILE, WEFT_PORT)"],
            'help' => ['bool', false, 'show this help'],
        ];
        if ($command === 'stop') {
            $spec['timeout'] = ['float', 30.0, 'seconds to wait for the server to exit'];
        }
        if ($command === 'reload') {
            $spec['timeout'] = ['float', 60.0, 'seconds to wait for the new workers to be ready'];
        }
        if ($command === 'status') {
            $spec['json'] = ['bool', false, 'print the raw JSON'];
        }
        return $spec;
    }

    /** @param list<string> $args */
    public function run(array $args): int
    {
        $spec = self::spec($this->command);
        $options = Options::parse($args, $spec);
        if ($options->get('help')) {
            echo "Usage: bin/weft {$this->command} [options]\n\n" . Options::help($spec) . "\n";
            return 0;
        }
        if ($options->arguments !== []) {
            throw new UsageError("unexpected argument '{$options->arguments[0]}'");
        }
        try {
            // Found as `serve` would place it: --pid-file / --port here, then WEFT_* and the configuration file.
            $pidFile = new PidFile(Config\Configuration::pidFileOf($args));
            $pid = $pidFile->read();
        } catch (UnsafePath $e) {
            \fwrite(\STDERR, 'weft: refusing the pid file: ' . $e->getMessage() . "\n");
            return 1;
        }
        if ($pid === null) {
            \fwrite(\STDERR, "weft: no running server found (no pid in {$pidFile->path})\n");
            return 1;
        }
        $why = $pidFile->whyNotMaster($pid);
        if ($why !== null) {
            \fwrite(\STDERR, "weft: no running server found: the pid file {$pidFile->path} names pid $pid, but $why; nothing was signalled\n");
            return 1;
        }
        return match ($this->command) {
            'stop' => $this->stop($pid, $options->get('timeout')),
            'reload' => $this->reload($pidFile, $pid, $options->get('timeout')),
            'status' => $this->status($pidFile->socketPath(), $options->get('json')),
        };
    }

    /**
     * Asks the master to reload over its control socket and waits for the outcome: the new workers all
     * ready (exit 0), or why they could not start (exit 1; the old workers keep serving). A master
     * without that command (fpm mode) gets SIGHUP.
     */
    private function reload(PidFile $pidFile, int $pid, float $timeout): int
    {
        $reply = ControlSocket::ask($pidFile->socketPath(), 'reload', $timeout);
        if ($reply === null || (isset($reply['error']) && \str_starts_with((string) $reply['error'], 'unknown command'))) {
            if ($reply === null && \file_exists($pidFile->socketPath())) {
                \fwrite(\STDERR, "weft: the master (pid $pid) did not answer the reload within {$timeout} s; see its log\n");
                return 1;
            }
            return $this->signal($pid, \SIGHUP, 'reload requested: new workers start, old ones drain');
        }
        if (($reply['ok'] ?? false) === true) {
            echo "reloaded: {$reply['workers']} new worker(s) serving, the old ones drain (master pid $pid)\n";
            return 0;
        }
        \fwrite(\STDERR, 'weft: reload failed: ' . ($reply['error'] ?? 'unknown reason') . "; the old workers keep serving (master pid $pid)\n");
        return 1;
    }

    private function stop(int $pid, float $timeout): int
    {
        \posix_kill($pid, \SIGTERM);
        $deadline = \microtime(true) + $timeout;
        while (\microtime(true) < $deadline) {
            if (!self::alive($pid)) {
                echo "stopped (master pid $pid)\n";
                return 0;
            }
            \usleep(20_000);
        }
        \fwrite(\STDERR, "weft: master pid $pid still running after {$timeout} s\n");
        return 1;
    }

    private static function alive(int $pid): bool
    {
        return PidFile::alive($pid);
    }

    private function signal(int $pid, int $signal, string $message): int
    {
        \posix_kill($pid, $signal);
        echo "$message (master pid $pid)\n";
        return 0;
    }

    private function status(string $socket, bool $json): int
    {
        $status = ControlSocket::ask($socket, 'status', 5.0);
        if ($status === null) {
            \fwrite(\STDERR, "weft: cannot reach the master's control socket $socket\n");
            return 1;
        }
        if (!isset($status['master'])) {
            \fwrite(\STDERR, "weft: unexpected reply from the master\n");
            return 1;
        }
        if ($json) {
            echo \json_encode($status, \JSON_PRETTY_PRINT) . "\n";
            return 0;
        }
        echo self::render($status);
        return 0;
    }

    /** @param array<string, mixed> $status */
    public static function render(array $status): string
    {
        $m = $status['master'];
        $out = \sprintf(
            "Weft %s on %s — master pid %d, %s mode, %s loop, up %s, %d worker restart(s), master RSS %s\n\n",
            $m['state'], $m['address'], $m['pid'], $m['mode'], $m['loop'], self::duration($m['uptime']), $m['restarts'], self::bytes($m['rss']),
        );
        $out .= \Weft\Hook\WorkerHooks::render($status['workers']);
        $out .= \sprintf("%-5s %-8s %-9s %-9s %10s %8s %10s %9s %9s\n", 'slot', 'pid', 'state', 'uptime', 'requests', 'conns', 'coroutines', 'memory', 'rss');
        foreach ($status['workers'] as $w) {
            $out .= \sprintf(
                "%-5s %-8d %-9s %-9s %10d %8d %10d %9s %9s\n",
                $w['slot'], $w['pid'], $w['state'], self::duration($w['uptime']), $w['requests'] ?? 0, $w['connections'] ?? 0,
                $w['coroutines'] ?? 0, self::bytes($w['memory'] ?? 0), self::bytes($w['rss'] ?? 0),
            );
        }
        // The oldest requests each worker runs, as of its last report: where a slow or stuck one shows.
        $now = \microtime(true);
        foreach ($status['workers'] as $w) {
            if (isset($w['app_instances'])) {
                // A framework app through a bridge: instances boot as the load needs them (--app-instances is the most).
                $out .= \sprintf("  worker %s has booted %d framework instance(s)\n", $w['slot'], (int) $w['app_instances']);
            }
            if (\is_array($w['stuck'] ?? null)) {
                $out .= \sprintf("  worker %s is stuck in %s (silent for %.1f s)\n", $w['slot'], $w['stuck']['request'] ?? 'an unknown request', (float) ($w['stuck']['silent'] ?? 0));
            }
            foreach (\is_array($w['running'] ?? null) ? $w['running'] : [] as $request) {
                if (\is_array($request) && isset($request['request'], $request['since'])) {
                    $out .= \sprintf("  worker %s runs %s for %.1f s\n", $w['slot'], $request['request'], \max(0.0, $now - (float) $request['since']));
                }
            }
        }
        return $out;
    }

    private static function duration(float $seconds): string
    {
        return match (true) {
            $seconds < 60 => \round($seconds) . 's',
            $seconds < 3600 => \floor($seconds / 60) . 'm' . ((int) $seconds % 60) . 's',
            default => \floor($seconds / 3600) . 'h' . \floor(((int) $seconds % 3600) / 60) . 'm',
        };
    }

    private static function bytes(int|float $bytes): string
    {
        return $bytes >= 1048576 ? \round($bytes / 1048576, 1) . 'M' : \round($bytes / 1024) . 'K';
    }
}
