#!/usr/bin/env bash
# TLS benchmark (issue 25's targets), one worker per server, on this machine:
#  1. keep-alive hello: server CPU per request over TLS against plain HTTP/1.1 (wrk, same run);
#  2. new TLS connections per second, no resumption (ab, one request per connection): Weft against
#     nginx with the same certificate, cipher policy and one worker.
# Rounds are interleaved (the machine is shared and noisy) and the medians reported; each round's
# figures (per second, server CPU µs each) go to stderr.
#   bash scripts/bench-tls.sh [ROUNDS=5] [SECONDS=5]
# Needs: wrk, ab (apache2-utils), nginx, openssl; the extension built (scripts/build-ext.sh) for the
# native path (WEFT_NO_REEXEC=1 with a plain php for pure PHP).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS="${1:-5}"
SECONDS_PER_RUN="${2:-5}"
CONNECTIONS="${CONNECTIONS:-50}"
KEY_TYPE="${KEY_TYPE:-rsa:2048}"
DIR="$(mktemp -d /tmp/weft-bench-tls.XXXXXX)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    sleep 0.5
    rm -rf "$DIR"
}
trap cleanup EXIT

# A CA and a server certificate for localhost (what a deployment has: a chain in the cert file).
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$DIR/ca.key" -out "$DIR/ca.pem" -days 2 -subj "/CN=Bench CA" 2>/dev/null
if [[ "$KEY_TYPE" == ec ]]; then
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$DIR/server.key" -out "$DIR/server.csr" -subj "/CN=localhost" 2>/dev/null
else
    openssl req -newkey "$KEY_TYPE" -nodes -keyout "$DIR/server.key" -out "$DIR/server.csr" -subj "/CN=localhost" 2>/dev/null
fi
echo "subjectAltName=DNS:localhost,IP:127.0.0.1" >"$DIR/ext.cnf"
openssl x509 -req -in "$DIR/server.csr" -CA "$DIR/ca.pem" -CAkey "$DIR/ca.key" -CAcreateserial -out "$DIR/leaf.pem" -days 2 -extfile "$DIR/ext.cnf" 2>/dev/null
cat "$DIR/leaf.pem" "$DIR/ca.pem" >"$DIR/server.pem"

free_port() { php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);'; }

serve() { # NAME ARGS...: a Weft server, one worker; sets PORT_<NAME>
    local name="$1"; shift
    local log="$DIR/$name.log"
    setsid php "$ROOT/bin/weft" serve "$ROOT/examples/hello.php" --workers 1 --port 0 --pid-file "$DIR/$name.pid" "$@" >"$log" 2>&1 &
    PIDS+=("$!")
    for _ in $(seq 100); do grep -q '^READY' "$log" && break; sleep 0.1; done
    printf -v "PORT_$name" '%s' "$(sed -n 's/^READY //p' "$log")"
}
serve plain
serve tls --tls-cert "$DIR/server.pem" --tls-key "$DIR/server.key"

PORT_nginx="$(free_port)"
mkdir -p "$DIR/nginx/logs"
user=""; [ "$(id -u)" = 0 ] && user="user root root;"
cat >"$DIR/nginx/nginx.conf" <<CONF
$user
daemon off;
worker_processes 1;
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    server {
        listen 127.0.0.1:$PORT_nginx ssl;
        ssl_certificate $DIR/server.pem;
        ssl_certificate_key $DIR/server.key;
        # Mozilla intermediate, as Weft's default
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305;
        ssl_prefer_server_ciphers off;
        location / { default_type text/plain; return 200 "Hello World"; }
    }
}
CONF
/usr/sbin/nginx -p "$DIR/nginx/" -c "$DIR/nginx/nginx.conf" -e "$DIR/nginx/logs/error.log" &
PIDS+=("$!")
for _ in $(seq 50); do curl -sk "https://127.0.0.1:$PORT_nginx/" >/dev/null 2>&1 && break; sleep 0.1; done

# CPU seconds (user + system) used so far by a server's workers (Weft: the master's children; nginx: its worker).
cpu_of() {
    local master="$1" total=0 ticks
    ticks="$(getconf CLK_TCK)"
    for pid in $(pgrep -P "$master"); do
        read -r -a f <"/proc/$pid/stat"
        total=$((total + f[13] + f[14]))
    done
    echo "scale=4; $total / $ticks" | bc
}
master_of() { cat "$DIR/$1.pid"; }
NGINX_MASTER="$(cat "$DIR/nginx/nginx.pid")"

keepalive() { # URL MASTER -> "req/s cpu_us_per_request"
    local before after out rps requests
    before="$(cpu_of "$2")"
    out="$(wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" "$1")"
    after="$(cpu_of "$2")"
    requests="$(echo "$out" | awk '/requests in/ {print $1}')"
    rps="$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
    echo "$rps $(echo "scale=2; ($after - $before) * 1000000 / $requests" | bc)"
}

new_connections() { # URL MASTER -> "conn/s cpu_us_per_connection"
    local before after out rate n
    before="$(cpu_of "$2")"
    # ab: a new connection (and a full handshake: ab never offers a session) for every request.
    out="$(ab -q -t "$SECONDS_PER_RUN" -n 1000000 -c "$CONNECTIONS" "$1" 2>&1)"
    after="$(cpu_of "$2")"
    rate="$(echo "$out" | awk '/Requests per second/ {print $4}')"
    n="$(echo "$out" | awk '/Complete requests/ {print $3}')"
    failed="$(echo "$out" | awk '/Failed requests/ {print $3}')"
    [ "${failed:-0}" = 0 ] || echo "warning: $failed failed requests on $1" >&2
    echo "$rate $(echo "scale=2; ($after - $before) * 1000000 / $n" | bc)"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A results
for round in $(seq "$ROUNDS"); do
    results[plain_ka]+="$(keepalive "http://127.0.0.1:$PORT_plain/" "$(master_of plain)")"$'\n'
    results[tls_ka]+="$(keepalive "https://127.0.0.1:$PORT_tls/" "$(master_of tls)")"$'\n'
    results[tls_new]+="$(new_connections "https://127.0.0.1:$PORT_tls/" "$(master_of tls)")"$'\n'
    results[nginx_new]+="$(new_connections "https://127.0.0.1:$PORT_nginx/" "$NGINX_MASTER")"$'\n'
    echo "round $round: $(echo "${results[plain_ka]}" | sed -n "${round}p") | $(echo "${results[tls_ka]}" | sed -n "${round}p") | $(echo "${results[tls_new]}" | sed -n "${round}p") | $(echo "${results[nginx_new]}" | sed -n "${round}p")" >&2
done

col() { echo -n "${results[$1]}" | awk "{print \$$2}" | median; }
printf '%-40s %12s %18s\n' 'run (medians of '"$ROUNDS"' rounds)' 'per second' 'server CPU µs each'
printf '%-40s %12s %18s\n' 'Weft plain HTTP/1.1 keep-alive (wrk)' "$(col plain_ka 1)" "$(col plain_ka 2)"
printf '%-40s %12s %18s\n' 'Weft TLS HTTP/1.1 keep-alive (wrk)' "$(col tls_ka 1)" "$(col tls_ka 2)"
printf '%-40s %12s %18s\n' 'Weft new TLS connections (ab)' "$(col tls_new 1)" "$(col tls_new 2)"
printf '%-40s %12s %18s\n' 'nginx new TLS connections (ab)' "$(col nginx_new 1)" "$(col nginx_new 2)"
echo "TLS/plain CPU per keep-alive request: $(echo "scale=2; $(col tls_ka 2) / $(col plain_ka 2)" | bc)x (target <= 1.3)"
# The same ratio round by round (each round's two runs are back to back): its median and spread say how
# much of the figure above is the machine's noise.
ratios="$(paste -d' ' <(echo -n "${results[tls_ka]}" | awk '{print $2}') <(echo -n "${results[plain_ka]}" | awk '{print $2}') | awk '{printf "%.2f\n", $1 / $2}')"
echo "  per round: $(echo $ratios | tr ' ' ','); median $(echo "$ratios" | median)x"
echo "Weft/nginx new TLS connections per second, as ab saw them: $(echo "scale=2; $(col tls_new 1) / $(col nginx_new 1)" | bc)x"
# ab's rate follows latency as much as capacity on a shared machine; what one CPU-bound worker can do is
# the inverse of its CPU per connection.
echo "Weft/nginx new TLS connections per CPU-second (capacity of one worker): $(echo "scale=2; $(col nginx_new 2) / $(col tls_new 2)" | bc)x (target >= 0.8)"
status="$(php "$ROOT/bin/weft" status --pid-file "$DIR/tls.pid" --json)"
echo "Weft TLS path: $(echo "$status" | php -r '$w = json_decode(stream_get_contents(STDIN), true)["workers"][0]; echo $w["tls_native"] ? "native context (extension)" : "PHP OpenSSL layer", ", resumed handshakes (must be 0 here): ", $w["tls_resumed"];')"
