#!/usr/bin/env bash
# Writes deploy/image-pins/composer.json: the exact version of every Composer package the Docker image
# (deploy/Dockerfile) installs, as a metapackage the image requires beside Weft's own composer.json.
#
# Why not a composer.lock: a lock records each package's download URL and commit, and the registry that
# development machines and CI use is a partial mirror that rewrites the URLs to itself and drops the
# commits, so a lock written here would install nowhere else. Exact versions resolve against any
# registry that has them; Weft's own constraints still apply (a pin outside them fails the build).
# Weft is a library, so the repository keeps no root composer.lock (an application locks its own).
#
# Run it after a change to composer.json's require (tests/Integration/Ops/DockerfileTest.php fails when
# a package of the image is not pinned) or to take newer versions: bash scripts/pin-image.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$ROOT/composer.json" "$tmp/"
# A COMPOSER_HOME of its own: a global "lock": false (set on some development machines) would write no lock.
mkdir -p "$tmp/home"
cache="$(composer config --global cache-dir 2>/dev/null || true)"
(cd "$tmp" && COMPOSER_HOME="$tmp/home" COMPOSER_CACHE_DIR="${cache:-$tmp/cache}" COMPOSER_ALLOW_SUPERUSER=1 \
    composer update --no-dev --no-install --no-interaction --no-plugins --no-scripts >&2)
mkdir -p "$ROOT/deploy/image-pins"
php -r '
$lock = json_decode(file_get_contents($argv[1]), true, 512, JSON_THROW_ON_ERROR);
$require = [];
foreach ($lock["packages"] as $package) {
    $require[$package["name"]] = $package["version"];
}
ksort($require);
$pins = [
    "name" => "weft/image-pins",
    "description" => "The exact Composer packages of the Docker image (deploy/Dockerfile), written by scripts/pin-image.sh.",
    "type" => "metapackage",
    "license" => "MIT",
    "require" => $require,
];
file_put_contents($argv[2], json_encode($pins, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
' "$tmp/composer.lock" "$ROOT/deploy/image-pins/composer.json"
echo "$ROOT/deploy/image-pins/composer.json"
