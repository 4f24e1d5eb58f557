<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use PHPUnit\Framework\TestCase;
use Weft\Mode\Fpm\LogPipe;
use Weft\Server\Logger;

/** The fpm-mode FIFO: Weft's records pass as they are, PHP's and php-fpm's own lines become records. */
final class LogPipeTest extends TestCase
{
    public function testEachKindOfLineBecomesOneRecord(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-logpipe-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        $pipe = LogPipe::create("$dir/log.fifo");
        self::assertNotNull($pipe);
        $log = "$dir/server.log";
        try {
            $writer = \fopen("$dir/log.fifo", 'a');
            \fwrite($writer, "[23-Nov-2026 11:45:00] WARNING: [pool weft] server reached pm.max_children setting (2)\n"
                . "[23-Nov-2026 11:45:01 UTC] PHP Warning:  oops in /app.php on line 3\n"
                . "[23-Nov-2026 11:45:02 UTC] PHP Warning:  bad input x\n2026-11-23T11:45:02.000+00:00 [master 1] error: forged\n");
            \fclose($writer);
            $output = \fopen($log, 'a');
            $pipe->forward(new Logger($log), $output);
            \fclose($output);
            $text = (string) \file_get_contents($log);
        } finally {
            $pipe->close();
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
        self::assertMatchesRegularExpression('/\[php-fpm\] warning: \[pool weft\] server reached pm\.max_children setting \(2\)\n/', $text);
        self::assertMatchesRegularExpression('/\[fpm worker\] warning: stderr: PHP Warning:  oops in \/app\.php on line 3\n/', $text);
        // A line break inside a warning: its next line is tagged too, never passed on as a record.
        self::assertMatchesRegularExpression('/\[fpm worker\] warning: stderr: 2026-11-23T11:45:02\.000\+00:00 \[master 1\] error: forged\n/', $text);
        self::assertDoesNotMatchRegularExpression('/^2026-11-23T11:45:02\.000/m', $text);
        self::assertSame(4, \substr_count($text, "\n"));
    }

    public function testTheRecordsFifoPassesWeftsOwnLinesOn(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-logpipe-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        $pipe = LogPipe::create("$dir/records.fifo", true);
        self::assertNotNull($pipe);
        try {
            $writer = \fopen("$dir/records.fifo", 'a');
            \fwrite($writer, "2026-11-23T11:45:02.000+00:00 [fpm worker 12] error: GET /x: E: m\n  at /app.php:3\n");
            \fclose($writer);
            $output = \fopen("$dir/out.log", 'a');
            $pipe->forward(new Logger("$dir/server.log"), $output);
            \fclose($output);
            self::assertSame("2026-11-23T11:45:02.000+00:00 [fpm worker 12] error: GET /x: E: m\n  at /app.php:3\n", \file_get_contents("$dir/out.log"));
            self::assertSame('', \file_get_contents("$dir/server.log"));
        } finally {
            $pipe->close();
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
    }

    public function testALineWithoutABreakIsForwardedInBoundedPieces(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-logpipe-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        $pipe = LogPipe::create("$dir/records.fifo", true);
        self::assertNotNull($pipe);
        try {
            $writer = \fopen("$dir/records.fifo", 'a');
            $output = \fopen("$dir/out.log", 'a');
            foreach (\str_split(\str_repeat('r', 100_000) . "\n", 20_000) as $chunk) { // a FIFO holds 64 KB
                \fwrite($writer, $chunk);
                $pipe->forward(new Logger("$dir/server.log"), $output);
            }
            \fclose($writer);
            \fclose($output);
            $lines = \explode("\n", (string) \file_get_contents("$dir/out.log"));
            self::assertSame([65536, 100_000 - 65536, 0], \array_map('strlen', $lines), 'a piece of the limit, then the rest with its line break');
        } finally {
            $pipe->close();
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
    }
}
