<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Cli;

use PHPUnit\Framework\TestCase;
use Weft\Cli\BenchCommand;
use Weft\Cli\UsageError;

/** `bench app` refuses the options that would be silently ignored or would measure another request. */
final class BenchAppOptionsTest extends TestCase
{
    private static function app(): string
    {
        return \dirname(__DIR__, 3) . '/examples/hello.php';
    }

    /** @param list<string> $args */
    private static function usageError(array $args): string
    {
        try {
            (new BenchCommand())->run(['app', self::app(), ...$args, '--out', \sys_get_temp_dir() . '/weft-bench-never-made']);
        } catch (UsageError $e) {
            return $e->getMessage();
        }
        self::fail('no usage error for ' . \implode(' ', $args));
    }

    public function testOptionsOfTheClassicScenariosAreRefused(): void
    {
        self::assertStringContainsString("option '--varied' chooses rows of the classic scenarios", self::usageError(['--varied']));
        self::assertStringContainsString("option '--app' chooses rows of the classic scenarios", self::usageError(['--app=pdo']));
        self::assertStringContainsString("option '--app'", self::usageError(['--app', 'pdo']));
        \ob_start();
        (new BenchCommand())->run(['app', '--help']);
        $help = (string) \ob_get_clean();
        self::assertStringNotContainsString('--varied', $help);
        self::assertStringNotContainsString('--app ', $help);
        self::assertStringContainsString('--loops', $help);
        self::assertStringContainsString('--ab', $help);
    }

    public function testHeadIsRefusedSinceWrkCannotCountItsAnswers(): void
    {
        self::assertStringContainsString('wrk cannot load HEAD requests', self::usageError(['--method', 'head']));
    }

    public function testAbCannotSendAnythingButOneGet(): void
    {
        foreach ([['--method', 'POST'], ['--body', 'x'], ['--header', 'X-A: b'], ['--url', '/a', '--url', '/b']] as $request) {
            self::assertStringContainsString("option '--ab' loads one GET of one path", self::usageError(['--ab', ...$request]));
        }
        self::assertFalse(\is_dir(\sys_get_temp_dir() . '/weft-bench-never-made'), 'a refused run makes no output folder');
    }
}
