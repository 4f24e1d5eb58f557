#!/usr/bin/env bash
# Throwaway MariaDB, PostgreSQL and Redis instances for Weft's test suite and
# benchmarks: 127.0.0.1 only, fixed non-standard ports, data under
# var/services/<name>/ (git-ignored), logs in var/services/<name>/log/.
#
#   scripts/services.sh start [NAME]     start (no-op for running ones), wait until ready
#   scripts/services.sh stop [NAME]      stop cleanly
#   scripts/services.sh restart [NAME]   stop + start keeping the data; returns when ready
#   scripts/services.sh status           one line per service (exit 3 if any is down)
#   scripts/services.sh env              shell exports of the WEFT_TEST_* URLs
#
# NAME is one of: mariadb postgres redis (default: all three).
#
#   MariaDB     127.0.0.1:13306  db weft, user weft/weft (mysql_native_password)
#   PostgreSQL  127.0.0.1:15432  db weft owned by role weft/weft (scram-sha-256)
#   Redis       127.0.0.1:16379  default user without password + ACL user weft/weft
#
# The daemons run in their own session with stdio on their log files, so they
# outlive the shell that started them. As root they run as the mysql, postgres
# and redis system users.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

MARIADB_PORT=13306
PGSQL_PORT=15432
REDIS_PORT=16379
READY_TIMEOUT=60      # seconds to wait for a service to accept connections
STOP_TIMEOUT=60       # seconds to wait for a service to exit
ALL_SERVICES=(mariadb postgres redis)

log() { printf 'services: %s\n' "$*"; }
die() { printf 'services: ERROR: %s\n' "$*" >&2; exit 1; }

IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1

# --------------------------------------------------------------------------
# Base directory
# --------------------------------------------------------------------------

# The service users must be able to reach the data directories and unix
# sockets have a ~107 byte path limit. When the checkout lives somewhere the
# system users cannot traverse (e.g. under /root) or too deep, var/services
# becomes a symlink to a directory under /var/tmp.
base_usable() {
    local dir="$1"
    [ "${#dir}" -le 70 ] || return 1
    if [ "$IS_ROOT" = 1 ] && id nobody >/dev/null 2>&1; then
        runuser -u nobody -- test -x "$dir" 2>/dev/null || return 1
    fi
    return 0
}

resolve_base() {
    mkdir -p "$ROOT/var"
    if [ ! -e "$ROOT/var/services" ] && [ ! -L "$ROOT/var/services" ]; then
        mkdir -p "$ROOT/var/services"
        if ! base_usable "$(readlink -f "$ROOT/var/services")"; then
            rmdir "$ROOT/var/services"
            local fallback
            fallback="/var/tmp/weft-services-$(printf '%s' "$ROOT" | md5sum | cut -c1-12)"
            mkdir -p "$fallback"
            ln -s "$fallback" "$ROOT/var/services"
        fi
    fi
    BASE="$(readlink -f "$ROOT/var/services")"
    mkdir -p "$BASE"
    chmod 755 "$BASE"
}

# detach fork|wait DIR LOGFILE CMD...: runs CMD in its own session, in DIR,
# with stdin from /dev/null, stdout/stderr appended to LOGFILE and every
# other inherited file descriptor closed, so a daemon never holds on to the
# caller's pipes, sockets or our lock (e.g. when a PHP test runs
# `services.sh restart mariadb` through proc_open). "fork" returns at once
# (for a daemon that stays in the foreground), "wait" returns CMD's status
# (for one that daemonizes itself).
detach() {
    local mode="$1" dir="$2" logfile="$3"
    shift 3
    local -a setsid=(setsid)
    [ "$mode" = fork ] && setsid=(setsid -f)
    (
        for fd in $(ls "/proc/$BASHPID/fd" 2>/dev/null); do
            [ "$fd" -gt 2 ] && { eval "exec $fd>&-" 2>/dev/null || true; }
        done
        cd "$dir" || exit 1
        exec "${setsid[@]}" "$@" </dev/null >>"$logfile" 2>&1
    )
}

# RUNAS=(prefix) that runs a command as the given system user when we are
# root, or as ourselves otherwise (usable with exec/setsid, unlike a function).
runas_for() {
    RUNAS=()
    [ "$IS_ROOT" = 1 ] && RUNAS=(runuser -u "$1" --)
    return 0
}

# Runs a command as the given system user (as root) or as ourselves.
as_user() {
    local user="$1"; shift
    if [ "$IS_ROOT" = 1 ]; then
        runuser -u "$user" -- "$@"
    else
        "$@"
    fi
}

own_dir() {
    local user="$1" dir="$2"
    mkdir -p "$dir"
    if [ "$IS_ROOT" = 1 ]; then
        id "$user" >/dev/null 2>&1 || die "system user '$user' is missing (run scripts/setup.sh)"
        chown -R "$user:$user" "$dir"
    fi
}

need() {
    command -v "$1" >/dev/null 2>&1 || die "$1 not found (run scripts/setup.sh)"
}

# A zombie counts as gone: the daemons are reparented to PID 1, which may
# take a while to reap them.
pid_alive() {
    local stat
    [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null || return 1
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
    stat="${stat##*) }"
    [ "${stat%% *}" != Z ]
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pid_from_file FILE COMM: prints the pid in FILE (first line) if that
# process is alive and is COMM (a stale pid file may name a reused pid).
pid_from_file() {
    local file="$1" comm="$2" pid
    [ -s "$file" ] || return 1
    pid="$(head -n 1 "$file" 2>/dev/null | tr -dc '0-9')"
    pid_alive "$pid" || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
    printf '%s\n' "$pid"
}

# Waits until pid has exited; SIGKILL after STOP_TIMEOUT.
wait_exit() {
    local name="$1" pid="$2" i
    for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
        pid_alive "$pid" || return 0
        sleep 0.1
    done
    log "$name (pid $pid) did not stop within ${STOP_TIMEOUT}s, killing it"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        pid_alive "$pid" || return 0
        sleep 0.1
    done
    die "$name (pid $pid) does not go away"
}

fail_start() {
    local name="$1" logfile="$2" why="$3"
    {
        printf 'services: ERROR: %s %s (log: %s)\n' "$name" "$why" "$logfile"
        if [ -f "$logfile" ]; then
            printf -- '--- last lines of %s ---\n' "$logfile"
            tail -n 25 "$logfile"
        fi
    } >&2
    exit 1
}

# wait_ready NAME LOGFILE PIDFN CHECKFN: polls CHECKFN until it succeeds,
# failing early when the process behind PIDFN is gone.
wait_ready() {
    local name="$1" logfile="$2" pidfn="$3" checkfn="$4" i
    for ((i = 0; i < READY_TIMEOUT * 5; i++)); do
        if "$checkfn"; then
            return 0
        fi
        # Give the pid file a moment to appear before judging the process dead.
        if [ "$i" -ge 25 ] && ! "$pidfn" >/dev/null; then
            fail_start "$name" "$logfile" "exited during startup"
        fi
        sleep 0.2
    done
    fail_start "$name" "$logfile" "did not accept connections on 127.0.0.1 within ${READY_TIMEOUT}s"
}

# A weft instance from another checkout on this machine holding one of our
# fixed ports (e.g. a CI clone next to a developer's tree): it is throwaway
# by definition, so it is stopped so that this checkout can take the port.
evict_foreign() {
    local name="$1" comm="$2" port="$3" ours="$4" pid cwd evicted=0
    port_open "$port" || return 0
    for pid in $(pgrep -x "$comm" 2>/dev/null || true); do
        cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null || true)"
        case "$cwd" in
            "$ours"|"$ours"/*) continue ;;
            */var/services/"$name"|*/var/services/"$name"/*|/var/tmp/weft-services-*/"$name"|/var/tmp/weft-services-*/"$name"/*) ;;
            *) continue ;;
        esac
        # For PostgreSQL signal only the postmaster, not its children.
        if [ "$comm" = postgres ] && [ "$(ps -o comm= -p "$(ps -o ppid= -p "$pid" | tr -d ' ')" 2>/dev/null)" = postgres ]; then
            continue
        fi
        log "port $port is held by the $name instance of another checkout ($cwd, pid $pid): stopping it"
        kill -TERM "$pid" 2>/dev/null || true
        wait_exit "$name" "$pid"
        evicted=1
    done
    if port_open "$port"; then
        die "127.0.0.1:$port is already in use by another program; cannot start $name"
    fi
    [ "$evicted" = 1 ] && sleep 0.2
    return 0
}

# --------------------------------------------------------------------------
# MariaDB
# --------------------------------------------------------------------------

mariadb_vars() {
    MY_DIR="$BASE/mariadb"
    MY_CNF="$MY_DIR/my.cnf"
    MY_DATA="$MY_DIR/data"
    MY_SOCK="$MY_DIR/mysqld.sock"
    MY_PIDFILE="$MY_DIR/mysqld.pid"
    MY_LOG="$MY_DIR/log/mariadb.log"
    MY_USER=mysql
    [ "$IS_ROOT" = 1 ] || MY_USER="$(id -un)"
}

mariadb_pid() { pid_from_file "$MY_PIDFILE" mariadbd; }

# Ready = answers a ping on its socket and accepts TCP connections.
mariadb_ready() {
    [ -S "$MY_SOCK" ] \
        && mariadb-admin --defaults-file="$MY_CNF" --connect-timeout=1 ping >/dev/null 2>&1 \
        && port_open "$MARIADB_PORT"
}

# A self-signed certificate (CN/SAN 127.0.0.1) so that clients can test TLS;
# made once, kept with the data. Without openssl the server runs without TLS.
mariadb_tls_cert() {
    MY_TLS="$MY_DIR/tls"
    [ -s "$MY_TLS/server-cert.pem" ] && [ -s "$MY_TLS/server-key.pem" ] && return 0
    command -v openssl >/dev/null 2>&1 || return 0
    mkdir -p "$MY_TLS"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$MY_TLS/server-key.pem" -out "$MY_TLS/server-cert.pem" >/dev/null 2>&1 \
        || rm -f "$MY_TLS/server-key.pem" "$MY_TLS/server-cert.pem"
    return 0
}

mariadb_write_config() {
    mariadb_tls_cert
    local tls=""
    if [ -s "$MY_TLS/server-cert.pem" ]; then
        tls="ssl_cert                       = $MY_TLS/server-cert.pem
ssl_key                        = $MY_TLS/server-key.pem"
    fi
    cat >"$MY_CNF" <<EOF
# Generated by scripts/services.sh: throwaway MariaDB for tests.
[mysqld]
user                           = $MY_USER
datadir                        = $MY_DATA
socket                         = $MY_SOCK
pid-file                       = $MY_PIDFILE
log-error                      = $MY_LOG
tmpdir                         = $MY_DIR/tmp
port                           = $MARIADB_PORT
bind-address                   = 127.0.0.1
skip-name-resolve
skip-log-bin
character-set-server           = utf8mb4
collation-server               = utf8mb4_general_ci
innodb_buffer_pool_size        = 64M
innodb_log_file_size           = 48M
innodb_flush_log_at_trx_commit = 2
innodb_doublewrite             = 0
max_connections                = 1000
open_files_limit               = 8192
$tls

[client]
socket                         = $MY_SOCK
user                           = root
EOF
}

mariadb_start() {
    mariadb_vars
    if mariadb_pid >/dev/null; then
        if mariadb_ready; then
            log "mariadb already running (pid $(mariadb_pid)) on 127.0.0.1:$MARIADB_PORT"
            return 0
        fi
    else
        need mariadbd; need mariadb-install-db; need mariadb-admin; need mariadb
        evict_foreign mariadb mariadbd "$MARIADB_PORT" "$MY_DIR"
        mkdir -p "$MY_DIR/tmp" "$MY_DIR/log"
        own_dir "$MY_USER" "$MY_DIR"
        mariadb_write_config
        if [ ! -d "$MY_DATA/mysql" ]; then
            log "mariadb: initialising $MY_DATA"
            rm -rf "$MY_DATA"
            install -d -o "$MY_USER" -m 700 "$MY_DATA"
            if ! mariadb-install-db --defaults-file="$MY_CNF" --user="$MY_USER" \
                --auth-root-authentication-method=normal --skip-test-db \
                >"$MY_DIR/install.log" 2>&1; then
                fail_start mariadb "$MY_DIR/install.log" "mariadb-install-db failed"
            fi
        fi
        touch "$MY_LOG"
        own_dir "$MY_USER" "$MY_DIR"
        rm -f "$MY_PIDFILE"
        log "mariadb: starting on 127.0.0.1:$MARIADB_PORT"
        detach fork "$MY_DIR" "$MY_LOG" mariadbd --defaults-file="$MY_CNF" \
            || fail_start mariadb "$MY_LOG" "could not be launched"
    fi
    wait_ready mariadb "$MY_LOG" mariadb_pid mariadb_ready
    mariadb_provision
    log "mariadb ready (pid $(mariadb_pid))"
}

mariadb_provision() {
    local sql
    sql="
CREATE DATABASE IF NOT EXISTS weft CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS 'weft'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('weft');
CREATE USER IF NOT EXISTS 'weft'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('weft');
ALTER USER 'weft'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('weft');
ALTER USER 'weft'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('weft');
GRANT ALL PRIVILEGES ON weft.* TO 'weft'@'127.0.0.1', 'weft'@'localhost';
GRANT ALL PRIVILEGES ON \`weft\\_%\`.* TO 'weft'@'127.0.0.1', 'weft'@'localhost';
GRANT PROCESS ON *.* TO 'weft'@'127.0.0.1', 'weft'@'localhost';
FLUSH PRIVILEGES;"
    if ! printf '%s\n' "$sql" | mariadb --defaults-file="$MY_CNF" --batch >>"$MY_DIR/provision.log" 2>&1; then
        fail_start mariadb "$MY_DIR/provision.log" "provisioning (database/user weft) failed"
    fi
}

mariadb_stop() {
    mariadb_vars
    local pid
    if ! pid="$(mariadb_pid)"; then
        log "mariadb not running"
        return 0
    fi
    log "mariadb: stopping (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    wait_exit mariadb "$pid"
    rm -f "$MY_PIDFILE"
}

mariadb_status() {
    mariadb_vars
    local pid
    if pid="$(mariadb_pid)"; then
        if mariadb_ready; then
            printf '%-9s running  pid %-7s 127.0.0.1:%s  %s\n' mariadb "$pid" "$MARIADB_PORT" "$MY_DIR"
            return 0
        fi
        printf '%-9s starting pid %-7s 127.0.0.1:%s  (not accepting connections; log: %s)\n' mariadb "$pid" "$MARIADB_PORT" "$MY_LOG"
        return 1
    fi
    printf '%-9s stopped                    127.0.0.1:%s\n' mariadb "$MARIADB_PORT"
    return 1
}

# --------------------------------------------------------------------------
# PostgreSQL
# --------------------------------------------------------------------------

pg_bindir() {
    local d
    for d in /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
        [ -x "$d/postgres" ] && { printf '%s\n' "$d"; return 0; }
    done
    command -v postgres >/dev/null 2>&1 && { dirname "$(command -v postgres)"; return 0; }
    return 1
}

postgres_vars() {
    PG_DIR="$BASE/postgres"
    PG_DATA="$PG_DIR/data"
    PG_LOG="$PG_DIR/log/postgres.log"
    PG_USER=postgres
    [ "$IS_ROOT" = 1 ] || PG_USER="$(id -un)"
}

postgres_pid() { pid_from_file "$PG_DATA/postmaster.pid" postgres; }

postgres_ready() {
    pg_isready -q -h 127.0.0.1 -p "$PGSQL_PORT" -t 1 >/dev/null 2>&1
}

postgres_write_config() {
    cat >"$PG_DATA/weft.conf" <<EOF
# Generated by scripts/services.sh: throwaway PostgreSQL for tests.
listen_addresses = '127.0.0.1'
port = $PGSQL_PORT
unix_socket_directories = '$PG_DIR'
max_connections = 300
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
password_encryption = 'scram-sha-256'
logging_collector = off
log_line_prefix = '%m [%p] '
EOF
    cat >"$PG_DATA/pg_hba.conf" <<EOF
# Generated by scripts/services.sh.
# TYPE  DATABASE  USER  ADDRESS        METHOD
local   all       all                  trust
host    all       all   127.0.0.1/32   scram-sha-256
EOF
    grep -q "^include_if_exists = 'weft.conf'" "$PG_DATA/postgresql.conf" \
        || printf "\ninclude_if_exists = 'weft.conf'\n" >>"$PG_DATA/postgresql.conf"
    [ "$IS_ROOT" = 1 ] && chown "$PG_USER:$PG_USER" "$PG_DATA/weft.conf" "$PG_DATA/pg_hba.conf"
    return 0
}

postgres_start() {
    postgres_vars
    local bin
    bin="$(pg_bindir)" || die "PostgreSQL server binaries not found (run scripts/setup.sh)"
    need pg_isready; need psql
    if postgres_pid >/dev/null; then
        if postgres_ready; then
            log "postgres already running (pid $(postgres_pid)) on 127.0.0.1:$PGSQL_PORT"
            return 0
        fi
    else
        evict_foreign postgres postgres "$PGSQL_PORT" "$PG_DIR"
        mkdir -p "$PG_DIR/log"
        own_dir "$PG_USER" "$PG_DIR"
        if [ ! -s "$PG_DATA/PG_VERSION" ]; then
            log "postgres: initialising $PG_DATA"
            rm -rf "$PG_DATA"
            if ! as_user "$PG_USER" "$bin/initdb" -D "$PG_DATA" -U postgres -E UTF8 --locale=C \
                --auth-local=trust --auth-host=scram-sha-256 --no-sync \
                >"$PG_DIR/install.log" 2>&1; then
                fail_start postgres "$PG_DIR/install.log" "initdb failed"
            fi
        fi
        postgres_write_config
        touch "$PG_LOG"
        own_dir "$PG_USER" "$PG_DIR"
        log "postgres: starting on 127.0.0.1:$PGSQL_PORT"
        # pg_ctl detaches the postmaster; -W: we do the waiting ourselves.
        runas_for "$PG_USER"
        if ! detach wait "$PG_DIR" "$PG_LOG" "${RUNAS[@]}" "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -W -s start; then
            fail_start postgres "$PG_LOG" "pg_ctl start failed"
        fi
    fi
    wait_ready postgres "$PG_LOG" postgres_pid postgres_ready
    postgres_provision
    log "postgres ready (pid $(postgres_pid))"
}

postgres_provision() {
    if ! psql -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR" -p "$PGSQL_PORT" -U postgres -d postgres \
        >>"$PG_DIR/provision.log" 2>&1 <<'SQL'
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'weft') THEN
        CREATE ROLE weft LOGIN CREATEDB PASSWORD 'weft';
    ELSE
        ALTER ROLE weft LOGIN CREATEDB PASSWORD 'weft';
    END IF;
END
$$;
SELECT 'CREATE DATABASE weft OWNER weft ENCODING ''UTF8'''
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'weft') \gexec
SQL
    then
        fail_start postgres "$PG_DIR/provision.log" "provisioning (role/database weft) failed"
    fi
}

postgres_stop() {
    postgres_vars
    local pid
    if ! pid="$(postgres_pid)"; then
        log "postgres not running"
        return 0
    fi
    log "postgres: stopping (pid $pid)"
    # SIGINT = "fast" shutdown: disconnect clients, checkpoint, exit.
    kill -INT "$pid" 2>/dev/null || true
    wait_exit postgres "$pid"
}

postgres_status() {
    postgres_vars
    local pid
    if pid="$(postgres_pid)"; then
        if postgres_ready; then
            printf '%-9s running  pid %-7s 127.0.0.1:%s  %s\n' postgres "$pid" "$PGSQL_PORT" "$PG_DIR"
            return 0
        fi
        printf '%-9s starting pid %-7s 127.0.0.1:%s  (not accepting connections; log: %s)\n' postgres "$pid" "$PGSQL_PORT" "$PG_LOG"
        return 1
    fi
    printf '%-9s stopped                    127.0.0.1:%s\n' postgres "$PGSQL_PORT"
    return 1
}

# --------------------------------------------------------------------------
# Redis
# --------------------------------------------------------------------------

redis_vars() {
    RD_DIR="$BASE/redis"
    RD_CONF="$RD_DIR/redis.conf"
    RD_PIDFILE="$RD_DIR/redis.pid"
    RD_LOG="$RD_DIR/log/redis.log"
    RD_USER=redis
    [ "$IS_ROOT" = 1 ] || RD_USER="$(id -un)"
}

redis_pid() { pid_from_file "$RD_PIDFILE" redis-server; }

redis_ready() {
    [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}

redis_write_config() {
    cat >"$RD_CONF" <<EOF
# Generated by scripts/services.sh: throwaway Redis for tests.
bind 127.0.0.1
port $REDIS_PORT
protected-mode yes
daemonize yes
pidfile $RD_PIDFILE
logfile $RD_LOG
dir $RD_DIR
save ""
appendonly no
maxclients 10000
user default on nopass ~* &* +@all
user weft on >weft ~* &* +@all
EOF
}

redis_start() {
    redis_vars
    need redis-server; need redis-cli
    if redis_pid >/dev/null; then
        if redis_ready; then
            log "redis already running (pid $(redis_pid)) on 127.0.0.1:$REDIS_PORT"
            return 0
        fi
    else
        evict_foreign redis redis-server "$REDIS_PORT" "$RD_DIR"
        mkdir -p "$RD_DIR/log"
        own_dir "$RD_USER" "$RD_DIR"
        redis_write_config
        touch "$RD_LOG"
        own_dir "$RD_USER" "$RD_DIR"
        rm -f "$RD_PIDFILE"
        log "redis: starting on 127.0.0.1:$REDIS_PORT"
        runas_for "$RD_USER"
        if ! detach wait "$RD_DIR" "$RD_LOG" "${RUNAS[@]}" redis-server "$RD_CONF"; then
            fail_start redis "$RD_LOG" "redis-server failed to start"
        fi
    fi
    wait_ready redis "$RD_LOG" redis_pid redis_ready
    log "redis ready (pid $(redis_pid))"
}

redis_stop() {
    redis_vars
    local pid
    if ! pid="$(redis_pid)"; then
        log "redis not running"
        return 0
    fi
    log "redis: stopping (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    wait_exit redis "$pid"
    rm -f "$RD_PIDFILE"
}

redis_status() {
    redis_vars
    local pid
    if pid="$(redis_pid)"; then
        if redis_ready; then
            printf '%-9s running  pid %-7s 127.0.0.1:%s  %s\n' redis "$pid" "$REDIS_PORT" "$RD_DIR"
            return 0
        fi
        printf '%-9s starting pid %-7s 127.0.0.1:%s  (not accepting connections; log: %s)\n' redis "$pid" "$REDIS_PORT" "$RD_LOG"
        return 1
    fi
    printf '%-9s stopped                    127.0.0.1:%s\n' redis "$REDIS_PORT"
    return 1
}

# --------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------

print_env() {
    cat <<EOF
export WEFT_TEST_MYSQL_URL=mysql://weft:weft@127.0.0.1:$MARIADB_PORT/weft
export WEFT_TEST_PGSQL_URL=pgsql://weft:weft@127.0.0.1:$PGSQL_PORT/weft
export WEFT_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT
EOF
}

usage() {
    sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

services_for() {
    if [ -z "${1:-}" ]; then
        SERVICES=("${ALL_SERVICES[@]}")
        return
    fi
    case "$1" in
        mariadb|mysql) SERVICES=(mariadb) ;;
        postgres|postgresql|pgsql) SERVICES=(postgres) ;;
        redis) SERVICES=(redis) ;;
        *) die "unknown service '$1' (expected: mariadb, postgres or redis)" ;;
    esac
}

# Serialise start/stop/restart of this checkout's services.
take_lock() {
    exec 9>"$BASE/.lock"
    if command -v flock >/dev/null 2>&1; then
        flock -w 180 9 || die "timed out waiting for another services.sh ($BASE/.lock)"
    fi
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
    env)
        print_env
        exit 0
        ;;
    start|stop|restart|status) ;;
    -h|--help|help|"") usage ;;
    *) printf 'services: unknown command %s\n' "$cmd" >&2; usage ;;
esac

resolve_base
services_for "${1:-}"

case "$cmd" in
    start)
        take_lock
        for s in "${SERVICES[@]}"; do "${s}_start"; done
        ;;
    stop)
        take_lock
        for s in "${SERVICES[@]}"; do "${s}_stop"; done
        ;;
    restart)
        take_lock
        for s in "${SERVICES[@]}"; do
            t0="$EPOCHREALTIME"
            "${s}_stop"
            "${s}_start"
            log "$s restarted in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s"
        done
        ;;
    status)
        rc=0
        for s in "${SERVICES[@]}"; do "${s}_status" || rc=3; done
        exit "$rc"
        ;;
esac
