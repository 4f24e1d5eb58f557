#!/usr/bin/env bash
# HTTP/2 benchmark (issue 25 §2's target), one Weft worker, hello world, cleartext, on this machine:
# HTTP/2 with h2load -c100 -m10 against HTTP/1.1 keep-alive at c=100 (wrk, and h2load --h1), the same
# server, in the same run; server CPU per request (user + system of the worker, /proc/PID/stat).
# Rounds are interleaved (the machine is shared and noisy) and the medians reported; each round's
# figures (req/s, server CPU µs each) go to stderr.
#   bash scripts/bench-h2.sh [ROUNDS=5] [REQUESTS=100000]
# Needs: wrk, h2load (nghttp2-client); the extension built for the native loop (WEFT_NO_REEXEC=1 with
# a plain php for pure PHP).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS="${1:-5}"
REQUESTS="${2:-100000}"
DIR="$(mktemp -d /tmp/weft-bench-h2.XXXXXX)"
PID=""
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    sleep 0.5
    rm -rf "$DIR"
}
trap cleanup EXIT

setsid php "$ROOT/bin/weft" serve "$ROOT/examples/hello.php" --workers 1 --port 0 --pid-file "$DIR/weft.pid" >"$DIR/weft.log" 2>&1 &
PID=$!
for _ in $(seq 100); do grep -q '^READY' "$DIR/weft.log" && break; sleep 0.1; done
PORT="$(sed -n 's/^READY //p' "$DIR/weft.log")"
URL="http://127.0.0.1:$PORT/"
MASTER="$(cat "$DIR/weft.pid")"

cpu() { # CPU seconds of the master's children so far
    local total=0
    for pid in $(pgrep -P "$MASTER"); do
        read -r -a f <"/proc/$pid/stat"
        total=$((total + f[13] + f[14]))
    done
    echo "scale=4; $total / $(getconf CLK_TCK)" | bc
}

measure() { # COMMAND... -> "req/s cpu_us_per_request"
    local before after out rps n
    before="$(cpu)"
    out="$("$@" 2>&1)"
    after="$(cpu)"
    if [[ "$1" == wrk ]]; then
        n="$(echo "$out" | awk '/requests in/ {print $1}')"
        rps="$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
    else
        echo "$out" | grep -q " 0 failed, 0 errored, 0 timeout" || echo "warning: failures: $(echo "$out" | grep '^requests:')" >&2
        n="$(echo "$out" | awk '/^requests:/ {print $8}')"
        rps="$(echo "$out" | sed -n 's/.*s, \([0-9.]*\) req\/s.*/\1/p')"
    fi
    echo "$rps $(echo "scale=2; ($after - $before) * 1000000 / $n" | bc)"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A results
for round in $(seq "$ROUNDS"); do
    results[wrk]+="$(measure wrk -t2 -c100 -d3s "$URL")"$'\n'
    results[h1]+="$(measure h2load --h1 -c100 -n"$REQUESTS" "$URL")"$'\n'
    results[h2]+="$(measure h2load -c100 -m10 -n"$REQUESTS" "$URL")"$'\n'
    echo "round $round: $(echo "${results[wrk]}" | sed -n "${round}p") | $(echo "${results[h1]}" | sed -n "${round}p") | $(echo "${results[h2]}" | sed -n "${round}p")" >&2
done

col() { echo -n "${results[$1]}" | awk "{print \$$2}" | median; }
printf '%-44s %12s %18s\n' 'run (medians of '"$ROUNDS"' rounds)' 'req/s' 'server CPU µs each'
printf '%-44s %12s %18s\n' 'HTTP/1.1 keep-alive, wrk -t2 -c100 -d3s' "$(col wrk 1)" "$(col wrk 2)"
printf '%-44s %12s %18s\n' "HTTP/1.1 keep-alive, h2load --h1 -c100" "$(col h1 1)" "$(col h1 2)"
printf '%-44s %12s %18s\n' "HTTP/2 h2c, h2load -c100 -m10" "$(col h2 1)" "$(col h2 2)"
echo "HTTP/2 / HTTP/1.1 (h2load --h1) req/s: $(echo "scale=2; $(col h2 1) / $(col h1 1)" | bc)x (target >= 1)"
echo "HTTP/2 / HTTP/1.1 (wrk) req/s: $(echo "scale=2; $(col h2 1) / $(col wrk 1)" | bc)x"
echo "HTTP/2 / HTTP/1.1 server CPU per request: $(echo "scale=2; $(col h2 2) / $(col h1 2)" | bc)x against h2load --h1, $(echo "scale=2; $(col h2 2) / $(col wrk 2)" | bc)x against wrk (target <= 1.2)"
