<?php

declare(strict_types=1);

namespace Weft\Cli;

/** `bin/weft stop|reload|status`: finds the master by its pid file and signals or asks it. */
final class ControlCommand
{
    public function __construct(private readonly string $command)
    {
    }

    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(string $command): array
    {
        $spec = [
            'pid-file' => ['string', null, 'pid file of the server (default: <tmp>/weft-PORT.pid)'],
            'port' => ['int', 8080, 'port of the server, to find its default pid file'],
            'config' => ['string', null, "the server's configuration file, to find its pid file (also WEFT_CONFIG, WEFT_PID_FILE, WEFT_PORT)"],
            'help' => ['bool', false, 'show this help'],
        ];
        if ($command === 'stop') {
            $spec['timeout'] = ['float', 30.0, 'seconds to wait for the server to exit'];
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
        // Found as `serve` would place it: --pid-file / --port here, then WEFT_* and the configuration file.
        $pidFile = Config\Configuration::pidFileOf($args);
        $pid = (int) @\file_get_contents($pidFile);
        if ($pid <= 0 || !self::alive($pid)) {
            \fwrite(\STDERR, "weft: no running server found (pid file $pidFile)\n");
            return 1;
        }
        return match ($this->command) {
            'stop' => $this->stop($pid, $options->get('timeout')),
            'reload' => $this->signal($pid, \SIGUSR1, 'reload requested: new workers start, old ones drain'),
            'status' => $this->status($pidFile . '.sock', $options->get('json')),
        };
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

    /** A zombie (exited, not yet reaped by its parent) still answers kill(0): it counts as gone. */
    private static function alive(int $pid): bool
    {
        if (!@\posix_kill($pid, 0)) {
            return false;
        }
        $stat = @\file_get_contents("/proc/$pid/stat");
        if ($stat === false) {
            return true;
        }
        $state = \substr($stat, (int) \strrpos($stat, ')') + 2, 1);
        return $state !== 'Z';
    }

    private function signal(int $pid, int $signal, string $message): int
    {
        \posix_kill($pid, $signal);
        echo "$message (master pid $pid)\n";
        return 0;
    }

    private function status(string $socket, bool $json): int
    {
        $client = @\stream_socket_client('unix://' . $socket, $errno, $error, 5.0);
        if ($client === false) {
            \fwrite(\STDERR, "weft: cannot reach the master's control socket $socket: $error\n");
            return 1;
        }
        \stream_set_timeout($client, 5);
        \fwrite($client, "status\n");
        $reply = \stream_get_contents($client);
        \fclose($client);
        $status = \json_decode((string) $reply, true);
        if (!\is_array($status) || !isset($status['master'])) {
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
        $out .= \sprintf("%-5s %-8s %-9s %-9s %10s %8s %10s %9s %9s\n", 'slot', 'pid', 'state', 'uptime', 'requests', 'conns', 'coroutines', 'memory', 'rss');
        foreach ($status['workers'] as $w) {
            $out .= \sprintf(
                "%-5s %-8d %-9s %-9s %10d %8d %10d %9s %9s\n",
                $w['slot'], $w['pid'], $w['state'], self::duration($w['uptime']), $w['requests'] ?? 0, $w['connections'] ?? 0,
                $w['coroutines'] ?? 0, self::bytes($w['memory'] ?? 0), self::bytes($w['rss'] ?? 0),
            );
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
