#!/usr/bin/env bash
# Instructions per line-protocol message (echo, lock-step connections), counted by callgrind over the
# in-process harness scripts/inproc-line.php: (run of M2 messages - run of M1) / (M2 - M1), so start-up,
# warm-up and the JIT's compiling cancel out. Deterministic: the figure to compare builds with on a busy
# machine (the in-process client is included, the same in both runs and for every build).
#
#   bash scripts/ir-line.sh CHECKOUT SO [CONNS] [M1] [M2] [LOOP]
#   bash scripts/ir-line.sh . ext/modules/weft.so 1000                            # this build, extension
#   bash scripts/ir-line.sh /tmp/b69 /tmp/b69/ext/modules/weft.so 1000            # another build, its own
#   bash scripts/ir-line.sh . '' 100                                              # pure PHP, select loop
#
# SO empty: no extension, the select loop. LOOP (default epoll with SO) may name select with SO set.
# JIT=off counts without the tracing JIT (to read PHP functions in a profile: PROFILE=FILE keeps it).
# FLOOR=1 counts the floor alone: inproc-line.php's bare read-and-echo callback as the server (the client,
# the loop and the kernel). SPLIT=1 counts both and prints the server's own share, message - floor:
#
#   SPLIT=1 bash scripts/ir-line.sh . ext/modules/weft.so 1000   # ... Ir/message=M floor=F server=M-F
set -euo pipefail
CHECKOUT=$1 SO=${2:-} C=${3:-1000} M1=${4:-31000} M2=${5:-41000}
EXT=() LOOP=select
if [ -n "$SO" ]; then EXT=(-d "extension=$(realpath "$SO")"); LOOP=${6:-epoll}; fi
ulimit -n $((C * 2 + 256))
HERE=$(cd "$(dirname "$0")" && pwd)
JIT=${JIT:-tracing}
run() {
    valgrind --tool=callgrind --smc-check=all --callgrind-out-file="${PROFILE:-/dev/null}" \
        php -d opcache.enable_cli=1 -d opcache.jit="$JIT" -d opcache.jit_buffer_size=64M "${EXT[@]}" \
        "$HERE/inproc-line.php" "$CHECKOUT" "$LOOP" "$C" "$1" 2>&1 | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'
}
A=$(run "$M1")
B=$(PROFILE= run "$M2")
IR=$(( (B - A) / (M2 - M1) ))
if [ -n "${SPLIT:-}" ]; then
    FA=$(FLOOR=1 PROFILE= run "$M1")
    FB=$(FLOOR=1 PROFILE= run "$M2")
    F=$(( (FB - FA) / (M2 - M1) ))
    echo "$(basename "$(realpath "$CHECKOUT")") $LOOP c=$C Ir/message=$IR floor=$F server=$(( IR - F ))"
else
    echo "$(basename "$(realpath "$CHECKOUT")") $LOOP c=$C Ir/message=$IR${FLOOR:+ (floor)}"
fi
