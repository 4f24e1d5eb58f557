<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Mode;

use PHPUnit\Framework\TestCase;
use Weft\Mode\Fpm\Binaries;
use Weft\Mode\Fpm\MissingBinary;
use Weft\Mode\Fpm\ProcessTable;

/** Shared by the fpm-mode tests: a scratch folder, the real nginx and php-fpm, status and cleanup checks. */
abstract class FpmTestCase extends TestCase
{
    protected const FIXTURES = __DIR__ . '/fixtures';

    protected static function requireFpm(): void
    {
        try {
            Binaries::find(\getenv());
        } catch (MissingBinary $e) {
            self::markTestSkipped($e->getMessage() . ' (scripts/setup.sh installs both)');
        }
    }

    protected static function scratch(): string
    {
        // Short: the runtime folder's Unix socket paths must stay under 108 bytes.
        $dir = \sys_get_temp_dir() . '/wf-' . \bin2hex(\random_bytes(4));
        \mkdir($dir);
        return $dir;
    }

    protected static function removeTree(string $dir): void
    {
        if (!\is_dir($dir) || \is_link($dir)) {
            @\unlink($dir);
            return;
        }
        foreach (\scandir($dir) ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..') {
                self::removeTree("$dir/$entry");
            }
        }
        @\rmdir($dir);
    }

    /** @return array<string, mixed> */
    protected static function serverStatus(string $pidFile): array
    {
        [$code, $out, $err] = ServerProcess::run(['status', '--pid-file', $pidFile, '--json']);
        self::assertSame(0, $code, "bin/weft status failed: $err");
        $status = \json_decode($out, true);
        self::assertIsArray($status, $out);
        return $status;
    }

    /**
     * Processes of this server that must be gone after it stops: nginx and php-fpm each lead their
     * own process group, so their workers are found by group even after their master is gone.
     *
     * @param array<string, mixed> $status
     * @return list<int> process group ids
     */
    protected static function processGroups(array $status): array
    {
        return \array_values(\array_filter([$status['master']['nginx']['pid'] ?? null, $status['master']['php_fpm']['pid'] ?? null]));
    }

    /** @param list<int> $groups */
    protected static function assertNothingLeft(array $groups, string $runtime): void
    {
        $table = ProcessTable::snapshot();
        foreach ($groups as $group) {
            self::assertSame([], $table->group($group), "processes of group $group are still running");
        }
        foreach (\scandir('/proc') ?: [] as $pid) {
            if (\ctype_digit($pid)) {
                $command = ProcessTable::commandLine((int) $pid);
                self::assertStringNotContainsString($runtime, $command, "process $pid still runs from the runtime folder");
            }
        }
        \clearstatcache();
        self::assertDirectoryDoesNotExist($runtime);
    }

    /** Waits for a condition with a deadline instead of sleeping and hoping. */
    protected static function eventually(\Closure $condition, float $timeout = 30.0, string $what = 'condition'): mixed
    {
        $deadline = \microtime(true) + $timeout;
        while (true) {
            $result = $condition();
            if ($result !== false && $result !== null) {
                return $result;
            }
            if (\microtime(true) >= $deadline) {
                self::fail("$what not met within $timeout s");
            }
            \usleep(50_000);
        }
    }
}
