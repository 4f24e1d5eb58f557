<?php

// Clients that ask for much and never read, against one worker: does it stay alive, within its memory,
// and how long does a bystander wait? Starts its own `bin/weft serve` (one worker, default options) on
// a free port with a throwaway document root, and stops it at the end. Bounded in time and count.
//
//   php scripts/hoarders.php [--case static|app|stream|pipeline|small|cpu] [--settle S] [--samples N] [--timeline] [--clients N] [--weft DIR] [--ext]
//
//   static    N clients GET a 1 GiB file (sparse) and never read
//   app       N clients GET an 8 MB answer the application builds whole, and never read
//   stream    N clients GET a 64 MB streamed answer, and never read
//   pipeline  N clients pipeline 64 requests for 256 KB answers each, and never read
//   small     N clients GET a 2-byte answer and never read it (a baseline: a burst of N requests)
//   cpu       one 50 MB string body to a slow reader, then to a fast one: the worker's CPU time for each
//
// --weft DIR runs DIR/bin/weft (another checkout, e.g. main, for a before/after); --ext loads the
// native extension built in this checkout.

declare(strict_types=1);

$options = getopt('', ['case:', 'clients:', 'weft:', 'ext', 'settle:', 'lines:', 'width:', 'samples:', 'timeline']);
$case = $options['case'] ?? 'static';
$clients = (int) ($options['clients'] ?? 1000);
$weft = $options['weft'] ?? dirname(__DIR__);
$settle = (float) ($options['settle'] ?? 3.0);
$php = [PHP_BINARY];
if (isset($options['ext'])) {
    $php[] = '-d';
    $php[] = 'extension=' . dirname(__DIR__) . '/ext/modules/weft.so';
}

$base = sys_get_temp_dir() . '/weft-hoarders-' . bin2hex(random_bytes(4));
mkdir("$base/www", 0755, true);
file_put_contents("$base/www/hello.txt", "hello\n");
// The application from here, run by the checkout asked for: bin/weft takes the autoloader of the
// working directory when the application's own directories have none.
copy(dirname(__DIR__) . '/tests/Integration/fixtures/output-app.php', "$base/output-app.php");
$big = fopen("$base/www/big.bin", 'wb');
ftruncate($big, 1 << 30);
fclose($big);

$command = array_merge(['setsid'], $php, [
    "$weft/bin/weft", 'serve', "$base/output-app.php",
    '--workers', '1', '--port', '0', '--static', "$base/www", '--pid-file', "$base/weft.pid", '--log-file', "$base/weft.log",
]);
$server = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', "$base/stderr", 'w']], $pipes, $weft);
$port = null;
$deadline = microtime(true) + 20;
$out = '';
while ($port === null && microtime(true) < $deadline) {
    $read = [$pipes[1]];
    $w = $e = null;
    if (@stream_select($read, $w, $e, 0, 100_000)) {
        $out .= (string) fread($pipes[1], 4096);
    }
    if (preg_match('/^READY (\d+)$/m', $out, $m)) {
        $port = (int) $m[1];
    }
}
$stop = static function () use ($server, $base): void {
    $pid = proc_get_status($server)['pid'];
    @posix_kill(-$pid, SIGKILL);
    proc_close($server);
    exec('rm -rf ' . escapeshellarg($base));
};
if ($port === null) {
    fwrite(STDERR, "the server did not start:\n" . @file_get_contents("$base/stderr") . @file_get_contents("$base/weft.log"));
    $stop();
    exit(1);
}

/** One request on a fresh connection: [status line, seconds]. */
$request = static function (string $path) use ($port): array {
    $start = hrtime(true);
    $socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5);
    if ($socket === false) {
        return ["connect failed: $error", (hrtime(true) - $start) / 1e9];
    }
    stream_set_timeout($socket, 5);
    fwrite($socket, "GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    $response = (string) stream_get_contents($socket);
    fclose($socket);
    return [strtok($response, "\r\n") ?: 'no answer', (hrtime(true) - $start) / 1e9];
};
$figures = static function () use ($request, $port): ?array {
    $socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5);
    if ($socket === false) {
        return null;
    }
    stream_set_timeout($socket, 5);
    fwrite($socket, "GET /figures HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    $response = (string) stream_get_contents($socket);
    return json_decode(substr($response, (int) strpos($response, "\r\n\r\n") + 4), true);
};
$rss = static fn (int $pid): int => preg_match('/VmRSS:\s+(\d+) kB/', (string) @file_get_contents("/proc/$pid/status"), $m) ? (int) $m[1] * 1024 : 0;
$cpu = static function (int $pid): float {
    $fields = explode(' ', substr((string) @file_get_contents("/proc/$pid/stat"), strrpos((string) @file_get_contents("/proc/$pid/stat"), ')') + 2));
    return ((int) ($fields[11] ?? 0) + (int) ($fields[12] ?? 0)) / 100;
};

$worker = $figures()['pid'];
printf("server on port %d, worker pid %d, case %s\n", $port, $worker, $case);

if ($case === 'cpu') {
    foreach (['slow' => true, 'fast' => false] as $name => $slow) {
        $socket = socket_create(AF_INET, SOCK_STREAM, SOL_TCP);
        if ($slow) {
            socket_set_option($socket, SOL_SOCKET, SO_RCVBUF, 16384);
        }
        socket_connect($socket, '127.0.0.1', $port);
        $before = $cpu($worker);
        $start = hrtime(true);
        socket_write($socket, "GET /big?mb=50 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $bytes = 0;
        while (($chunk = socket_read($socket, $slow ? 16384 : 1 << 20)) !== false && $chunk !== '') {
            $bytes += strlen($chunk);
            if ($slow) {
                usleep(200);
            }
        }
        socket_close($socket);
        printf("%s reader: %d bytes in %.2f s, worker CPU %.2f s\n", $name, $bytes, (hrtime(true) - $start) / 1e9, $cpu($worker) - $before);
    }
    $stop();
    exit(0);
}

// A keep-alive bystander, connected before the crowd.
$keepAlive = stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5);
stream_set_timeout($keepAlive, 5);
fwrite($keepAlive, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
fread($keepAlive, 4096);

$ask = match ($case) {
    'static' => "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n",
    'app' => "GET /big?mb=8 HTTP/1.1\r\nHost: x\r\n\r\n",
    'stream' => "GET /stream?mb=64 HTTP/1.1\r\nHost: x\r\n\r\n",
    'pipeline' => str_repeat("GET /big?kb=256 HTTP/1.1\r\nHost: x\r\n\r\n", 64),
    'small' => "GET /small HTTP/1.1\r\nHost: x\r\n\r\n",
    default => throw new InvalidArgumentException("unknown case $case"),
};
$crowd = [];
$start = microtime(true);
for ($i = 0; $i < $clients; $i++) {
    $socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5);
    if ($socket === false) {
        printf("client %d: connect failed: %s\n", $i, $error);
        break;
    }
    fwrite($socket, $ask);
    $crowd[] = $socket;   // never read
}
printf("%d clients connected and asked in %.2f s\n", count($crowd), microtime(true) - $start);

$peakRss = 0;
$until = microtime(true) + $settle;
while (microtime(true) < $until) {
    $peakRss = max($peakRss, $rss($worker));
    usleep(50_000);
}
$alive = file_exists("/proc/$worker");
$latencies = [];
$statuses = [];
$samples = (int) ($options['samples'] ?? 20);
$timeline = [];
for ($i = 0; $i < $samples; $i++) {
    [$status, $seconds] = $request($i % 2 === 0 ? '/small' : '/hello.txt');
    $latencies[] = $seconds;
    $timeline[] = sprintf('%.2fs:%.0fms', microtime(true) - $start, $seconds * 1000);
    $statuses[$status] = ($statuses[$status] ?? 0) + 1;
    $peakRss = max($peakRss, $rss($worker));
}
fwrite($keepAlive, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
$kept = (string) fread($keepAlive, 4096);
$now = $figures();
if (isset($options['timeline'])) {
    echo 'timeline (since the crowd started: latency): ', implode(' ', $timeline), "\n";
}
sort($latencies);
printf("worker %d %s; peak RSS %.1f MB; PHP memory now %.1f MB, peak %.1f MB\n", $worker, $alive && ($now['pid'] ?? 0) === $worker ? 'alive' : 'GONE (replaced)', $peakRss / 1048576, ($now['memory'] ?? 0) / 1048576, ($now['peak'] ?? 0) / 1048576);
printf("bystander (%d requests): %s; median %.1f ms, p90 %.1f ms, max %.1f ms\n", $samples, json_encode($statuses), $latencies[intdiv($samples, 2)] * 1000, $latencies[(int) ($samples * 0.9)] * 1000, end($latencies) * 1000);
printf("keep-alive bystander connected before: %s\n", $kept === '' ? 'cut' : strtok($kept, "\r\n"));
$log = (string) @file_get_contents("$base/weft.log");
foreach (['Fatal error' => 'fatal errors', 'Closed ' => 'closing lines', 'worker exited' => 'worker exits'] as $needle => $what) {
    printf("log: %d %s\n", substr_count($log, $needle), $what);
}
if (preg_match_all('/^.*(Fatal error|Closed \d+ connection).*$/m', $log, $m)) {
    foreach (array_slice($m[0], 0, (int) ($options['lines'] ?? 1)) as $line) {
        echo 'log: ', mb_strimwidth($line, 0, (int) ($options['width'] ?? 400), '...'), "\n";
    }
}
foreach ($crowd as $socket) {
    fclose($socket);
}
$stop();
