#!/usr/bin/env bash
# Instructions per keep-alive request over TLS and over plain HTTP/1.1 (callgrind: deterministic where
# CPU time on a shared machine is not), and what of the TLS one OpenSSL runs (inclusive SSL_read() and
# SSL_write() and the error-queue checks around them).
#
#   bash scripts/tls-ir.sh [REQUESTS=2000] [CONNS=10]
#
# Each server (`bin/weft serve examples/hello.php --workers 1 --loop epoll`, opcache on, JIT off, the
# extension) runs under callgrind. The client (scripts/tls-ir-client.php) opens CONNS keep-alive
# connections and warms them up first, so no handshake falls into the measured span; the worker's idle
# cost (timers, the watchdog thread: measured for 3 s before, per second) is taken out of the span in
# proportion to its wall time. KEEP=DIR keeps the dumps there (callgrind_annotate them); TLS12=1 makes the
# client offer TLS 1.2 only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUESTS="${1:-2000}"
CONNS="${2:-10}"
for tool in valgrind callgrind_control callgrind_annotate openssl ss; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
DIR="${KEEP:-$(mktemp -d /tmp/weft-tls-ir.XXXXXX)}"
mkdir -p "$DIR"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$DIR/key.pem" -out "$DIR/cert.pem" -days 2 \
    -subj "/CN=localhost" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
free_port() { php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);'; }
summary() { grep -m1 '^summary:' "$1" | awk '{print $2}'; }

measure() { # NAME SCHEME [SERVER ARGS...] -> "instructions-per-request openssl-per-request"
    local name="$1" scheme="$2"; shift 2
    local port out vg pids worker idle load seconds ssl
    port="$(free_port)"
    out="$DIR/$name.out"
    rm -f "$DIR/cg.$name".*
    WEFT_NO_REEXEC=1 valgrind --tool=callgrind --smc-check=all --trace-children=yes \
        --callgrind-out-file="$DIR/cg.$name.%p" \
        php -d opcache.enable_cli=1 -d extension="$ROOT/ext/modules/weft.so" "$ROOT/bin/weft" serve \
        "$ROOT/examples/hello.php" --workers 1 --loop epoll --port "$port" "$@" >"$out" 2>&1 &
    vg=$!
    for _ in $(seq 1 300); do grep -q '^READY' "$out" && break; sleep 0.2; done
    grep -q '^READY' "$out" || { echo "no READY from the $name server:" >&2; cat "$out" >&2; kill "$vg"; exit 1; }
    sleep 1
    pids="$(ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)"
    worker="$(for p in $pids; do [ "$p" != "$vg" ] && echo "$p"; done | tail -1)"
    callgrind_control -z "$worker" >/dev/null
    sleep 3
    callgrind_control -d idle "$worker" >/dev/null
    seconds="$(php "$ROOT/scripts/tls-ir-client.php" "$scheme" "$port" "$CONNS" 500 "$REQUESTS" "$worker" | sed -n 's/.*seconds=//p')"
    sleep 1
    kill -TERM $pids 2>/dev/null || true
    wait "$vg" 2>/dev/null || true
    idle="$(summary "$(grep -l 'Trigger: dump idle' "$DIR/cg.$name.$worker".* | head -1)")"
    local dump
    dump="$(grep -l 'Trigger: dump load' "$DIR/cg.$name.$worker".* | head -1)"
    load="$(summary "$dump")"
    ssl="$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$dump" 2>/dev/null \
        | awk '/:(SSL_read|SSL_write|ERR_peek_error) \[/ {gsub(",", "", $1); s += $1} END {print s + 0}')"
    # idle: counted over the 3 s between zeroing and its dump, taken out at that rate over the span
    awk -v total="$load" -v quiet="$idle" -v s="$seconds" -v n="$REQUESTS" -v openssl="$ssl" \
        'BEGIN {printf "%d %d %d %s\n", (total - quiet / 3 * s) / n, openssl / n, quiet / 3, s}'
}

read -r plain _ plain_idle plain_s <<<"$(measure plain http)"
read -r tls tls_ssl tls_idle tls_s <<<"$(measure tls https --tls-cert "$DIR/cert.pem" --tls-key "$DIR/key.pem")"
echo "idle: plain $plain_idle, TLS $tls_idle instructions a second; measured spans ${plain_s} s and ${tls_s} s"
echo "instructions per keep-alive request ($REQUESTS requests, $CONNS connections, idle taken out):"
echo "  plain HTTP/1.1  $plain"
echo "  TLS             $tls  (of which OpenSSL's SSL_read + SSL_write + error-queue checks: $tls_ssl)"
echo "  TLS / plain     $(echo "scale=3; $tls / $plain" | bc)x; TLS beyond plain: $((tls - plain)), OpenSSL $tls_ssl, the rest $((tls - plain - tls_ssl))"
[ -n "${KEEP:-}" ] || rm -rf "$DIR"
