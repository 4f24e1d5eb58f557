#!/usr/bin/env bash
# Installs the framework applications that the bridge tests and the `framework` benchmark serve:
# tests/Fixtures/NAME is copied to var/fixtures/NAME and gets its own Composer dependencies there
# (the apps are projects of their own, like a user's: Weft's core never requires Symfony or Laravel).
# Each requires weft/weft as a user's application does, from this checkout (a symlinked path
# repository, so it always runs the code under test).
# Idempotent and quick when nothing changed: dependencies are installed again only when the app's
# composer.json, Weft's composer.json or tests/Fixtures/registry-gaps changed. Usage: scripts/fixtures.sh [symfony-app] [laravel-app]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

apps=("$@")
[ "${#apps[@]}" -gt 0 ] || apps=(symfony-app laravel-app)

# The packages the registry copy lacks (tests/Fixtures/registry-gaps), a path repository of both apps.
mkdir -p var/fixtures/registry-gaps
(cd tests/Fixtures/registry-gaps && tar cf - .) | (cd var/fixtures/registry-gaps && tar xf -)
gaps="$(cd tests/Fixtures/registry-gaps && find . -type f | sort | xargs sha1sum | sha1sum | cut -c1-40)"

for app in "${apps[@]}"; do
    src="tests/Fixtures/$app"
    dst="var/fixtures/$app"
    [ -f "$src/composer.json" ] || { echo "fixtures: no such app: $src" >&2; exit 1; }
    mkdir -p "$dst"
    # The sources are copied afresh every time (a few files); vendor/ and the app's caches are not.
    (cd "$src" && tar cf - --exclude=./vendor --exclude=./var --exclude=./storage/framework/cache .) | (cd "$dst" && tar xf -)
    rm -rf "$dst/var/cache" "$dst/bootstrap/cache/"*.php
    if [ -f "$dst/artisan" ] || [ -d "$dst/bootstrap" ]; then
        mkdir -p "$dst/storage/app" "$dst/storage/logs" "$dst/storage/framework/cache" \
            "$dst/storage/framework/sessions" "$dst/storage/framework/views" "$dst/bootstrap/cache"
    fi
    stamp="$(sha1sum "$src/composer.json" composer.json | sha1sum | cut -c1-40)-$gaps"
    if [ -f "$dst/vendor/autoload.php" ] && [ "$(cat "$dst/vendor/.weft-stamp" 2>/dev/null)" = "$stamp" ]; then
        continue
    fi
    echo "fixtures: installing $app's Composer dependencies into $dst (log: $dst/composer.log)"
    t0=$SECONDS
    if ! COMPOSER_ALLOW_SUPERUSER=1 composer update --working-dir="$dst" --no-interaction --no-progress \
        --optimize-autoloader >"$dst/composer.log" 2>&1; then
        tail -n 30 "$dst/composer.log" >&2
        echo "fixtures: composer failed for $app" >&2
        exit 1
    fi
    echo "$stamp" >"$dst/vendor/.weft-stamp"
    echo "fixtures: $app installed in $((SECONDS - t0))s"
done
