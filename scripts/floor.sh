#!/usr/bin/env bash
# What the issue-11 CPU targets leave for any PHP server: each workload run, interleaved in one run, on
#   floor  scripts/floor/http.php or line.php: Weft's epoll loop with bare callbacks (accept, read, a
#          canned answer); no parsing, no limits, no objects, no coroutine (for the sleep row, the least a
#          Fiber-based server does: a pooled Fiber per request, resumed by a 10 ms timer);
#   base   a prepared checkout of another commit (bin/weft bench --baseline prepares one under
#          var/bench/baseline/<commit>), and
#   this   this checkout,
# one worker pinned to CPU 0, the load (wrk -t1, or Weft's line client) on CPU 1, server CPU per request
# or message from /proc after a 1 s warm-up. The order of the three rotates every round; the summary
# gives medians and the medians of the per-round ratios to base.
#
#   scripts/floor.sh BASE_DIR [ROUNDS=4] [SECONDS=3]
#   scripts/floor.sh var/bench/baseline/4f651f4b7e5c 4 3
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=$(cd "$1" && pwd); ROUNDS=${2:-4}; D=${3:-3}
HTTP_PORT=18777; LINE_PORT=18778
hz=$(getconf CLK_TCK)
PHP_FLAGS=(-d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M)
[ -f "$ROOT/ext/modules/weft.so" ] && PHP_FLAGS+=(-d "extension=$ROOT/ext/modules/weft.so")
for tool in wrk ss taskset python3; do command -v $tool >/dev/null || { echo "floor.sh needs $tool" >&2; exit 2; }; done
results=$(mktemp)

listeners() { ss -ltnpH "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' '; }
ticks() { local sum=0 t; for p in "$@"; do t=$(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0); sum=$((sum + t)); done; echo $sum; }

# measure WORKLOAD BUILD PORT LOAD... -- SERVER...: prints and records server CPU µs per request/message.
measure() {
    local workload=$1 build=$2 port=$3; shift 3
    local load=() server=()
    while [ "$1" != -- ]; do load+=("$1"); shift; done; shift; server=("$@")
    local out; out=$(mktemp)
    taskset -c 0 "${server[@]}" > "$out" 2>&1 &
    for _ in $(seq 1 100); do grep -q READY "$out" && break; sleep 0.1; done
    sleep 0.3
    local pids; pids=$(listeners "$port")
    if [ -z "$pids" ]; then echo "floor.sh: $build did not start for $workload:" >&2; cat "$out" >&2; exit 1; fi
    "${load[@]}" 1 > /dev/null 2>&1 || true
    local t0 t1 res n
    t0=$(ticks $pids); res=$("${load[@]}" "$D" 2>&1); t1=$(ticks $pids)
    n=$(echo "$res" | python3 -c '
import json, re, sys
text = sys.stdin.read()
m = re.search(r"(\d+) requests in", text)
if m:
    errors = re.search(r"Socket errors: (.*)|Non-2xx.*", text)
    print(m.group(1), "-" if not errors else errors.group(0).replace(" ", "_"))
else:
    d = json.loads(text.strip().splitlines()[-1])
    bad = sum(d["errors"].values())
    print(d["messages"], "-" if not bad else "errors=%d" % bad)')
    local count=${n%% *} errors=${n#* }
    local us; us=$(python3 -c "print(round(($t1 - $t0) / $hz * 1e6 / $count, 2))")
    echo "$workload $build $us $errors" | tee -a "$results"
    kill -TERM $pids 2>/dev/null || true; sleep 0.5; kill -KILL $pids 2>/dev/null || true; wait 2>/dev/null || true
    rm -f "$out"
}

wrk_load() { echo taskset -c 1 wrk -t1 -c"$1" "http://127.0.0.1:$HTTP_PORT/" -d; }
line_load() { echo taskset -c 1 php "$ROOT/bin/weft" bench _line-load --host 127.0.0.1 --port $LINE_PORT --pattern "$1" --clients "$2" --duration; }
weft() { echo php bin/weft serve "$@" --workers 1 --loop epoll; }

for round in $(seq 1 "$ROUNDS"); do
    builds="floor base this"
    case $((round % 3)) in 2) builds="base this floor";; 0) builds="this floor base";; esac
    for workload in hello-c100 hello-c1000 sleep-c1000 line-many line-few; do
        for build in $builds; do
            dir=$ROOT; [ "$build" = base ] && dir=$BASE
            case $workload in
                hello-c100|hello-c1000)
                    c=${workload#hello-c}; load=$(wrk_load "$c")
                    if [ $build = floor ]; then server="php ${PHP_FLAGS[*]} $ROOT/scripts/floor/http.php $HTTP_PORT"; env=MODE=hello
                    else server="$(weft examples/hello.php --port $HTTP_PORT)"; env=; fi
                    port=$HTTP_PORT;;
                sleep-c1000)
                    load=$(wrk_load 1000)
                    if [ $build = floor ]; then server="php ${PHP_FLAGS[*]} $ROOT/scripts/floor/http.php $HTTP_PORT"; env=MODE=fiber
                    else server="$(weft examples/sleep.php --port $HTTP_PORT)"; env=; fi
                    port=$HTTP_PORT;;
                line-many|line-few)
                    if [ $workload = line-many ]; then load=$(line_load many 1000); else load=$(line_load few-fast 2); fi
                    if [ $build = floor ]; then server="php ${PHP_FLAGS[*]} $ROOT/scripts/floor/line.php $LINE_PORT"; env=
                    else server="$(weft examples/echo-line.php --protocol line --port $LINE_PORT)"; env=; fi
                    port=$LINE_PORT;;
            esac
            (cd "$dir" && measure "$workload" "$build" "$port" $load -- env $env $server)
        done
    done
done

python3 - "$results" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
data = {}
for workload, build, us, _ in rows:
    data.setdefault(workload, {}).setdefault(build, []).append(float(us))
print()
print("| workload (server CPU µs per request or message) | floor | base | this | floor / base | this / base |")
print("|---|---:|---:|---:|---:|---:|")
for workload, builds in data.items():
    med = {b: statistics.median(v) for b, v in builds.items()}
    ratio = lambda b: statistics.median(x / y for x, y in zip(builds[b], builds["base"]))
    print(f"| {workload} | {med['floor']:.2f} | {med['base']:.2f} | {med['this']:.2f} | {ratio('floor'):.2f}x | {ratio('this'):.2f}x |")
if "sleep-c1000" in data:
    for b in ("floor", "base", "this"):
        pairs = [h / s for h, s in zip(data["hello-c1000"][b], data["sleep-c1000"][b])]
        print(f"hello-c1000 / sleep-c1000, {b}: median {statistics.median(pairs):.2f} ({', '.join(f'{p:.2f}' for p in pairs)})")
EOF
rm -f "$results"
