#!/usr/bin/env bash
# Runs the native extension's tests under valgrind's memcheck, on demand (too slow for every run):
#   bash scripts/ext-memcheck.sh                 # the hook and epoll tests
#   bash scripts/ext-memcheck.sh tests/Unit/Hook # any PHPUnit arguments
# Exit code 1 when valgrind reports an invalid read/write, a use of uninitialised memory or an invalid
# free anywhere in the run (leaks are not counted: PHP keeps memory until exit on purpose). The full
# report goes to var/memcheck.log. Zend's allocator is turned off (USE_ZEND_ALLOC=0) so that every
# emalloc is visible to valgrind, and PCRE's JIT (whose vector reads valgrind misreports) is off.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
command -v valgrind >/dev/null 2>&1 || { echo "ext-memcheck: valgrind is missing (apt-get install -y valgrind)" >&2; exit 2; }
SO="$(bash scripts/build-ext.sh)"
bash scripts/services.sh start >/dev/null
eval "$(bash scripts/services.sh env)"
mkdir -p var
LOG="$ROOT/var/memcheck.log"
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
    args=(tests/Unit/Hook tests/Unit/Loop/EpollDriverTest.php)
fi
echo "ext-memcheck: valgrind php vendor/bin/phpunit ${args[*]} (slow: minutes), report in $LOG"
status=0
USE_ZEND_ALLOC=0 ZEND_DONT_UNLOAD_MODULES=1 valgrind --tool=memcheck --error-exitcode=99 --leak-check=no \
    --track-origins=yes --num-callers=30 --max-stackframe=16777216 --log-file="$LOG" \
    php -d "extension=$SO" -d opcache.enable_cli=0 -d pcre.jit=0 -d memory_limit=-1 vendor/bin/phpunit --no-coverage "${args[@]}" || status=$?
errors="$(grep -E 'ERROR SUMMARY: [0-9]+' "$LOG" | tail -n 1 || true)"
echo "ext-memcheck: ${errors:-no summary} (phpunit/valgrind exit $status)"
if [ "$status" = 99 ]; then
    grep -nE 'Invalid (read|write|free)|uninitialised|Mismatched' "$LOG" | head -n 20 >&2 || true
    exit 1
fi
exit "$status"
