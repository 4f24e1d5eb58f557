#!/usr/bin/env bash
# Runs the native extension's tests under valgrind's memcheck, on demand (too slow for every run):
#   bash scripts/ext-memcheck.sh                 # the hook (idle poll included), epoll, native HTTP head parser, response encoder and connection I/O, inotify and TLS tests
#   bash scripts/ext-memcheck.sh tests/Unit/Hook # any PHPUnit arguments
# Exit code 1 when valgrind reports an invalid read/write, a use of uninitialised memory or an invalid
# free (leaks are not counted: PHP keeps memory until exit on purpose), other than the noise of Fiber
# stack switching (see below). The full report goes to var/memcheck.log. Zend's allocator is turned off (USE_ZEND_ALLOC=0) so that every
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
    args=(tests/Unit/Hook tests/Integration/Hook/IdlePollTest.php tests/Unit/Loop/NativeDriverTest.php tests/Unit/Http/Parser/NativeHeadTest.php tests/Unit/Http/Parser/NativeRequestParserTest.php tests/Unit/Http/Parser/NativeRequestTest.php tests/Unit/Server/NativeConnTest.php tests/Unit/Http/Fuzz/EncoderOracleTest.php tests/Unit/Server/Watch tests/Unit/Coroutine/OutputBuffersTest.php tests/Unit/Coroutine/ProcessStateTest.php tests/Unit/Socket/Tls/NativeTlsTest.php)
fi
echo "ext-memcheck: valgrind php vendor/bin/phpunit ${args[*]} (slow: minutes), report in $LOG"
status=0
# WEFT_MEMCHECK=1: tests whose work is pure CPU in PHP or zlib (30,000 highlighted lines, 6 MB of gzip
# level 9: seconds natively, most of an hour under valgrind) skip themselves; they exercise no C of ours
# that the other tests do not.
WEFT_MEMCHECK=1 USE_ZEND_ALLOC=0 ZEND_DONT_UNLOAD_MODULES=1 valgrind --tool=memcheck --error-exitcode=99 --leak-check=no \
    --track-origins=yes --num-callers=30 --max-stackframe=16777216 --log-file="$LOG" \
    php -d "extension=$SO" -d opcache.enable_cli=0 -d pcre.jit=0 -d memory_limit=-1 vendor/bin/phpunit --no-coverage "${args[@]}" || status=$?
# Debian's PHP switches Fibers with boost.context, whose stacks valgrind does not know: reads of a
# Fiber's stack and values "created by a stack allocation at jump_fcontext" are reported in every
# program that uses Fibers. Those are filtered out; anything else is a finding.
findings="$(php -r '
    $blocks = preg_split("/\n==\d+== \n/", (string) file_get_contents($argv[1]));
    $n = 0;
    foreach ($blocks as $b) {
        if (!preg_match("/Invalid (read|write|free)|uninitialised|Mismatched|Conditional jump|Syscall param|Source and destination overlap/", $b)) continue;
        if (preg_match("/jump_fcontext|zend_fiber_switch_context|switching stacks|is in a rw- anonymous segment/", $b)) continue;
        $n++;
        if ($n <= 5) fwrite(STDERR, $b . "\n\n");
    }
    echo $n;
' "$LOG")"
echo "ext-memcheck: $findings finding(s) outside Fiber stack switching (phpunit/valgrind exit $status; full report: $LOG)"
if [ "$findings" != 0 ]; then
    exit 1
fi
if [ "$status" != 0 ] && [ "$status" != 99 ]; then
    exit "$status"
fi
exit 0
