#!/usr/bin/env bash
# Instructions per HTTP/2 request (h2c, CONNS connections x STREAMS streams in flight, hello world),
# counted by callgrind on scripts/inproc-h2.php: the real Http2Session / Http2Protocol / Connection /
# Dispatcher in one process, deterministic on a shared machine. Two runs, of N and 2N requests; the
# difference of their instruction counts over N is the cost of one request (start-up, the JIT's
# compilation and the first blocks cancel out). The client's share is small and the same in every build.
#
#   bash scripts/ir-h2-inproc.sh [N=10000] [CONNS=100] [STREAMS=10] [CHECKOUT=.]
#   NOEXT=1 ...   pure PHP (no extension: the select loop); JIT=off ... opcache without the JIT
#   The application is hello.php's answer with a fixed Date field (FIXED_DATE in inproc-h2.php): the
#   server's own Date changes every second, and a callgrind run lasts minutes.
#   KEEP=/tmp/h2  keeps the 2N run's callgrind file as /tmp/h2.out for callgrind_annotate
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${1:-10000}" CONNS="${2:-100}" STREAMS="${3:-10}" CHECKOUT="${4:-$ROOT}"
PHP=(php -d opcache.enable_cli=1 -d opcache.jit="${JIT:-tracing}" -d opcache.jit_buffer_size=64M)
[ -n "${NOEXT:-}" ] || PHP+=(-d extension="$ROOT/ext/modules/weft.so")
DIR=$(mktemp -d /tmp/weft-ir-h2.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
run() {
    FIXED_DATE=1 WARM_UP=1 valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$DIR/cg.$1" \
        "${PHP[@]}" "$ROOT/scripts/inproc-h2.php" "$CHECKOUT" "$CONNS" "$STREAMS" "$1" > "$DIR/out.$1" 2> "$DIR/err.$1" \
        || { cat "$DIR/err.$1" >&2; exit 1; }
    grep -m1 '^summary:' "$DIR/cg.$1" | awk '{print $2}'
}
A=$(run "$N")
B=$(run $((2 * N)))
[ -n "${KEEP:-}" ] && cp "$DIR/cg.$((2 * N))" "$KEEP.out"
echo "h2 inproc c=$CONNS m=$STREAMS: Ir($N)=$A Ir($((2 * N)))=$B Ir/request=$(( (B - A) / N ))"
