<?php
// The floor of a PHP HTTP server on this machine: Weft's own epoll loop with bare callbacks that accept,
// read, and answer a canned "Hello World" once a head has ended. No parsing, no limits, no timeouts, no
// request or response objects, no coroutine: what any PHP server pays for the kernel and the loop alone.
// MODE=hello answers at once; MODE=timer answers from a 10 ms timer callback; MODE=fiber answers from a
// pooled Fiber per request that suspends until a 10 ms timer resumes it (the least a Fiber-based server
// can do for a request that sleeps). Used by scripts/floor.sh; prints READY when listening.
//
//   php -d extension=ext/modules/weft.so scripts/floor/http.php PORT
declare(strict_types=1);

require dirname(__DIR__, 2) . '/vendor/autoload.php';

use Weft\Loop\Loop;

$driver = Loop::reset('epoll');
$mode = getenv('MODE') ?: 'hello';
$server = stream_socket_server('tcp://127.0.0.1:' . (int) ($argv[1] ?? 18777), $errno, $error) ?: exit("listen: $error\n");
stream_set_blocking($server, false);
$answer = static function ($client): void {
    if (is_resource($client)) {
        @fwrite($client, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: " . gmdate('D, d M Y H:i:s') . " GMT\r\nContent-Length: 11\r\n\r\nHello World");
    }
};
$pool = [];
$body = static function () use ($driver, $answer, &$pool): void {
    $client = Fiber::suspend();
    while (true) {
        $fiber = Fiber::getCurrent();
        $driver->delay(0.01, static fn () => $fiber->resume());
        Fiber::suspend();
        $answer($client);
        $pool[] = $fiber;
        $client = Fiber::suspend();
    }
};
$driver->onReadable($server, static function () use ($server, $driver, $mode, $answer, $body, &$pool): void {
    while ($client = @stream_socket_accept($server, 0)) {
        stream_set_blocking($client, false);
        $driver->onReadable($client, static function (string $id) use ($client, $driver, $mode, $answer, $body, &$pool): void {
            $data = fread($client, 65536);
            if ($data === '' || $data === false) {
                $driver->cancel($id);
                fclose($client);
                return;
            }
            if (!str_contains($data, "\r\n\r\n")) {
                return;
            }
            if ($mode === 'hello') {
                $answer($client);
            } elseif ($mode === 'timer') {
                $driver->delay(0.01, static fn () => $answer($client));
            } else {
                if (($fiber = array_pop($pool)) === null) {
                    $fiber = new Fiber($body);
                    $fiber->start();
                }
                $fiber->resume($client);
            }
        });
    }
});
echo "READY\n";
$driver->run();
