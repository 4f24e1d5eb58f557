<?php
// The keep-alive client of scripts/tls-ir.sh: CONNS connections, each with one request in flight, opened
// (and their TLS handshakes done) and warmed up before the server's counters are zeroed, so the measured
// span holds requests only. Zeroes and dumps the callgrind counters of PIDS itself around that span.
//
//   php scripts/tls-ir-client.php SCHEME PORT CONNS WARM REQUESTS PIDS...
// TLS12=1 offers TLS 1.2 only. Prints "requests=N seconds=S" (the measured span's wall time).
declare(strict_types=1);

[, $scheme, $port, $conns, $warm, $total] = $argv;
$pids = array_slice($argv, 6);
$ssl = ['verify_peer' => false, 'verify_peer_name' => false];
if (getenv('TLS12') === '1') {
    $ssl['crypto_method'] = STREAM_CRYPTO_METHOD_TLSv1_2_CLIENT;
}
$context = stream_context_create(['ssl' => $ssl]);
$request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
$sockets = [];
for ($i = 0; $i < (int) $conns; $i++) {
    $socket = stream_socket_client(($scheme === 'https' ? 'tls' : 'tcp') . "://127.0.0.1:$port", $errno, $message, 60, STREAM_CLIENT_CONNECT, $context);
    if ($socket === false) {
        fwrite(STDERR, "connect: $message\n");
        exit(1);
    }
    $sockets[$i] = $socket;
}

/** @param array<int, resource> $sockets */
function load(array $sockets, string $request, int $count): void
{
    $send = static function ($socket) use ($request): void {
        stream_set_blocking($socket, true);
        fwrite($socket, $request);
        stream_set_blocking($socket, false);
    };
    $buffers = [];
    $sent = 0;
    foreach ($sockets as $i => $socket) {
        $send($socket);
        $sent++;
        $buffers[$i] = '';
    }
    for ($done = 0; $done < $count;) {
        $read = $sockets;
        $none = null;
        if (stream_select($read, $none, $none, 60) < 1) {
            fwrite(STDERR, "no answer in 60 s\n");
            exit(1);
        }
        foreach ($read as $i => $socket) {
            $buffers[$i] .= fread($socket, 65536);
            while (($end = strpos($buffers[$i], "\r\n\r\n")) !== false
                && preg_match('/content-length: *(\d+)/i', substr($buffers[$i], 0, $end), $m) === 1
                && strlen($buffers[$i]) >= $end + 4 + (int) $m[1]) {
                $buffers[$i] = substr($buffers[$i], $end + 4 + (int) $m[1]);
                $done++;
                if ($sent < $count) {
                    $send($socket);
                    $sent++;
                }
            }
        }
    }
}

load($sockets, $request, (int) $warm);
foreach ($pids as $pid) {
    exec('callgrind_control -z ' . (int) $pid . ' > /dev/null 2>&1');
}
$start = hrtime(true);
load($sockets, $request, (int) $total);
$seconds = (hrtime(true) - $start) / 1e9;
foreach ($pids as $pid) {
    exec('callgrind_control -d load ' . (int) $pid . ' > /dev/null 2>&1');
}
printf("requests=%d seconds=%.3f\n", (int) $total, $seconds);
