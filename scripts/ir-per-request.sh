#!/usr/bin/env bash
# Instructions per HTTP request of a server, counted by callgrind: steadier than CPU time on a shared
# machine. Starts SERVER under callgrind (children followed, JIT code handled), waits for its READY line,
# warms it up with wrk for 2 s, zeroes the counters of every process holding the port, loads it with
# `wrk -t1 -cCONNS -dSECONDS`, dumps, stops the server, and prints the dumped instructions / requests.
#
#   scripts/ir-per-request.sh LABEL PORT CONNS SECONDS -- SERVER...   (run from the checkout to measure)
#   MODE=hello scripts/ir-per-request.sh floor 18911 10 3 -- php -d extension=ext/modules/weft.so scripts/floor/http.php 18911
#   scripts/ir-per-request.sh hello 18903 10 3 -- php -d opcache.enable_cli=1 -d extension=ext/modules/weft.so \
#       bin/weft serve examples/hello.php --workers 1 --loop epoll --port 18903
set -uo pipefail
LABEL=$1 PORT=$2 C=$3 D=$4; shift 5
for tool in valgrind callgrind_control wrk ss; do command -v $tool >/dev/null || { echo "needs $tool" >&2; exit 2; }; done
DIR=$(mktemp -d); OUT=$DIR/server.out
valgrind --tool=callgrind --smc-check=all --trace-children=yes --callgrind-out-file="$DIR/cg.%p" "$@" > "$OUT" 2>&1 &
VG=$!
for _ in $(seq 1 300); do grep -q READY "$OUT" && break; sleep 0.2; done
grep -q READY "$OUT" || { echo "no READY from the server:" >&2; cat "$OUT" >&2; kill $VG; exit 1; }
sleep 1
PIDS=$(ss -ltnpH "sport = :$PORT" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
wrk -t1 -c"$C" -d2 "http://127.0.0.1:$PORT/" > /dev/null 2>&1
for p in $PIDS; do callgrind_control -z "$p" > /dev/null; done
N=$(wrk -t1 -c"$C" -d"$D" "http://127.0.0.1:$PORT/" | grep -o '[0-9]* requests in' | cut -d' ' -f1)
for p in $PIDS; do callgrind_control -d "$p" > /dev/null; done
sleep 1
kill -TERM $VG $PIDS 2>/dev/null; sleep 3; kill -KILL $VG $PIDS 2>/dev/null; wait 2>/dev/null
IR=0
for p in $PIDS; do
    f=$DIR/cg.$p.1
    [ -f "$f" ] && IR=$((IR + $(grep -m1 '^summary:' "$f" | awk '{print $2}')))
done
[ "${N:-0}" -gt 0 ] || { echo "no requests served" >&2; exit 1; }
echo "$LABEL pids=$(echo $PIDS) requests=$N Ir=$IR Ir/request=$((IR / N))"
rm -rf "$DIR"
