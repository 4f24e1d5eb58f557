#!/usr/bin/env bash
# Instructions per Laravel `/sql3` request through Weft's bridge (scripts/laravel-sql3-ir.php), sync against
# coroutine mode, under callgrind: the difference between a run of N2 requests and one of N1, divided by
# N2 - N1 (boot and warm-up cancel out). Needs the fixtures (scripts/fixtures.sh), MariaDB and valgrind;
# about 3 minutes a mode. WEFT_SRC=DIR/src (from `git archive REV src | tar -x -C DIR`) measures that
# build's Weft classes with this harness.
#   bash scripts/laravel-sql3-ir.sh [N1] [N2] [MODES]
set -euo pipefail
cd "$(dirname "$0")/.."
n1=${1:-300} n2=${2:-800} modes=${3:-sync co}
ext=()
[ -f ext/modules/weft.so ] && ext=(-d extension="$PWD/ext/modules/weft.so")
run() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null php "${ext[@]}" -d opcache.enable_cli=1 \
        scripts/laravel-sql3-ir.php "$1" "$2" 2>&1 | sed -n 's/.*Collected : //p'
}
for mode in $modes; do
    a=$(run "$mode" "$n1") b=$(run "$mode" "$n2")
    echo "$mode: $(( (b - a) / (n2 - n1) )) instructions a request"
done
