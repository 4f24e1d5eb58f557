#!/usr/bin/env bash
# Builds the optional native extension (ext/) with phpize and prints the path of the module:
#   bash scripts/build-ext.sh   ->   /path/to/weft/ext/modules/weft.so
# Load it with: php -d extension=ext/modules/weft.so bin/weft serve app.php --loop epoll
# Fast and silent when the module is newer than every source file. Build output goes to ext/build.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXT="$ROOT/ext"
SO="$EXT/modules/weft.so"
PHP="${PHP:-php}"

fail() {
    echo "build-ext: $*" >&2
    exit 1
}

command -v "$PHP" >/dev/null 2>&1 || fail "'$PHP' not found"
version="$("$PHP" -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')"

# Sources: what the module is built from (config.h is generated, not a source).
newest_source_is_newer() {
    find "$EXT" -maxdepth 1 -type f \( -name config.m4 -o -name '*.c' -o -name '*.h' \) ! -name config.h \
        -newer "$SO" -print -quit | grep -q .
}
if [ -f "$SO" ] && ! newest_source_is_newer; then
    echo "$SO"
    exit 0
fi

# The headers must be those of the PHP that will load the module.
PHPIZE="" PHP_CONFIG=""
for suffix in "$version" ""; do
    if command -v "phpize$suffix" >/dev/null 2>&1 && command -v "php-config$suffix" >/dev/null 2>&1 \
        && [ "$("php-config$suffix" --version | cut -d. -f1,2)" = "$version" ]; then
        PHPIZE="phpize$suffix" PHP_CONFIG="php-config$suffix"
        break
    fi
done
[ -n "$PHPIZE" ] || fail "phpize for PHP $version is missing: install the PHP headers (Debian: apt-get install -y php$version-dev)"
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || fail "no C compiler: apt-get install -y build-essential"

cd "$EXT"
# One build at a time (parallel test runs may all ask for it).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$EXT/.build.lock"
    flock 9
fi
LOG="$EXT/build.log"
: >"$LOG"
run() {
    if ! "$@" >>"$LOG" 2>&1; then
        tail -n 40 "$LOG" >&2
        fail "'$*' failed in $EXT (full log: $LOG)"
    fi
}
if [ ! -f configure ] || [ config.m4 -nt configure ]; then
    run "$PHPIZE"
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ]; then
    run ./configure --with-php-config="$(command -v "$PHP_CONFIG")"
fi
# Unlink the old module rather than let make overwrite it in place (running servers have it mapped);
# without weft.la, make relinks and copies a fresh module.
rm -f "$SO" "$EXT/weft.la"
# weft_arginfo.h is written by hand to match weft.stub.php, in the shape PHP's gen_stub.php gives (gen_stub.php
# fetches PHP-Parser from the network, which a build here does not have): edit both together. A checkout can
# leave the stub a few nanoseconds newer than the header, and make would then run gen_stub.php and fail
# offline: the committed header is the one to build with.
touch "$EXT/weft_arginfo.h"
run make -j2
[ -f "$SO" ] || fail "make finished but $SO is missing (log: $LOG)"
touch "$SO"

"$PHP" -n -d "extension=$SO" -r 'exit(class_exists("Weft\\Ext\\Epoll", false) ? 0 : 1);' \
    || fail "$SO was built but does not load into $PHP"
echo "$SO"
