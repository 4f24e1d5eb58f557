#!/usr/bin/env bash
# PSS per idle keep-alive connection of one worker: N connections each send one request, read the answer
# and stay open; the worker's PSS (from /proc/PID/smaps_rollup) before and after, per connection.
#
#   scripts/idle-pss.sh CHECKOUT [N] [LOOP]        e.g. scripts/idle-pss.sh /work/wt/base 5000 epoll
set -euo pipefail
DIR=$(cd "$1" && pwd); N=${2:-5000}; LOOP=${3:-epoll}
out=$(mktemp); pidfile=$(mktemp -u /tmp/weft-pss-XXXX.pid); held=$(mktemp)
(cd "$DIR" && exec php bin/weft serve examples/hello.php --workers 1 --port 0 --loop "$LOOP" --pid-file "$pidfile") > "$out" 2>&1 &
for _ in $(seq 1 100); do grep -q READY "$out" && break; sleep 0.1; done
port=$(grep -o 'READY [0-9]*' "$out" | awk '{print $2}')
master=$(cat "$pidfile"); worker=$(pgrep -P "$master")
before=$(awk '/^Pss:/{print $2}' "/proc/$worker/smaps_rollup")
ulimit -n $((N + 100))
php -r '
    [$_, $port, $n] = $argv; $conns = [];
    for ($i = 0; $i < (int) $n; $i++) {
        $s = stream_socket_client("tcp://127.0.0.1:$port", $e, $m, 5) or exit("connect: $m\n");
        fwrite($s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); $conns[] = $s;
    }
    foreach ($conns as $s) { fread($s, 4096); }
    echo "HELD ", count($conns), "\n"; sleep(8);' "$port" "$N" > "$held" &
client=$!
for _ in $(seq 1 100); do grep -q HELD "$held" && break; sleep 0.2; done
sleep 1
after=$(awk '/^Pss:/{print $2}' "/proc/$worker/smaps_rollup")
echo "$(cat "$held") PSS before=${before} kB after=${after} kB per connection=$(( (after - before) * 1024 / N )) B"
kill "$client" 2>/dev/null || true; kill -TERM "$master"; wait 2>/dev/null || true; rm -f "$out" "$held"
