<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Scenario\AppGenerator;

/** The preload scenario's generated application is valid PHP, framework-sized, and answers as expected. */
final class AppGeneratorTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-appgen-test-' . \getmypid() . '-' . \bin2hex(\random_bytes(3));
    }

    protected function tearDown(): void
    {
        if (\is_dir($this->dir)) {
            foreach (new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($this->dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST) as $entry) {
                $entry->isDir() ? \rmdir($entry->getPathname()) : \unlink($entry->getPathname());
            }
            \rmdir($this->dir);
        }
    }

    public function testGeneratesAFrameworkSizedAppThatAnswersJson(): void
    {
        $generated = AppGenerator::generate($this->dir);
        self::assertSame(300, $generated['classes']);
        self::assertGreaterThanOrEqual(60, $generated['files']);
        self::assertFileExists($generated['path']);

        // In a fresh PHP, as a server would: load the app, call its handler, count what got loaded.
        $code = 'require ' . \var_export(\dirname(__DIR__, 3) . '/vendor/autoload.php', true) . ';'
            . ' $before = count(get_declared_classes()) + count(get_declared_interfaces());'
            . ' $handler = require ' . \var_export($generated['path'], true) . ';'
            . ' $response = $handler(Weft\Http\Message\Request::create("GET", "/m7/42?lang=de"));'
            . ' $missing = $handler(Weft\Http\Message\Request::create("GET", "/nowhere"));'
            . ' echo json_encode(["status" => $response->status(), "body" => $response->body(), "missing" => $missing->status(),'
            . ' "loaded" => count(get_declared_classes()) + count(get_declared_interfaces()) - $before]);';
        $output = \shell_exec(\escapeshellarg(\PHP_BINARY) . ' -r ' . \escapeshellarg($code) . ' 2>&1');
        $result = \json_decode((string) $output, true);
        self::assertIsArray($result, (string) $output);
        self::assertSame(200, $result['status']);
        self::assertSame(404, $result['missing']);
        self::assertNull(AppGenerator::expectedShape($result['body'], 7, 42), $result['body']);
        self::assertStringContainsString('Artikel 42', $result['body']);
        self::assertGreaterThanOrEqual(250, $result['loaded'], 'booting loads (nearly) every class, as a framework does');
        self::assertNotNull(AppGenerator::expectedShape($result['body'], 8, 42));
        self::assertNotNull(AppGenerator::expectedShape('not json', 7, 42));
    }
}
