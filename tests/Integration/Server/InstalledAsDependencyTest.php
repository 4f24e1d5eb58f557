<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * Weft installed in a real throwaway project through a symlinked Composer path repository, served with
 * the project's vendor/bin/weft: the application's autoloader (its own classes) must be the one loaded.
 * Offline: Weft's dependencies come from this checkout's vendor/ as path repositories too.
 */
final class InstalledAsDependencyTest extends TestCase
{
    private string $project;

    protected function setUp(): void
    {
        if (!\is_executable((string) \exec('command -v composer'))) {
            self::markTestSkipped('composer is not installed');
        }
        $this->project = \sys_get_temp_dir() . '/weft-project-' . \bin2hex(\random_bytes(4));
        \mkdir($this->project . '/src', 0700, true);
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->project));
    }

    public function testVendorBinWeftServesTheProjectsClasses(): void
    {
        $root = \dirname(__DIR__, 3);
        $repositories = [['packagist.org' => false], ['type' => 'path', 'url' => $root, 'options' => ['symlink' => true, 'versions' => ['weft/weft' => '1.0.0']]]];
        $installed = \json_decode((string) \file_get_contents($root . '/vendor/composer/installed.json'), true);
        foreach ($installed['packages'] as $package) {
            if (!\in_array($package['name'], $installed['dev-package-names'], true)) {
                $repositories[] = ['type' => 'path', 'url' => $root . '/vendor/' . $package['name'], 'options' => ['symlink' => true, 'versions' => [$package['name'] => $package['version']]]];
            }
        }
        \file_put_contents($this->project . '/composer.json', \json_encode([
            'name' => 'example/app',
            'repositories' => $repositories,
            'require' => ['weft/weft' => '1.0.0'],
            'autoload' => ['psr-4' => ['App\\' => 'src/']],
            'config' => ['allow-plugins' => false],
        ], \JSON_PRETTY_PRINT | \JSON_UNESCAPED_SLASHES));
        \file_put_contents($this->project . '/src/Greeting.php', "<?php\nnamespace App;\nfinal class Greeting { public static function text(): string { return 'hello from the project'; } }\n");
        \mkdir($this->project . '/public');
        \file_put_contents($this->project . '/public/app.php', "<?php\nreturn static fn (Weft\\Http\\Message\\Request \$r) => new Weft\\Http\\Message\\Response(200, [], App\\Greeting::text());\n");

        \exec('cd ' . \escapeshellarg($this->project) . ' && COMPOSER_ALLOW_SUPERUSER=1 composer install --no-interaction --no-progress 2>&1', $output, $code);
        self::assertSame(0, $code, \implode("\n", $output));
        self::assertTrue(\is_link($this->project . '/vendor/weft/weft'), 'Weft comes through a symlink');

        // From the project directory, as a user runs it (the app file in a subdirectory), and from
        // elsewhere with absolute paths.
        $this->serveAndAsk($this->project, ['vendor/bin/weft', 'public/app.php']);
        $this->serveAndAsk('/', [$this->project . '/vendor/bin/weft', $this->project . '/public/app.php']);
    }

    /** @param array{string, string} $command the bin and the app file */
    private function serveAndAsk(string $cwd, array $command): void
    {
        $process = \proc_open(
            ['setsid', \PHP_BINARY, $command[0], 'serve', $command[1], '--port', '0', '--workers', '1', '--pid-file', $this->project . '/weft.pid'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]],
            $pipes,
            $cwd,
        );
        $pid = \proc_get_status($process)['pid'];
        try {
            \stream_set_blocking($pipes[1], false);
            $out = '';
            $deadline = \microtime(true) + 20;
            while (!\preg_match('/^READY (\d+)$/m', $out, $m) && \microtime(true) < $deadline) {
                $read = [$pipes[1]];
                $w = $e = null;
                @\stream_select($read, $w, $e, 0, 100_000);
                $out .= (string) \fread($pipes[1], 65536);
            }
            self::assertNotEmpty($m, $out);
            $response = RawHttp::get('127.0.0.1:' . $m[1]);
            self::assertSame(200, $response['status'], $out);
            self::assertSame('hello from the project', $response['body']);
        } finally {
            @\posix_kill(-$pid, \SIGTERM);
            ServerProcess::waitFor(static fn () => !\proc_get_status($process)['running'], 15, 'the server to stop');
            @\posix_kill(-$pid, \SIGKILL);
            \proc_close($process);
        }
    }
}
