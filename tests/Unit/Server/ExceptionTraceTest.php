<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Server\ExceptionTrace;
use Weft\Server\Logger;

final class ExceptionTraceTest extends TestCase
{
    public function testWeftFramesAreCountedAndTheApplicationsListed(): void
    {
        $e = $this->failThroughWeft();
        $data = ExceptionTrace::describe($e);
        self::assertSame(\RuntimeException::class, $data['class']);
        self::assertSame(__FILE__, $data['file']);
        self::assertGreaterThanOrEqual(1, $data['weft_frames'], 'the coroutine runner and scheduler');
        // The frames above are this test's and PHPUnit's: the application's, as far as Weft knows. Like
        // PHP's own trace, each frame is a call site and the function called there.
        self::assertStringStartsWith(__FILE__ . ':', $data['trace'][0]);
        self::assertStringEndsWith('Weft\\run()', $data['trace'][0]);
        self::assertStringEndsWith('->failThroughWeft()', $data['trace'][1]);
        foreach ($data['trace'] as $frame) {
            self::assertStringNotContainsString(\dirname(__DIR__, 3) . '/src/', $frame);
        }
    }

    public function testChainedExceptionsFollowAndTheHeadlineCanBeLeftOut(): void
    {
        $e = new \LogicException('outer', 0, new \InvalidArgumentException('inner'));
        $text = ExceptionTrace::text($e);
        self::assertStringStartsWith("  LogicException: outer\n  at " . __FILE__ . ':', $text);
        self::assertStringContainsString("\n  Caused by: InvalidArgumentException: inner\n  at ", $text);
        self::assertStringStartsWith('  at ' . __FILE__, ExceptionTrace::text($e, false));
        self::assertSame('inner', ExceptionTrace::describe($e)['previous']['message']);
    }

    public function testTheLoggerWritesEachRecordOnceAsJson(): void
    {
        $file = \tempnam(\sys_get_temp_dir(), 'weft-log');
        try {
            $logger = new Logger($file, 'debug', 'json');
            $logger->error('Failed: {what}', ['what' => 'thing', 'exception' => new \RuntimeException('boom'), 'object' => new \stdClass()]);
            $logger->logFor('worker', 42, 'info', 'stdout: hello', ['stream' => 'stdout']);
            $lines = \file($file, \FILE_IGNORE_NEW_LINES);
            self::assertCount(2, $lines);
            $first = \json_decode($lines[0], true, 512, \JSON_THROW_ON_ERROR);
            self::assertSame('Failed: thing', $first['message']);
            self::assertSame(['what' => 'thing'], $first['context']);
            self::assertSame('boom', $first['exception']['message']);
            $second = \json_decode($lines[1], true, 512, \JSON_THROW_ON_ERROR);
            self::assertSame(['worker', 42, 'info'], [$second['role'], $second['pid'], $second['level']]);
        } finally {
            \unlink($file);
        }
    }

    public function testTheLevelFilters(): void
    {
        $file = \tempnam(\sys_get_temp_dir(), 'weft-log');
        try {
            $logger = new Logger($file, 'warning');
            $logger->info('quiet');
            $logger->warning('loud');
            self::assertStringNotContainsString('quiet', (string) \file_get_contents($file));
            self::assertMatchesRegularExpression('/\[master \d+\] warning: loud\n$/', (string) \file_get_contents($file));
        } finally {
            \unlink($file);
        }
        $this->expectException(\InvalidArgumentException::class);
        new Logger(null, 'info', 'xml');
    }

    private function failThroughWeft(): \Throwable
    {
        try {
            \Weft\run(static fn () => throw new \RuntimeException('from the app'));
        } catch (\RuntimeException $e) {
            return $e;
        }
        self::fail('no exception');
    }
}
