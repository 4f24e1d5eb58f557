<?php
// The floor of a PHP line-echo server: Weft's own epoll loop with bare callbacks that accept, read, and
// write back every complete line. No codec, no limits, no timeouts, no coroutine. Used by
// scripts/floor.sh; prints READY when listening.
//
//   php -d extension=ext/modules/weft.so scripts/floor/line.php PORT
declare(strict_types=1);

require dirname(__DIR__, 2) . '/vendor/autoload.php';

use Weft\Loop\Loop;

$driver = Loop::reset('epoll');
$server = stream_socket_server('tcp://127.0.0.1:' . (int) ($argv[1] ?? 18778), $errno, $error) ?: exit("listen: $error\n");
stream_set_blocking($server, false);
$driver->onReadable($server, static function () use ($server, $driver): void {
    while ($client = @stream_socket_accept($server, 0)) {
        stream_set_blocking($client, false);
        $buffer = '';
        $driver->onReadable($client, static function (string $id) use ($client, $driver, &$buffer): void {
            $data = fread($client, 65536);
            if ($data === '' || $data === false) {
                $driver->cancel($id);
                fclose($client);
                return;
            }
            $buffer .= $data;
            $end = strrpos($buffer, "\n");
            if ($end !== false) {
                @fwrite($client, substr($buffer, 0, $end + 1));
                $buffer = substr($buffer, $end + 1);
            }
        });
    }
});
echo "READY\n";
$driver->run();
