#!/usr/bin/env bash
# PHP memory (memory_get_usage(), after gc_collect_cycles()) per idle WebSocket of one worker serving a
# WebSocket example: N clients open one after the other (a burst would leave Fibers in the worker's
# pool) with a minimal handshake; the worker's memory before, once all are open, and again once each has
# sent one message and read its echo. The example is wrapped in an app of its own that answers GET /mem
# (the example is loaded unchanged and serves every other request).
#
#   scripts/ws-idle-memory.sh CHECKOUT [N] [EXAMPLE] [LOOP]
#   e.g. scripts/ws-idle-memory.sh . 2000 websocket-echo.php epoll
set -euo pipefail
DIR=$(cd "$1" && pwd); N=${2:-2000}; EXAMPLE=${3:-websocket-echo.php}; LOOP=${4:-epoll}
tmp=$(mktemp -d /tmp/weft-wsmem-XXXX); out="$tmp/server.log"; pidfile="$tmp/weft.pid"
cat > "$tmp/app.php" <<PHP
<?php
declare(strict_types=1);
\$example = require '$DIR/examples/$EXAMPLE';
return static fn (Weft\Http\Message\Request \$request): Weft\Http\Message\Response => \$request->path() === '/mem'
    ? Weft\Http\Message\Response::json(['memory' => gc_collect_cycles() >= 0 ? memory_get_usage() : 0])
    : \$example(\$request);
PHP
: > "$out"
cleanup() { [ -f "$pidfile" ] && kill -TERM "$(cat "$pidfile")" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
(cd "$DIR" && exec php bin/weft serve "$tmp/app.php" --workers 1 --port 0 --loop "$LOOP" --pid-file "$pidfile") > "$out" 2>&1 &
for _ in $(seq 1 100); do grep -q READY "$out" && break; sleep 0.1; done
port=$(grep -o 'READY [0-9]*' "$out" | awk '{print $2}')
ulimit -n $((N + 100))
php -r '
    [$_, $dir, $port, $n] = $argv;
    require "$dir/vendor/autoload.php";
    $mem = static function () use ($port): int {
        $body = file_get_contents("http://127.0.0.1:$port/mem") or exit("GET /mem failed\n");
        return json_decode($body, true)["memory"];
    };
    $before = $mem(); $conns = [];
    for ($i = 0; $i < (int) $n; $i++) {
        $s = stream_socket_client("tcp://127.0.0.1:$port", $e, $m, 5) or exit("connect: $m\n");
        fwrite($s, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
            . base64_encode(random_bytes(16)) . "\r\nSec-WebSocket-Version: 13\r\n\r\n");
        $head = "";
        while (!str_contains($head, "\r\n\r\n") && ($chunk = fread($s, 1024)) !== false && $chunk !== "") { $head .= $chunk; }
        str_starts_with($head, "HTTP/1.1 101") or exit("connection $i: " . strtok($head, "\r") . "\n");
        $conns[] = $s;
    }
    $open = $mem();
    foreach ($conns as $i => $s) { fwrite($s, Weft\WebSocket\Frame::encodeMasked(Weft\WebSocket\Frame::TEXT, "m$i")); }
    foreach ($conns as $i => $s) { $echo = fread($s, 64); substr($echo, 2) === "m$i" or exit("connection $i: no echo\n"); }
    $after = $mem();
    printf("%d idle WebSockets: %d B before, %d B open (%.0f B each), %d B after one echo each (%.0f B each)\n",
        $n, $before, $open, ($open - $before) / $n, $after, ($after - $before) / $n);
' "$DIR" "$port" "$N"
