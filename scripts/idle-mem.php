<?php
// What an idle keep-alive HTTP connection holds in PHP's own accounting (memory_get_usage()): N
// connections over socket pairs, added through the real Connections / HttpProtocol / Dispatcher, each
// sends one request and reads its answer; then the memory the server side holds per connection.
// Deterministic (no other process): compare builds step by step. The client side reads with
// stream_socket_recvfrom(), which allocates no per-stream read buffer, and its sockets are made before
// the baseline is taken.
//
//   php -d extension=ext/modules/weft.so scripts/idle-mem.php [N] [LOOP]       (WEFT_NATIVE_HTTP=0: the PHP path)
//   php scripts/idle-mem.php 400 select                                           (no extension: under 1024 descriptors)
declare(strict_types=1);

require dirname(__DIR__) . '/vendor/autoload.php';

use Psr\Log\NullLogger;
use Weft\Http\Server\HttpProtocol;
use Weft\Loop\Loop;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;

$n = (int) ($argv[1] ?? 2000);
$driver = Loop::reset($argv[2] ?? 'epoll');
$app = require dirname(__DIR__) . '/examples/hello.php';
$logger = new NullLogger();
$connections = new Connections(new HttpProtocol($app, $logger), new Dispatcher($driver, $logger), $driver, $logger, 100000);
$request = "GET / HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n";

$pairs = static function (int $count): array {
    $pairs = [];
    for ($i = 0; $i < $count; $i++) {
        $pairs[] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    }
    return $pairs;
};
$serve = static function (array $pairs) use ($connections, $driver, $request): void {
    $answered = 0;
    foreach ($pairs as [$server, $client]) {
        stream_set_blocking($client, false);
        // One literal for every peer: a real worker also holds each peer's own address string (~40 B).
        $connections->add($server, '127.0.0.1:5000');
        fwrite($client, $request);
    }
    foreach ($pairs as [$server, $client]) {
        $driver->onReadable($client, static function (string $id) use ($client, $driver, &$answered, $pairs): void {
            $data = stream_socket_recvfrom($client, 65536);
            if ($data !== '' && $data !== false) {
                $driver->cancel($id);
                if (++$answered === count($pairs)) {
                    $driver->stop();
                }
            }
        });
    }
    $driver->run();
};
// Warm up: one connection through a whole request, so that every class and static is loaded before the baseline.
$serve($pairs(1));
$pairs = $pairs($n);
gc_collect_cycles();
$before = memory_get_usage();
$serve($pairs);
gc_collect_cycles();
$after = memory_get_usage();
$path = !class_exists(Weft\Ext\Conn::class, false) ? 'no extension' : (getenv('WEFT_NATIVE_HTTP') === '0' ? 'WEFT_NATIVE_HTTP=0' : 'extension');
printf("%s %d idle connections: %d B each (%s)\n", $driver->name(), $n, intdiv($after - $before, $n), $path);
