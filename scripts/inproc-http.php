<?php
// The server's HTTP request path in one process, without wrk or TCP: N keep-alive connections over
// socket pairs, each sending its next request when the previous answer arrived, through the real
// Connections / Connection / HttpSession / Dispatcher / Scheduler / loop. Prints the process's CPU
// time per request (the client side included: compare builds, not absolute figures), after 20,000
// requests of warm-up. Run with the JIT and the extension, pinned, interleaving builds:
//
//   php -d extension=ext/modules/weft.so -d opcache.enable_cli=1 -d opcache.jit=tracing \
//       -d opcache.jit_buffer_size=64M scripts/inproc-http.php [CHECKOUT] [LOOP] [CONNS] [REQUESTS] [same|varied] [gzip]
//
// CHECKOUT (default: this one) is the source tree to load Weft from, so two builds can be compared with
// the same harness (any build with the connection core, cd320e4 or later). APP=sleep (an examples/ name) changes the application; FLOOR=1 replaces the server by
// a bare read-and-answer callback on the same loop (what the loop, the kernel and the client cost alone).
// EXTERNAL=1 hands the server ends to scripts/canned-responder.py, a process of its own (not counted by a
// callgrind of this one): what remains is the in-process client and the loop's share for it, the part of
// every figure of this harness that is not the server's.
declare(strict_types=1);

$root = (require __DIR__ . '/checkout.php')($argv[1] ?? null);

use Psr\Log\NullLogger;
use Weft\Http\Server\HttpProtocol;
use Weft\Loop\Loop;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;

$loopName = $argv[2] ?? 'epoll';
$conns = (int) ($argv[3] ?? 100);
$total = (int) ($argv[4] ?? 150000);
$varied = ($argv[5] ?? 'same') === 'varied';
$gzip = ($argv[6] ?? '') === 'gzip';
const WARM_UP = 20000;

$driver = Loop::reset($loopName);
$app = require $root . '/examples/' . (getenv('APP') ?: 'hello') . '.php';
if ($gzip) {
    $app = Weft\Mode\HttpLayers::wrap($app, null, new Weft\Http\Compression\GzipOptions());
}
$logger = new NullLogger();
$protocol = new HttpProtocol($app, $logger);
$connections = new Connections($protocol, new Dispatcher($driver, $logger), $driver, $logger, 100000);
$request = static fn (int $i): string => $varied
    ? "GET /path/$i/item?id=" . ($i * 7) . " HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: wrk-$i\r\nAccept: */*\r\nX-Req: " . ($i % 97) . "\r\n\r\n"
    : "GET / HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n";

$done = 0;
$start = null;
$external = [];
for ($i = 0; $i < $conns; $i++) {
    [$server, $client] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    stream_set_blocking($client, false);
    if (getenv('EXTERNAL')) {
        $external[3 + $i] = $server;
    } elseif (getenv('FLOOR')) {
        stream_set_blocking($server, false);
        $driver->onReadable($server, static function () use ($server): void {
            $data = fread($server, 65536);
            if ($data !== '' && $data !== false && str_contains($data, "\r\n\r\n")) {
                fwrite($server, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nHello World");
            }
        });
    } else {
        $connections->add($server, '127.0.0.1:5000');
    }
    $driver->onReadable($client, static function () use ($client, &$done, &$start, $total, $driver, $request): void {
        $data = fread($client, 65536);
        if ($data === '' || $data === false) {
            return;
        }
        if (++$done === WARM_UP) {
            $start = getrusage();
        }
        if ($done >= $total) {
            $driver->stop();
            return;
        }
        fwrite($client, $request($done));
    });
    fwrite($client, $request($i));
}
if ($external !== []) {
    $responder = proc_open(['python3', __DIR__ . '/canned-responder.py', (string) $conns], $external + [0 => ['file', '/dev/null', 'r']], $pipes);
    foreach ($external as $server) {
        fclose($server); // the responder's now: the harness keeps only the client ends
    }
}
$driver->run();
$end = getrusage();
$cpu = static fn (array $r, string $kind): float => $r["ru_{$kind}time.tv_sec"] * 1e6 + $r["ru_{$kind}time.tv_usec"];
$n = $total - WARM_UP;
printf(
    "%s c=%d %s%s: %.2f us/req (user %.2f)\n",
    $loopName,
    $conns,
    $varied ? 'varied' : 'same',
    $gzip ? ' gzip' : '',
    ($cpu($end, 'u') + $cpu($end, 's') - $cpu($start, 'u') - $cpu($start, 's')) / $n,
    ($cpu($end, 'u') - $cpu($start, 'u')) / $n,
);
