<?php
// The server's HTTP/2 request path in one process, without h2load or TCP: CONNS h2c connections (prior
// knowledge) over socket pairs through the real Connections / Connection / HttpSession (the preface) /
// Http2Session / Http2Protocol / Dispatcher / Scheduler / loop, each keeping STREAMS requests in flight
// as h2load -m10 does: the same header block each time (after the first, all indexed fields, as
// h2load's), a new batch written once the previous one's answers have all arrived. Prints the
// process's CPU time per request (the client side included: compare builds, not absolute figures)
// after WARM_UP requests. The client's frames are made up front and its parsing is a few ord() calls,
// so the server's work is nearly all that changes between builds.
//
//   php -d extension=ext/modules/weft.so -d opcache.enable_cli=1 -d opcache.jit=tracing \
//       -d opcache.jit_buffer_size=64M scripts/inproc-h2.php [CHECKOUT] [CONNS=100] [STREAMS=10] [REQUESTS=150000]
//
// Instructions per request, deterministic (scripts/ir-h2-inproc.sh runs it twice under callgrind with
// two request counts and divides the difference).
declare(strict_types=1);

$root = (require __DIR__ . '/checkout.php')($argv[1] ?? null);

use Psr\Log\NullLogger;
use Weft\Http\Server\HttpOptions;
use Weft\Http\Server\HttpProtocol;
use Weft\Http2\Hpack\Encoder;
use Weft\Http2\Http2Protocol;
use Weft\Loop\Loop;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;

$conns = (int) ($argv[2] ?? 100);
$streams = (int) ($argv[3] ?? 10);
$total = (int) ($argv[4] ?? 150000);
$warmUp = (int) (getenv('WARM_UP') ?: 20000);

$driver = Loop::reset(extension_loaded('weft') ? 'epoll' : 'select');
$app = require $root . '/examples/hello.php';
if (getenv('FIXED_DATE')) {
    // hello.php's answer with a Date of its own: under callgrind a run lasts minutes, and the Date the
    // server adds changes every second, which a real run at 80,000 requests a second sees once in
    // 80,000 (a new HPACK entry, a block encoded in full): the count would follow valgrind's speed.
    $app = static fn (Weft\Http\Message\Request $request): Weft\Http\Message\Response
        => new Weft\Http\Message\Response(200, ['Content-Type' => 'text/plain', 'Date' => 'Fri, 27 Nov 2026 08:00:00 GMT'], 'Hello World');
}
$logger = new NullLogger();
// Long timeouts: under callgrind on a busy machine a connection may wait its turn longer than 60 s.
$protocol = new HttpProtocol($app, $logger, new HttpOptions(headerTimeout: 3600.0, idleTimeout: 3600.0, sendTimeout: 3600.0, bodyTimeout: 3600.0));
$protocol->http2 = new Http2Protocol($protocol);
$connections = new Connections($protocol, new Dispatcher($driver, $logger), $driver, $logger, 100000);

$frame = static fn (int $type, int $flags, int $id, string $payload = ''): string
    => pack('CnCCN', strlen($payload) >> 16, strlen($payload) & 0xffff, $type, $flags, $id) . $payload;
// h2load's request: the same fields on every stream.
$fields = [[':method', 'GET'], [':path', '/'], [':scheme', 'http'], [':authority', '127.0.0.1:8080'], ['user-agent', 'h2load nghttp2/1.52.0']];
$client = new Encoder();
$firstBlock = $client->encode($fields);
$nextBlock = $client->encode($fields);
$hello = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    . $frame(0x4, 0, 0, pack('nN', 0x4, (1 << 30)) . pack('nN', 0x3, 100))
    . $frame(0x8, 0, 0, pack('N', (1 << 30) - 65535));

$done = 0;
$start = null;
$sent = 0;
for ($i = 0; $i < $conns; $i++) {
    [$server, $client] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    stream_set_blocking($client, false);
    $connections->add($server, '127.0.0.1:5000');
    $state = (object) ['next' => 1, 'pending' => 0, 'buffer' => '', 'first' => true];
    $batch = static function () use ($state, $streams, $frame, $firstBlock, $nextBlock, &$sent, $total): string {
        $out = '';
        for ($s = 0; $s < $streams && $sent < $total; $s++, $sent++) {
            $out .= $frame(0x1, 0x5, $state->next, $state->first ? $firstBlock : $nextBlock);
            $state->first = false;
            $state->next += 2;
            $state->pending++;
        }
        return $out;
    };
    $driver->onReadable($client, static function () use ($client, $state, $batch, $frame, &$done, &$start, $total, $warmUp, $driver): void {
        $data = fread($client, 262144);
        if ($data === '' || $data === false) {
            return;
        }
        $buffer = $state->buffer . $data;
        $at = 0;
        $length = strlen($buffer);
        $reply = '';
        while ($length - $at >= 9) {
            $size = (ord($buffer[$at]) << 16) | (ord($buffer[$at + 1]) << 8) | ord($buffer[$at + 2]);
            if ($length - $at - 9 < $size) {
                break;
            }
            $type = ord($buffer[$at + 3]);
            $flags = ord($buffer[$at + 4]);
            if ($type === 0x4 && ($flags & 1) === 0) {
                $reply .= $frame(0x4, 0x1, 0);
            } elseif (($type === 0x0 || $type === 0x1) && ($flags & 1) === 1) {
                $state->pending--;
                if (++$done === $warmUp) {
                    $start = getrusage();
                }
            } elseif ($type === 0x7 || $type === 0x3) {
                fwrite(STDERR, 'unexpected ' . ($type === 7 ? 'GOAWAY' : 'RST_STREAM') . ': ' . bin2hex(substr($buffer, $at, 9 + $size)) . "\n");
                exit(1);
            }
            $at += 9 + $size;
        }
        $state->buffer = substr($buffer, $at);
        if ($done >= $total) {
            $driver->stop();
            return;
        }
        if ($state->pending === 0) {
            $reply .= $batch();
        }
        if ($reply !== '') {
            fwrite($client, $reply);
        }
    });
    fwrite($client, $hello . $batch());
}
$driver->run();
$end = getrusage();
$cpu = static fn (array $r, string $kind): float => $r["ru_{$kind}time.tv_sec"] * 1e6 + $r["ru_{$kind}time.tv_usec"];
if ($start === null) {
    printf("h2 c=%d m=%d: %d requests\n", $conns, $streams, $done);
    exit;
}
$n = $total - $warmUp;
printf(
    "h2 c=%d m=%d: %.2f us/req (user %.2f)\n",
    $conns,
    $streams,
    ($cpu($end, 'u') + $cpu($end, 's') - $cpu($start, 'u') - $cpu($start, 's')) / $n,
    ($cpu($end, 'u') - $cpu($start, 'u')) / $n,
);
