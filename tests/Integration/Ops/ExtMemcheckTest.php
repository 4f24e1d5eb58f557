<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Memcheck;

/**
 * scripts/ext-memcheck.sh under real valgrind, on FdWaiterTest: coroutines that wait in the extension's
 * hook and switch to one another on Fibers' stacks. With valgrind's --max-stackframe above the distance
 * between two Fibers' stacks (the script once used 16 MiB) this run reported about 400 error contexts,
 * two of them uninitialised values in zend_call_function under weft_hooks.c; with switches recognised,
 * valgrind reports none, so the noise filter has nothing to leave out.
 */
final class ExtMemcheckTest extends TestCase
{
    public function testTheHookTestsRunCleanUnderValgrindWithNoFiberNoise(): void
    {
        if (Memcheck::active()) {
            self::markTestSkipped('already under scripts/ext-memcheck.sh');
        }
        if (\trim((string) \shell_exec('command -v valgrind')) === '') {
            self::markTestSkipped('valgrind is not installed (apt-get install -y valgrind)');
        }
        $root = \dirname(__DIR__, 3);
        $log = \sys_get_temp_dir() . '/weft-memcheck-' . \bin2hex(\random_bytes(4)) . '.log';
        try {
            $process = \proc_open(
                ['bash', $root . '/scripts/ext-memcheck.sh', 'tests/Unit/Hook/FdWaiterTest.php'],
                [1 => ['pipe', 'w'], 2 => ['redirect', 1]],
                $pipes,
                $root,
                [...\getenv(), 'WEFT_MEMCHECK_LOG' => $log],
            );
            self::assertIsResource($process);
            $out = (string) \stream_get_contents($pipes[1]);
            \fclose($pipes[1]);
            $code = \proc_close($process);
            $text = (string) @\file_get_contents($log);
        } finally {
            @\unlink($log);
        }

        self::assertSame(0, $code, $out);
        self::assertMatchesRegularExpression('/^OK \(\d+ tests?, /m', $out, 'the tests ran and passed under valgrind');
        self::assertStringContainsString('ext-memcheck: 0 finding(s) outside Fiber stack switching; 0 error record(s) judged Fiber noise; valgrind counted 0 error(s) from 0 context(s); exit 0', $out);
        self::assertStringContainsString('Warning: client switching stacks?', $text, 'the coroutines did switch stacks');
    }
}
