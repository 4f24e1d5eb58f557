#!/usr/bin/env bash
# Body of `composer test`: makes sure the toolchain and the throwaway
# database/cache services are there, then runs PHPUnit. Arguments are passed
# through to PHPUnit, e.g. `composer test -- --filter Pool tests/Integration`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

needs_setup=0
[ -f vendor/autoload.php ] && [ -x vendor/bin/phpunit ] || needs_setup=1
for bin in mariadbd redis-server nginx php-fpm8.2 wrk; do
    command -v "$bin" >/dev/null 2>&1 || needs_setup=1
done
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1 || needs_setup=1

if [ "$needs_setup" = 1 ]; then
    echo "test: vendor/ or a required program is missing, running scripts/setup.sh"
    bash scripts/setup.sh
fi

bash scripts/services.sh start
eval "$(bash scripts/services.sh env)"

# phpunit.xml.dist names both suite directories and PHPUnit refuses to run
# when one is missing (git does not keep empty directories).
mkdir -p tests/Unit tests/Integration

# The Symfony and Laravel applications the bridge tests serve have Composer dependencies of their
# own (var/fixtures/); installed once, then only when their composer.json changes.
bash scripts/fixtures.sh || echo "test: installing the framework fixture apps failed; the bridge tests will say why" >&2

# The native extension (ext/) is optional; its tests skip unless it is loaded. PHPUnit's own -d
# cannot load extensions (it runs ini_set()), so load the built module into PHP itself.
php_args=()
if [ -f ext/modules/weft.so ]; then
    php_args=(-d "extension=$ROOT/ext/modules/weft.so")
fi
exec php ${php_args[@]+"${php_args[@]}"} vendor/bin/phpunit "$@"
