#!/usr/bin/env bash
# Server CPU per request of two checkouts, interleaved in one run (the connection-core figures of
# issue 11 until `bin/weft bench --baseline` exists). One worker pinned to CPU 0, wrk -t1 on CPU 1,
# CPU time of the master and worker from /proc, a 1 s warm-up before each measured run. The order
# alternates between rounds (the second server of a pair was seen to measure up to 25 % cheaper, even
# for the same code), so compare the median of the per-round ratios.
#
#   scripts/side-by-side.sh BASE_DIR NEW_DIR APP CONNECTIONS SECONDS ROUNDS LOOP [NEW_EXTRA_ARGS]
#   scripts/side-by-side.sh /work/wt/base . examples/hello.php 100 4 3 select "--gzip off"
# BASE_ENV / NEW_ENV (e.g. "WEFT_NATIVE_HTTP=0") are set in the environment of that tree's server, so one
# checkout can be compared with itself under two settings:
#   BASE_ENV=WEFT_NATIVE_HTTP=0 scripts/side-by-side.sh . . examples/hello.php 100 3 6 epoll
set -euo pipefail
BASE=$(cd "$1" && pwd); NEW=$(cd "$2" && pwd); APP=$3; C=$4; D=$5; R=$6; LOOP=$7; EXTRA=${8:-}
hz=$(getconf CLK_TCK)
cpu_ticks() { local sum=0 t; for p in "$@"; do t=$(awk '{print $14+$15}' "/proc/$p/stat"); sum=$((sum + t)); done; echo $sum; }
for round in $(seq 1 "$R"); do
    order="base new"; [ $((round % 2)) = 0 ] && order="new base"
    for tree in $order; do
        dir=$BASE; extra=""; envs=${BASE_ENV:-}
        [ "$tree" = new ] && dir=$NEW && extra=$EXTRA && envs=${NEW_ENV:-}
        out=$(mktemp); pidfile=$(mktemp -u /tmp/weft-sbs-XXXX.pid)
        (cd "$dir" && exec env $envs taskset -c 0 php bin/weft serve "$APP" --workers 1 --port 0 --loop "$LOOP" --pid-file "$pidfile" $extra) > "$out" 2>&1 &
        for _ in $(seq 1 100); do grep -q READY "$out" && break; sleep 0.1; done
        port=$(grep -o 'READY [0-9]*' "$out" | awk '{print $2}')
        master=$(cat "$pidfile"); pids="$master $(pgrep -P "$master" | tr '\n' ' ')"
        taskset -c 1 wrk -t1 -c"$C" -d1s "http://127.0.0.1:$port/" > /dev/null 2>&1 || true
        t0=$(cpu_ticks $pids)
        res=$(taskset -c 1 wrk -t1 -c"$C" -d"${D}s" "http://127.0.0.1:$port/" 2>&1)
        t1=$(cpu_ticks $pids)
        reqs=$(echo "$res" | grep -o '[0-9]* requests in' | awk '{print $1}')
        errors=$(echo "$res" | grep -E 'Socket errors|Non-2xx' | tr '\n' ' ' || true)
        echo "round=$round tree=$tree loop=$LOOP c=$C req/s=$(echo "$res" | awk '/Requests\/sec/{print $2}') cpu_us_per_req=$(python3 -c "print(round(($t1-$t0)/$hz*1e6/$reqs,2))") $errors"
        kill -TERM "$master"; wait 2>/dev/null || true; rm -f "$out"
    done
done
