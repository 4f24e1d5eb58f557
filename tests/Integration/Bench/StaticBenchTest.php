<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/** `bin/weft bench static` end to end on its smallest matrix: Weft and nginx, both files, real wrk. */
final class StaticBenchTest extends TestCase
{
    public function testWeftAndNginxServeTheSameFilesSideBySide(): void
    {
        foreach (['wrk', 'nginx'] as $tool) {
            if (\trim((string) \shell_exec('command -v ' . $tool . ' || ls /usr/sbin/' . $tool . ' 2>/dev/null')) === '') {
                self::markTestSkipped("$tool is not installed");
            }
        }
        $out = \sys_get_temp_dir() . '/weft-bench-static-' . \bin2hex(\random_bytes(4));
        try {
            [$code, $output] = ServerProcess::cli(['bench', 'static', '--quick', '--duration', '1', '--concurrency', '10', '--out', $out], 120.0);
            self::assertSame(0, $code, $output);
            $results = \json_decode((string) \file_get_contents("$out/results.json"), true, 512, \JSON_THROW_ON_ERROR);
            $rows = $results['scenarios']['static']['rows'];
            $seen = [];
            foreach ($rows as $row) {
                self::assertSame('ok', $row['status'], (string) $row['reason']);
                self::assertGreaterThan(0, $row['metrics']['rps']);
                self::assertGreaterThan(0, $row['metrics']['cpu_us_per_req']);
                self::assertSame(0, \array_sum($row['metrics']['errors']));
                $seen[] = $row['params']['file'] . '/' . $row['params']['server'];
            }
            \sort($seen);
            self::assertSame(['10kb-json-gzip/nginx', '10kb-json-gzip/weft', '1mb/nginx', '1mb/weft'], $seen);
            self::assertStringContainsString('(Weft uses', \implode(' ', $results['scenarios']['static']['findings']));
            // nginx is gone after the run (it removes its pid file when it exits normally).
            $pid = (int) @\file_get_contents("$out/static-nginx/nginx.pid");
            self::assertTrue($pid === 0 || !\posix_kill($pid, 0), "nginx $pid is still running");
        } finally {
            \exec('rm -rf ' . \escapeshellarg($out));
        }
    }
}
