<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Observe;

use PHPUnit\Framework\TestCase;
use Weft\Loop\Loop;
use Weft\Observe\AccessLog;

final class AccessLogTest extends TestCase
{
    private string $file;

    protected function setUp(): void
    {
        $this->file = \sys_get_temp_dir() . '/weft-access-unit-' . \bin2hex(\random_bytes(4)) . '.log';
    }

    protected function tearDown(): void
    {
        @\unlink($this->file);
    }

    public function testLinesAreBufferedUntilTheLoopTurnsThenWrittenInOneGo(): void
    {
        $log = new AccessLog($this->file);
        $log->record('10.0.0.1', 'GET', '/a', '1.1', 200, 5, 0.25);
        $log->record('10.0.0.1', 'GET', '/b', '1.0', 404, 0, 0.5);
        self::assertSame('', \file_get_contents($this->file), 'nothing written before the loop turns');
        Loop::run();   // the deferred flush
        $lines = \file($this->file, \FILE_IGNORE_NEW_LINES);
        self::assertCount(2, $lines);
        self::assertMatchesRegularExpression('~^10\.0\.0\.1 - - \[\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] "GET /a HTTP/1\.1" 200 5 "-" "-" 0\.250000 \d+$~', $lines[0]);
        self::assertStringContainsString('"GET /b HTTP/1.0" 404 0 "-" "-" 0.500000', $lines[1]);
    }

    public function testQuotesAndControlsCannotBreakACombinedLine(): void
    {
        $log = new AccessLog($this->file);
        $log->record(null, null, null, '1.1', 400, 12, 0.0, "x\" \"evil", "agent\nnext\\line", false);
        $log->flush();
        self::assertSame(
            '- - - [',
            \substr((string) \file_get_contents($this->file), 0, 7),
        );
        $line = (string) \file_get_contents($this->file);
        self::assertSame(1, \substr_count($line, "\n"));
        self::assertStringContainsString('"-" 400 12 "x\x22 \x22evil" "agent\x0Anext\x5Cline" 0.000000 ', $line);
        self::assertStringEndsWith(" incomplete\n", $line);
    }

    public function testJsonRecordsAreObjectsWithNullsForWhatIsUnknown(): void
    {
        $log = new AccessLog($this->file, 'json');
        $log->record(null, null, null, '1.1', 400, 12, 0.0, null, "bad \xff utf-8");
        $log->flush();
        $record = \json_decode((string) \file_get_contents($this->file), true, 8, \JSON_THROW_ON_ERROR);
        self::assertSame([null, null, 400, 12, "bad \u{FFFD} utf-8", true], [
            $record['method'], $record['target'], $record['status'], $record['bytes'], $record['user_agent'], $record['complete'],
        ]);
    }

    public function testJsonDurationsAreDecimalsWithSixPlacesNeverExponents(): void
    {
        $log = new AccessLog($this->file, 'json');
        $log->record('127.0.0.1', 'GET', '/', '1.1', 200, 2, 3.9e-5);
        $log->record('127.0.0.1', 'GET', '/', '1.1', 200, 2, 1.25);
        $log->flush();
        $lines = \file($this->file, \FILE_IGNORE_NEW_LINES);
        self::assertStringContainsString('"bytes":2,"duration":0.000039,"worker":', $lines[0]);
        self::assertStringContainsString('"duration":1.250000,', $lines[1]);
        self::assertSame(0.000039, \json_decode($lines[0], true, 8, \JSON_THROW_ON_ERROR)['duration']);
    }

    public function testAnUnknownFormatIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new AccessLog($this->file, 'xml');
    }
}
