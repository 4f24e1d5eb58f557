#!/usr/bin/env bash
# Installs everything Weft's development, test suite and benchmarks need on
# Debian 12, then the Composer dependencies.
#
#   bash scripts/setup.sh              # everything Weft needs
#   bash scripts/setup.sh --with-java  # also a JDK and Netty, for the Java reference rows of
#                                      # `bin/weft bench hello|sleep` (a few hundred MB; only when asked)
#
# Idempotent: when every Debian package is already installed, apt is not
# touched at all, so a second run only costs the `composer install`.
#
# Package installs never start system services (policy-rc.d), and any
# system instance of MariaDB/PostgreSQL/Redis/nginx/php-fpm that a postinst
# started anyway is stopped again: the test suite runs its own throwaway
# instances on non-standard ports (scripts/services.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

log() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

PACKAGES=(
    php8.2-cli php8.2-fpm php8.2-mysql php8.2-pgsql php8.2-dev php8.2-opcache
    php8.2-curl php8.2-mbstring php8.2-xml php8.2-redis libcurl4-openssl-dev libssl-dev valgrind
    gcc make libc6-dev
    nginx
    curl
    openssl  # the TLS tests make their CA and talk with s_client
    mariadb-server mariadb-client
    postgresql postgresql-client
    redis-server
    wrk apache2-utils
    python3-websockets  # the WebSocket tests' independent client (/usr/bin/python3)
    nghttp2-client  # nghttp and h2load: the HTTP/2 tests' independent clients
    chromium  # a real browser over HTTPS + HTTP/2 in the HTTP/2 tests (headless)
    unzip git procps util-linux composer
    prometheus   # promtool and a Prometheus server check and scrape /metrics in the tests (19 MB; its service stays off)
)

# The offline checks of deploy/kubernetes/ (tests/Integration/Ops/KubernetesManifestsTest.php): kubectl,
# Debian's kubernetes-client unless a kubectl is already installed (another package's kubectl owns
# /usr/bin/kubectl, and the two cannot be installed together), and Node.js with npm for the schema
# validator in scripts/kubernetes-validate/, unless they are already there (a Node.js of another origin
# ships its own npm).
command -v kubectl >/dev/null 2>&1 || PACKAGES+=(kubernetes-client)
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

WITH_JAVA=0
for arg in "$@"; do
    case "$arg" in
        --with-java) WITH_JAVA=1 ;;
        -h | --help)
            sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) die "unknown option '$arg' (known: --with-java)" ;;
    esac
done
if [ "$WITH_JAVA" = 1 ]; then
    # The Netty reference server of the benchmarks: src/Bench/Reference/NettyReference.java.
    PACKAGES+=(default-jdk-headless libnetty-java)
fi

pkg_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

pkg_version() {
    dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true
}

missing=()
for p in "${PACKAGES[@]}"; do
    pkg_installed "$p" || missing+=("$p")
done

# php-cli and php-fpm must be the very same build.
version_skew=0
if pkg_installed php8.2-cli && pkg_installed php8.2-fpm \
    && [ "$(pkg_version php8.2-cli)" != "$(pkg_version php8.2-fpm)" ]; then
    version_skew=1
fi

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1" 2>/dev/null)" 2>/dev/null; }

stop_system_services() {
    local stopped=0
    # Not `service mariadb stop`: its fallback is `killall mariadbd`, which
    # would take the test suite's own instance down too.
    if pid_alive /run/mysqld/mysqld.pid; then
        log "stopping the system MariaDB service (the tests run their own instances)"
        local pid i
        pid="$(cat /run/mysqld/mysqld.pid)"
        kill -TERM "$pid" 2>/dev/null || true
        i=0
        while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 600 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        stopped=1
    elif port_open 3306; then
        log "stopping the system MariaDB service (the tests run their own instances)"
        mariadb-admin --defaults-file=/etc/mysql/debian.cnf shutdown >/dev/null 2>&1 || true
        stopped=1
    fi
    if port_open 5432; then
        log "stopping the system PostgreSQL service (the tests run their own instances)"
        service postgresql stop >/dev/null 2>&1 || true
        if command -v pg_lsclusters >/dev/null 2>&1; then
            pg_lsclusters -h 2>/dev/null | while read -r ver name _port status _rest; do
                [ "$status" = online ] && pg_ctlcluster "$ver" "$name" stop >/dev/null 2>&1 || true
            done
        fi
        stopped=1
    fi
    if port_open 6379; then
        log "stopping the system Redis service (the tests run their own instances)"
        service redis-server stop >/dev/null 2>&1 || true
        stopped=1
    fi
    if pid_alive /run/nginx.pid || port_open 80; then
        log "stopping the system nginx service (the tests run their own instances)"
        service nginx stop >/dev/null 2>&1 || true
        stopped=1
    fi
    if pid_alive /run/php/php8.2-fpm.pid; then
        log "stopping the system php8.2-fpm service (the tests run their own instances)"
        service php8.2-fpm stop >/dev/null 2>&1 || true
        stopped=1
    fi
    if [ "$stopped" = 1 ]; then
        sleep 1
        for port in 3306 5432 6379; do
            port_open "$port" && log "warning: something still listens on 127.0.0.1:$port"
        done
    fi
    return 0
}

if [ "${#missing[@]}" -eq 0 ] && [ "$version_skew" = 0 ]; then
    log "all Debian packages present, skipping apt"
else
    [ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run this script as root"
    export DEBIAN_FRONTEND=noninteractive
    t0=$SECONDS
    # Install the whole PHP 8.2 family that is already on the machine along
    # with the new packages, so php8.2-common, -cli, -fpm and every other
    # extension end up on one and the same version.
    mapfile -t php_installed < <(dpkg-query -W -f='${db:Status-Status} ${Package}\n' 'php8.2-*' 2>/dev/null \
        | awk '$1 == "installed" { print $2 }')
    log "installing: ${missing[*]:-(none)}${php_installed[*]:+ (together with the installed ${php_installed[*]})}"

    # Keep package postinst scripts from starting services.
    policy=/usr/sbin/policy-rc.d
    policy_backup=""
    if [ -e "$policy" ]; then
        policy_backup="$(mktemp)"
        cp -p "$policy" "$policy_backup"
    fi
    restore_policy() {
        if [ -n "$policy_backup" ]; then
            mv -f "$policy_backup" "$policy"
        else
            rm -f "$policy"
        fi
    }
    trap restore_policy EXIT
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"

    log "apt-get update"
    apt-get update -q -o DPkg::Lock::Timeout=300 >/tmp/weft-setup-apt.log 2>&1 \
        || { tail -n 20 /tmp/weft-setup-apt.log >&2; die "apt-get update failed (log: /tmp/weft-setup-apt.log)"; }
    log "apt-get install (log: /tmp/weft-setup-apt.log)"
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "${PACKAGES[@]}" "${php_installed[@]}" >>/tmp/weft-setup-apt.log 2>&1 \
        || { tail -n 30 /tmp/weft-setup-apt.log >&2; die "apt-get install failed (log: /tmp/weft-setup-apt.log)"; }

    restore_policy
    trap - EXIT
    stop_system_services
    # The tests run their own Prometheus; the package's service must not start at the next boot.
    if command -v systemctl >/dev/null 2>&1; then
        systemctl disable prometheus.service >/dev/null 2>&1 || true
    fi

    for p in "${PACKAGES[@]}"; do
        pkg_installed "$p" || die "package $p is still not installed"
    done
    [ "$(pkg_version php8.2-cli)" = "$(pkg_version php8.2-fpm)" ] \
        || die "php8.2-cli $(pkg_version php8.2-cli) and php8.2-fpm $(pkg_version php8.2-fpm) differ"
    log "apt done in $((SECONDS - t0))s (php $(pkg_version php8.2-cli), mariadb $(pkg_version mariadb-server), postgresql $(pkg_version postgresql-15), redis $(pkg_version redis-server))"
fi

command -v composer >/dev/null 2>&1 || die "composer is not installed"
log "composer install"
t0=$SECONDS
mkdir -p var
if ! COMPOSER_ALLOW_SUPERUSER=1 composer install --no-interaction --no-progress >var/composer-install.log 2>&1; then
    tail -n 30 var/composer-install.log >&2
    die "composer install failed (log: var/composer-install.log)"
fi
log "composer done in $((SECONDS - t0))s"
# The native extension (epoll loop, hooks): without it the default loop is select and its tests skip.
# Fast when it is already built and up to date.
# The schema validator of deploy/kubernetes/, from the npm registry into its own folder, at the versions
# of its package-lock.json. Skipped when it was installed from this very lock (a copy of which is kept
# in node_modules/ as the stamp).
validator=scripts/kubernetes-validate
if ! cmp -s "$validator/package-lock.json" "$validator/node_modules/.weft-installed-lock.json" 2>/dev/null; then
    log "npm ci in $validator"
    if ! (cd "$validator" && npm ci --no-audit --no-fund) >var/npm-kubernetes-validate.log 2>&1; then
        tail -n 30 var/npm-kubernetes-validate.log >&2
        die "npm ci in $validator failed (log: var/npm-kubernetes-validate.log)"
    fi
    cp "$validator/package-lock.json" "$validator/node_modules/.weft-installed-lock.json"
fi
module="$(bash scripts/build-ext.sh)" || die "building the native extension failed (log: ext/build.log)"
log "native extension: $module"
log "ok"
