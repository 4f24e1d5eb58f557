#!/usr/bin/env bash
# Runs the native extension's tests under valgrind's memcheck, on demand (too slow for every run):
#   bash scripts/ext-memcheck.sh                 # the hook (idle poll included), epoll, native HTTP head parser, response encoder and connection I/O, inotify and TLS tests,
#                                                # then `bin/weft fuzz` on the native path (WEFT_MEMCHECK_FUZZ_CASES mutated requests, 2000 unless set, a
#                                                # tenth of them through whole native connections, and as many generated responses through the C encoder)
#   bash scripts/ext-memcheck.sh tests/Unit/Hook # any PHPUnit arguments (no fuzz run)
# WEFT_MEMCHECK_ORIGINS=no: valgrind does not track where an uninitialised value came from (about a third
# faster; every error is still found, its report only lacks the origin). CI runs it so; run it again with
# origins (the default) to read a finding. Without its origin a record of Fiber noise (see below) cannot be
# told from a real error and counts as a finding: the run can only grow stricter.
# Exit code 1 when valgrind reports an invalid read/write, a use of uninitialised memory or an invalid
# free (leaks are not counted: PHP keeps memory until exit on purpose), other than the noise of Fiber
# stack switching (see below). The full report goes to var/memcheck.log (or $WEFT_MEMCHECK_LOG). Zend's allocator is turned off (USE_ZEND_ALLOC=0) so that every
# emalloc is visible to valgrind, and PCRE's JIT (whose vector reads valgrind misreports) is off.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
command -v valgrind >/dev/null 2>&1 || { echo "ext-memcheck: valgrind is missing (apt-get install -y valgrind)" >&2; exit 2; }
SO="$(bash scripts/build-ext.sh)"
bash scripts/services.sh start >/dev/null
eval "$(bash scripts/services.sh env)"
mkdir -p var
LOG="${WEFT_MEMCHECK_LOG:-$ROOT/var/memcheck.log}"
args=("$@")
fuzz_cases=0
if [ ${#args[@]} -eq 0 ]; then
    fuzz_cases="${WEFT_MEMCHECK_FUZZ_CASES:-2000}"
    [[ "$fuzz_cases" =~ ^[0-9]+$ ]] || { echo "ext-memcheck: WEFT_MEMCHECK_FUZZ_CASES is a count (0: no fuzz run), not '$fuzz_cases'" >&2; exit 2; }
    args=(tests/Unit/Hook tests/Integration/Hook/IdlePollTest.php tests/Unit/Loop/NativeDriverTest.php tests/Unit/Http/Parser/NativeHeadTest.php tests/Unit/Http/Parser/NativeRequestParserTest.php tests/Unit/Http/Parser/NativeRequestTest.php tests/Unit/Server/NativeConnTest.php tests/Unit/Server/NativeLineFramingTest.php tests/Unit/Http/Fuzz/EncoderOracleTest.php tests/Unit/Server/Watch tests/Unit/Coroutine/OutputBuffersTest.php tests/Unit/Coroutine/ProcessStateTest.php tests/Unit/Socket/Tls/NativeTlsTest.php)
fi
echo "ext-memcheck: valgrind php vendor/bin/phpunit ${args[*]} (slow: minutes), report in $LOG"
status=0
# WEFT_MEMCHECK=1: tests whose work is pure CPU in PHP or zlib (30,000 highlighted lines, 6 MB of gzip
# level 9: seconds natively, most of an hour under valgrind) skip themselves; they exercise no C of ours
# that the other tests do not.
# Debian's PHP switches Fibers with boost.context on mmap'd 2 MiB stacks that valgrind is not told about
# (PHP registers them only when built with valgrind support). valgrind takes a move of the stack pointer
# larger than --max-stackframe for a switch to another stack, and a smaller one for a frame pushed or
# popped, after which it marks everything in between undefined or inaccessible. Two Fibers' stacks lie
# about 2 MiB apart, so the limit must stay well below that (no frame of PHP's or ours comes near
# 256 KiB). With the 16 MiB this script once used, every switch between two coroutines was misread as a
# huge frame: thousands of errors "created by a stack allocation at jump_fcontext", reads of a
# "rw- anonymous segment" (a Fiber's stack), and an uninitialised EG(vm_stack_end) reported in
# zend_call_function under weft_hooks.c with a misleading heap origin. --error-limit=no: past 1000
# contexts valgrind stops printing errors, and a real one could hide behind the noise.
origins="${WEFT_MEMCHECK_ORIGINS:-yes}"
case "$origins" in yes|no) ;; *) echo "ext-memcheck: WEFT_MEMCHECK_ORIGINS is yes or no, not '$origins'" >&2; exit 2;; esac
VALGRIND=(valgrind --tool=memcheck --error-exitcode=99 --error-limit=no --leak-check=no
    --track-origins="$origins" --num-callers=30 --max-stackframe=262144)
PHP=(php -d "extension=$SO" -d opcache.enable_cli=0 -d pcre.jit=0 -d memory_limit=-1)
WEFT_MEMCHECK=1 USE_ZEND_ALLOC=0 ZEND_DONT_UNLOAD_MODULES=1 "${VALGRIND[@]}" --log-file="$LOG" \
    "${PHP[@]}" vendor/bin/phpunit --no-coverage "${args[@]}" || status=$?
# scripts/memcheck-filter.php (tested by tests/Unit/Scripts/MemcheckFilterTest.php) judges each error
# record of the log on its own and leaves out only those whose sole cause is a Fiber stack switch that
# valgrind misread (should the limit above ever be exceeded); everything else is a finding. When valgrind
# exits 99 with no finding, it says how many errors valgrind counted, all judged Fiber noise.
filter_status=0
php scripts/memcheck-filter.php --status="$status" "$LOG" || filter_status=$?
if [ "$filter_status" != 0 ]; then
    exit 1
fi
if [ "$status" != 0 ] && [ "$status" != 99 ]; then
    echo "ext-memcheck: phpunit under valgrind exited $status (a failing test or a crash: see above and $LOG)" >&2
    exit "$status"
fi
# The fuzzer's mutated requests go through the native head parser and whole native connections, its
# generated responses through the C encoder, each compared with the PHP path (bin/weft fuzz exits 1 on a
# disagreement). Its own log, judged by the same filter.
if [ "$fuzz_cases" -gt 0 ]; then
    FUZZ_LOG="${LOG%.log}-fuzz.log"
    echo "ext-memcheck: valgrind php bin/weft fuzz --cases $fuzz_cases --encoder-cases $fuzz_cases, report in $FUZZ_LOG"
    status=0
    USE_ZEND_ALLOC=0 ZEND_DONT_UNLOAD_MODULES=1 "${VALGRIND[@]}" --log-file="$FUZZ_LOG" \
        "${PHP[@]}" bin/weft fuzz --cases "$fuzz_cases" --encoder-cases "$fuzz_cases" --connections-every 10 || status=$?
    php scripts/memcheck-filter.php --status="$status" "$FUZZ_LOG" || exit 1
    if [ "$status" != 0 ] && [ "$status" != 99 ]; then
        echo "ext-memcheck: bin/weft fuzz under valgrind exited $status (a disagreement between the paths or a crash: see above and $FUZZ_LOG)" >&2
        exit "$status"
    fi
fi
exit 0
