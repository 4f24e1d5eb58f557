<?php

declare(strict_types=1);

namespace Weft\Bench;

/**
 * Prepares the other build of `bin/weft bench --baseline REF`: a clean copy of commit REF (`git archive`,
 * so nothing is registered in the repository and nothing has to be pruned afterwards), its Composer
 * dependencies without the dev tools, and its native extension built with its own scripts/build-ext.sh.
 * The copy is kept under var/bench/baseline/<commit> and reused by later runs; it is complete only once
 * its marker file exists, so an interrupted preparation is redone from scratch.
 *
 * REF may also be a directory that already holds a prepared checkout (bin/weft and vendor/): it is used
 * as it is, read-only.
 */
final class Baseline
{
    private const MARKER = '.weft-baseline-ready';

    /**
     * @param \Closure(string): void $say progress lines for the user
     * @throws \RuntimeException with what failed (unknown commit, composer, extension build)
     */
    public static function prepare(string $root, string $ref, \Closure $say): Build
    {
        if (\is_dir($ref)) {
            $dir = (string) \realpath($ref);
            if (!\is_file("$dir/bin/weft") || !\is_file("$dir/vendor/autoload.php")) {
                throw new \RuntimeException("--baseline $ref: a directory must be a Weft checkout with bin/weft and vendor/ (run composer install there)");
            }
            $commit = self::git($dir, ['rev-parse', 'HEAD'], $ignored);
            $notes = ["the checkout in $dir" . ($commit !== null ? ' at ' . \substr($commit, 0, 12) : '') . ', used as it is'];
            $notes[] = \is_file("$dir/ext/modules/weft.so") ? 'its native extension ext/modules/weft.so' : 'no native extension built there: its servers run in pure PHP';
            return new Build(\basename($dir) === Build::THIS ? 'baseline' : \basename($dir), $dir, $commit, $notes);
        }
        $commit = self::git($root, ['rev-parse', '--verify', '--quiet', $ref . '^{commit}'], $error);
        if ($commit === null) {
            throw new \RuntimeException("--baseline $ref: not a commit of this repository" . ($error !== '' ? " ($error)" : ''));
        }
        $short = \substr($commit, 0, 12);
        $label = \preg_match('/^[0-9a-f]{4,40}$/i', $ref) ? \substr($ref, 0, 12) : $ref;
        if ($label === Build::THIS) {
            // "this" names the build under test in every row.
            $label = $short;
        }
        $dir = "$root/var/bench/baseline/$short";
        $notes = ["commit $short ($ref), exported with git archive into var/bench/baseline/$short"];
        if (!\is_file($dir . '/' . self::MARKER)) {
            $say("weft bench: preparing the baseline $ref ($short) in $dir (once; later runs reuse it)");
            self::remove($dir);
            if (!@\mkdir($dir, 0o777, true) && !\is_dir($dir)) {
                throw new \RuntimeException("cannot create $dir");
            }
            self::run(\sprintf('git -C %s archive --format=tar %s | tar -x -C %s', \escapeshellarg($root), \escapeshellarg($commit), \escapeshellarg($dir)), "$dir/prepare.log", 'git archive');
            $say('weft bench: baseline: composer install --no-dev');
            self::run(\sprintf('cd %s && composer install --no-dev --no-interaction --no-progress --prefer-dist', \escapeshellarg($dir)), "$dir/prepare.log", 'composer install');
            if (\is_file("$dir/scripts/build-ext.sh")) {
                $say('weft bench: baseline: building its native extension');
                try {
                    self::run(\sprintf('bash %s', \escapeshellarg("$dir/scripts/build-ext.sh")), "$dir/prepare.log", 'the extension build');
                } catch (\RuntimeException $e) {
                    // Pure PHP is a complete product: the baseline still runs, and the report says so.
                    $say('weft bench: baseline: ' . $e->getMessage() . '; its servers run without the extension');
                }
            }
            \file_put_contents($dir . '/' . self::MARKER, $commit . "\n");
        }
        $notes[] = 'Composer dependencies installed with --no-dev';
        $notes[] = \is_file("$dir/ext/modules/weft.so") ? 'its own native extension built with its scripts/build-ext.sh' : 'no native extension (it has none, or the build failed: see prepare.log)';
        return new Build($label, $dir, $commit, $notes);
    }

    /** @param list<string> $args */
    private static function git(string $dir, array $args, ?string &$error): ?string
    {
        $command = 'git -C ' . \escapeshellarg($dir) . ' ' . \implode(' ', \array_map('escapeshellarg', $args)) . ' 2>&1';
        $output = [];
        \exec($command, $output, $code);
        $text = \trim(\implode("\n", $output));
        $error = $code === 0 ? '' : $text;
        return $code === 0 && $text !== '' ? $text : null;
    }

    private static function run(string $command, string $log, string $what): void
    {
        $output = [];
        \exec('bash -o pipefail -c ' . \escapeshellarg($command) . ' >> ' . \escapeshellarg($log) . ' 2>&1', $output, $code);
        if ($code !== 0) {
            $tail = \array_slice(\file($log, \FILE_IGNORE_NEW_LINES) ?: [], -3);
            throw new \RuntimeException("$what failed (exit $code): " . \implode(' / ', $tail));
        }
    }

    private static function remove(string $dir): void
    {
        if (\is_dir($dir)) {
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
    }
}
