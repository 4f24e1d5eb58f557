#!/usr/bin/env bash
# Instructions per switch of the followed state between two Laravel instances (scripts/state-switch.php),
# under callgrind: the difference between N round trips and none, divided by 2N. Needs the fixtures
# (scripts/fixtures.sh), MariaDB (scripts/services.sh start) and valgrind.
#   bash scripts/state-switch.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
ext=()
[ -f ext/modules/weft.so ] && ext=(-d extension="$PWD/ext/modules/weft.so")
run() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null php "${ext[@]}" scripts/state-switch.php "$1" 2>&1 \
        | sed -n 's/.*Collected : //p'
}
base=$(run 0)
total=$(run "$n")
echo "$(( (total - base) / (2 * n) )) instructions a switch (${ext[*]:-without the extension})"
