<?php
// The server's line-protocol path in one process, without a load client or TCP: N connections over
// socket pairs, each sending "hello world\n" and its next line only when the echo arrived (lock-step),
// through the real Connections / Connection / LineSession / Dispatcher / Scheduler / loop and the
// checkout's examples/echo-line.php. Prints the process's CPU time per message (the client side
// included: compare builds, not absolute figures) after WARM_UP messages. Deterministic under callgrind:
// instructions per message = (run of M2 - run of M1) / (M2 - M1), see scripts/ir-line.sh.
//
//   php -d extension=ext/modules/weft.so -d opcache.enable_cli=1 -d opcache.jit=tracing \
//       -d opcache.jit_buffer_size=64M scripts/inproc-line.php [CHECKOUT] [LOOP] [CONNS] [MESSAGES]
//
// CHECKOUT (default: this one) is the source tree to load Weft from (its classes, src/functions.php and
// examples/echo-line.php), so two builds run the same work with the same harness: any build whose
// LineProtocol, Connections and Dispatcher take (app, logger) / (protocol, dispatcher, driver, logger,
// max) / (driver, logger), 69a4a1c or later. LOOP: epoll (the native loop) or select. FLOOR=1 replaces
// the server by a bare read-and-echo callback on the same loop (the client's and the loop's share).
declare(strict_types=1);

$root = (require __DIR__ . '/checkout.php')($argv[1] ?? null);

use Psr\Log\NullLogger;
use Weft\Line\LineProtocol;
use Weft\Loop\Loop;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;

$loopName = $argv[2] ?? 'epoll';
$conns = (int) ($argv[3] ?? 1000);
$total = (int) ($argv[4] ?? 150000);
const WARM_UP = 20000;
const MESSAGE = "hello world\n";

$driver = Loop::reset($loopName);
$app = require $root . '/examples/echo-line.php';
$logger = new NullLogger();
$protocol = new LineProtocol($app, $logger);
$connections = new Connections($protocol, new Dispatcher($driver, $logger), $driver, $logger, 100000);

$done = 0;
$start = null;
$wrong = 0;
for ($i = 0; $i < $conns; $i++) {
    [$server, $client] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    stream_set_blocking($client, false);
    if (getenv('FLOOR')) {
        // What the loop, the kernel and the client cost alone: a bare read-and-echo callback as the server.
        stream_set_blocking($server, false);
        $driver->onReadable($server, static function () use ($server): void {
            $data = fread($server, 65536);
            if ($data !== '' && $data !== false) {
                fwrite($server, $data);
            }
        });
    } else {
        $connections->add($server, '127.0.0.1:5000');
    }
    $driver->onReadable($client, static function () use ($client, &$done, &$start, &$wrong, $total, $driver): void {
        $data = fread($client, 65536);
        if ($data === '' || $data === false) {
            return;
        }
        if ($data !== MESSAGE) {
            $wrong++; // the echo is the line and its ending, whole (one line in flight per connection)
        }
        if (++$done === WARM_UP) {
            $start = getrusage();
        }
        if ($done >= $total) {
            $driver->stop();
            return;
        }
        fwrite($client, MESSAGE);
    });
    fwrite($client, MESSAGE);
}
$driver->run();
$end = getrusage();
$cpu = static fn (array $r, string $kind): float => $r["ru_{$kind}time.tv_sec"] * 1e6 + $r["ru_{$kind}time.tv_usec"];
$n = $total - WARM_UP;
printf(
    "%s c=%d line echo: %.2f us/msg (user %.2f)%s\n",
    $loopName,
    $conns,
    ($cpu($end, 'u') + $cpu($end, 's') - $cpu($start, 'u') - $cpu($start, 's')) / $n,
    ($cpu($end, 'u') - $cpu($start, 'u')) / $n,
    $wrong > 0 ? " ($wrong wrong echoes)" : '',
);
