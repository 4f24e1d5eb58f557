<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/**
 * deploy/Dockerfile without a Docker daemon (the test machines have none, nor a registry to pull
 * debian:12-slim from): its instructions parse, its Composer steps install exactly the versions of
 * deploy/image-pins and nothing unpinned, its runtime stage has the PHP extensions of a Laravel or Symfony application,
 * and its HEALTHCHECK follows a real server's health.
 */
final class DockerfileTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../..';
    private const DOCKERFILE = self::ROOT . '/deploy/Dockerfile';
    /** Instructions of the Dockerfile reference. */
    private const INSTRUCTIONS = ['FROM', 'RUN', 'CMD', 'LABEL', 'EXPOSE', 'ENV', 'ADD', 'COPY', 'ENTRYPOINT', 'VOLUME', 'USER', 'WORKDIR', 'ARG', 'ONBUILD', 'STOPSIGNAL', 'HEALTHCHECK', 'SHELL'];
    /** What a Laravel or Symfony application needs beyond php8.2-cli and php8.2-common. */
    private const FRAMEWORK_PACKAGES = ['php8.2-opcache', 'php8.2-mbstring', 'php8.2-xml', 'php8.2-intl', 'php8.2-bcmath', 'php8.2-zip', 'php8.2-mysql', 'php8.2-pgsql', 'php8.2-sqlite3', 'php8.2-redis', 'php8.2-curl'];

    private string $tmp = '';

    protected function tearDown(): void
    {
        if ($this->tmp !== '') {
            \exec('rm -rf ' . \escapeshellarg($this->tmp));
        }
    }

    public function testTheInstructionsParse(): void
    {
        $stages = self::stages();
        self::assertCount(2, $stages, 'a build stage and a runtime stage');
        foreach ($stages as $stage) {
            foreach ($stage as [$keyword, $args]) {
                self::assertContains($keyword, self::INSTRUCTIONS, "unknown instruction $keyword");
                if (\in_array($keyword, ['CMD', 'ENTRYPOINT'], true) || ($keyword === 'HEALTHCHECK' && \str_contains($args, 'CMD ['))) {
                    $json = $keyword === 'HEALTHCHECK' ? \substr($args, (int) \strpos($args, 'CMD [') + 4) : $args;
                    self::assertIsList(\json_decode($json, true, 512, \JSON_THROW_ON_ERROR), "$keyword $args");
                }
            }
        }
        // Every ARG used in a FROM is declared before the first FROM.
        \preg_match_all('/^ARG (\w+)/m', \strstr((string) \file_get_contents(self::DOCKERFILE), "\nFROM ", true) ?: '', $declared);
        foreach ($stages as $stage) {
            if (\preg_match('/\$\{(\w+)\}/', $stage[0][1], $m)) {
                self::assertContains($m[1], $declared[1]);
            }
        }
    }

    public function testTheImageInstallsExactlyThePinnedPackages(): void
    {
        if (\trim((string) \shell_exec('command -v composer')) === '') {
            self::markTestSkipped('composer is not installed');
        }
        $build = self::stages()[0];
        // The build stage's Composer steps, run as they are written, in a directory laid out as its WORKDIR.
        $this->tmp = \sys_get_temp_dir() . '/weft-image-' . \bin2hex(\random_bytes(4));
        \mkdir($this->tmp . '/home', 0o755, true);
        \mkdir($this->tmp . '/deploy/image-pins', 0o755, true);
        $copied = [];
        $steps = [];
        foreach ($build as [$keyword, $args]) {
            if ($keyword === 'COPY' && \preg_match('#^(\S+) (\S+)$#', $args, $m) && $m[1] !== '.') {
                \copy(self::ROOT . '/' . $m[1], $this->tmp . '/' . (\str_ends_with($m[2], '/') ? $m[2] . \basename($m[1]) : $m[1]));
                $copied[] = $m[1];
            }
            if ($keyword === 'RUN' && \str_starts_with($args, 'composer ') && \str_contains($args, 'image-pins')) {
                $steps = \array_map('trim', \explode('&&', $args));
            }
        }
        self::assertSame(['composer.json', 'deploy/image-pins/composer.json'], $copied);
        self::assertCount(3, $steps);
        foreach ($steps as $step) {
            [$code, $out] = $this->composer(\array_slice(\explode(' ', $step), 1));
            self::assertSame(0, $code, "$step\n$out");
        }

        $pins = \json_decode((string) \file_get_contents(self::ROOT . '/deploy/image-pins/composer.json'), true, 512, \JSON_THROW_ON_ERROR)['require'];
        $installed = [];
        foreach (\json_decode((string) \file_get_contents($this->tmp . '/vendor/composer/installed.json'), true, 512, \JSON_THROW_ON_ERROR)['packages'] as $package) {
            if ($package['name'] !== 'weft/image-pins') {
                $installed[$package['name']] = $package['version'];
            }
        }
        \ksort($installed);
        // Every package of the image is pinned (a new requirement of composer.json needs scripts/pin-image.sh).
        self::assertSame(\array_keys($pins), \array_keys($installed), 'run bash scripts/pin-image.sh');
        foreach ($pins as $name => $version) {
            self::assertSame(\ltrim($version, 'v'), \ltrim($installed[$name], 'v'), $name);
        }
    }

    public function testTheRuntimeStageHasWhatAFrameworkApplicationNeeds(): void
    {
        $runtime = self::stages()[1];
        $packages = [];
        foreach ($runtime as [$keyword, $args]) {
            if ($keyword === 'RUN' && \preg_match('/apt-get install ([^&]+)/', $args, $m)) {
                $packages = \array_merge($packages, \preg_grep('/^[a-z0-9][a-z0-9.+-]+$/', \preg_split('/\s+/', \trim($m[1])) ?: []) ?: []);
            }
        }
        foreach (self::FRAMEWORK_PACKAGES as $package) {
            self::assertContains($package, $packages);
        }
        if (\trim((string) \shell_exec('command -v apt-cache')) === '') {
            return;
        }
        // Debian 12 has each of them (the machines the tests run on are Debian 12 with its package lists).
        foreach ($packages as $package) {
            \exec('apt-cache show --no-all-versions ' . \escapeshellarg($package) . ' 2>&1', $lines, $code);
            self::assertSame(0, $code, "$package is not a Debian 12 package");
        }
    }

    public function testTheHealthcheckFollowsTheServersHealth(): void
    {
        $check = null;
        foreach (self::stages()[1] as [$keyword, $args]) {
            if ($keyword === 'HEALTHCHECK') {
                $check = \json_decode(\substr($args, (int) \strpos($args, 'CMD [') + 4), true, 512, \JSON_THROW_ON_ERROR);
                self::assertMatchesRegularExpression('/--timeout=\d+s/', $args);
            }
        }
        self::assertSame(['php', '/opt/weft/deploy/healthcheck.php'], $check, 'a HEALTHCHECK in the runtime stage');
        $script = self::ROOT . '/deploy/healthcheck.php';

        $server = new ServerProcess([self::ROOT . '/examples/hello.php', '--workers', '1', '--metrics', '127.0.0.1:0']);
        $metrics = ServerProcess::waitFor(static fn () => \preg_match('#Metrics on http://[\d.]+:(\d+)/metrics#', $server->output(), $m) ? (int) $m[1] : null, 10, 'the metrics address in the log');
        $health = static function (array $env) use ($script): array {
            $process = \proc_open([\PHP_BINARY, $script], [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, $env + ['PATH' => (string) \getenv('PATH')]);
            $out = (string) \stream_get_contents($pipes[1]);
            return [\proc_close($process), $out];
        };
        // As docker-compose.yml sets it (every interface) and as the image does (loopback).
        self::assertSame([0, ''], $health(['WEFT_METRICS' => "0.0.0.0:$metrics"]));
        self::assertSame([0, ''], $health(['WEFT_METRICS' => "127.0.0.1:$metrics"]));
        // Without metrics: the application port.
        self::assertSame([0, ''], $health(['WEFT_METRICS' => '', 'WEFT_HOST' => '0.0.0.0', 'WEFT_PORT' => (string) $server->port]));

        $server->stop();
        [$code, $out] = $health(['WEFT_METRICS' => "0.0.0.0:$metrics"]);
        self::assertSame(1, $code);
        self::assertStringContainsString("unhealthy: no answer from http://127.0.0.1:$metrics/health", $out);
        [$code, $out] = $health(['WEFT_METRICS' => '', 'WEFT_PORT' => (string) $server->port]);
        self::assertSame(1, $code);
        self::assertStringContainsString('unhealthy: cannot connect', $out);
    }

    /**
     * The Dockerfile's instructions by stage, continuation lines joined and comments dropped.
     *
     * @return list<list<array{string, string}>>
     */
    private static function stages(): array
    {
        $text = (string) \file_get_contents(self::DOCKERFILE);
        $text = (string) \preg_replace('/^\s*#.*\n/m', '', $text);
        $text = (string) \preg_replace('/\\\\\n/', ' ', $text);
        $stages = [];
        foreach (\preg_split('/\n/', $text) ?: [] as $line) {
            if (\trim($line) === '') {
                continue;
            }
            self::assertMatchesRegularExpression('/^([A-Z]+)\s+(\S.*)$/', $line);
            \preg_match('/^([A-Z]+)\s+(\S.*)$/', $line, $m);
            $instruction = [$m[1], (string) \preg_replace('/\s+/', ' ', \trim($m[2]))];
            if ($m[1] === 'FROM') {
                $stages[] = [$instruction];
            } elseif ($stages !== []) {
                $stages[\count($stages) - 1][] = $instruction;
            } else {
                self::assertSame('ARG', $m[1], 'only ARG may come before the first FROM');
            }
        }
        return $stages;
    }

    /** @param list<string> $args @return array{int, string} */
    private function composer(array $args): array
    {
        // A COMPOSER_HOME of its own, as in the image (nothing from this machine's global configuration).
        $cache = \trim((string) \shell_exec('composer config --global cache-dir 2>/dev/null'));
        $env = ['COMPOSER_HOME' => $this->tmp . '/home', 'COMPOSER_ALLOW_SUPERUSER' => '1'] + ($cache !== '' ? ['COMPOSER_CACHE_DIR' => $cache] : []) + \getenv();
        $process = \proc_open(\array_merge(['timeout', '300', 'composer'], $args), [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, $this->tmp, $env);
        $out = (string) \stream_get_contents($pipes[1]);
        return [\proc_close($process), $out];
    }
}
