<?php

// A slow upstream: answers every HTTP request with 200 "ok" after a delay (or ?delay=SECONDS).
//
//   php examples/delay-server.php [--port 9501] [--delay 1] [--host 127.0.0.1]
//
// Prints "READY <port>" once it listens (--port 0 picks a free port). Stops on SIGINT/SIGTERM.

declare(strict_types=1);

use Weft\Client\Http\DelayServer;

require \dirname(__DIR__) . '/vendor/autoload.php';

$options = \getopt('', ['port:', 'delay:', 'host:']);
$host = \is_string($options['host'] ?? null) ? $options['host'] : '127.0.0.1';
$port = \is_string($options['port'] ?? null) ? (int) $options['port'] : 9501;
$delay = \is_string($options['delay'] ?? null) ? (float) $options['delay'] : 1.0;

\Weft\run(static function () use ($host, $port, $delay): void {
    $server = DelayServer::listen(\sprintf(\str_contains($host, ':') ? '[%s]:%d' : '%s:%d', $host, $port), $delay);
    if (\function_exists('pcntl_signal')) {
        $driver = \Weft\Loop\Loop::get();
        foreach ([\SIGINT, \SIGTERM] as $signal) {
            // Unreferenced: the watchers alone must not keep the loop running after stop().
            $driver->unreference($driver->onSignal($signal, static fn () => $server->stop()));
        }
    }
    \fwrite(\STDOUT, 'READY ' . $server->port() . "\n");
    \fflush(\STDOUT);
    $server->run();
});
