<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Scripts;

use PHPUnit\Framework\TestCase;

/**
 * scripts/memcheck-filter.php, which scripts/ext-memcheck.sh runs on valgrind's log: each error record is
 * judged on its own, and only those whose sole cause is a Fiber stack switch valgrind misread are left
 * out. The fixtures are excerpts of real logs of that script (Debian's PHP 8.2, valgrind 3.19); the
 * records built in this file are marked as such.
 */
final class MemcheckFilterTest extends TestCase
{
    private const SCRIPT = __DIR__ . '/../../../scripts/memcheck-filter.php';
    private const FIXTURES = __DIR__ . '/fixtures';

    /** @var list<string> */
    private array $files = [];

    protected function tearDown(): void
    {
        foreach ($this->files as $file) {
            @\unlink($file);
        }
    }

    /**
     * valgrind prints its first error right under the "client switching stacks?" warnings, with no blank
     * line between: the filter that split the log at blank lines dropped the real invalid write (in
     * Conn::__construct's refusal path) together with the warning, and reported 0 findings.
     */
    public function testARealErrorRightAfterTheStackSwitchWarningIsCounted(): void
    {
        [$code, $out, $err] = $this->filter(self::FIXTURES . '/memcheck-error-after-switch-warning.log', '--status=99');

        self::assertSame(1, $code, $out . $err);
        self::assertStringContainsString('ext-memcheck: 1 finding(s) outside Fiber stack switching; 4 error record(s) judged Fiber noise; valgrind counted 41 error(s) from 5 context(s)', $out);
        self::assertStringStartsWith("Invalid write of size 8\n   at 0x97E7B94: zim_Weft_Ext_Conn___construct (weft_conn.c:224)", $err);
        self::assertStringNotContainsString('classified as Fiber', $out);
    }

    /**
     * Reads of a Fiber's stack, and values created by the stack allocation valgrind saw at jump_fcontext
     * (also when reached from weft_stream_read or passed to recv()), are noise; valgrind exits 99 for
     * them, so the summary says how many it counted and that all were judged noise.
     */
    public function testALogOfOnlyFiberNoiseCountsNoFindingAndSaysWhatItLeftOut(): void
    {
        [$code, $out, $err] = $this->filter(self::FIXTURES . '/memcheck-fiber-noise-only.log', '--status=99');

        self::assertSame(0, $code, $out . $err);
        self::assertSame('', $err);
        self::assertStringContainsString('ext-memcheck: 0 finding(s) outside Fiber stack switching; 9 error record(s) judged Fiber noise; valgrind counted 1267 error(s) from 9 context(s)', $out);
        self::assertStringContainsString('valgrind exited 99 because it counted 1267 error(s) (9 context(s)) and all 9 reported record(s) were classified as Fiber stack-switch noise', $out);

        [$code, $out] = $this->filter(self::FIXTURES . '/memcheck-fiber-noise-only.log', '--status=0');
        self::assertSame(0, $code);
        self::assertStringNotContainsString('classified as Fiber', $out, 'no such line when valgrind did not fail');
    }

    /** An uninitialised value under a weft frame whose origin is a heap block, not the switch, is a finding. */
    public function testAnUninitialisedValueUnderWeftHooksWithAHeapOriginIsCounted(): void
    {
        [$code, $out, $err] = $this->filter(self::FIXTURES . '/memcheck-heap-origin-under-weft-hooks.log');

        self::assertSame(1, $code, $out . $err);
        self::assertStringContainsString('1 finding(s)', $out);
        self::assertStringContainsString('weft_call_waiter', $err);
        self::assertStringContainsString('Uninitialised value was created by a heap allocation', $err);
    }

    /**
     * A Fiber's stack is a "rw- anonymous segment": an invalid access there in the engine's switch code is
     * noise, the same access with a frame of ours in the stack is a finding. (Records built from a real
     * one, a weft frame added.)
     */
    public function testAnAccessToAnAnonymousSegmentIsNoiseOnlyWithoutAFrameOfOurs(): void
    {
        $engine = "==7== Invalid read of size 8\n==7==    at 0x4AB6F9: ??? (in /usr/bin/php8.2)\n==7==  Address 0x10042ce0 is in a rw- anonymous segment\n==7== \n";
        $ours = "==7== Invalid read of size 8\n==7==    at 0x97DB767: weft_loop_add (weft_loop.c:726)\n==7==    by 0x47BE81: execute_ex (in /usr/bin/php8.2)\n==7==  Address 0x10042ce0 is in a rw- anonymous segment\n==7== \n";
        $method = "==7== Invalid write of size 4\n==7==    at 0x97E7B94: zim_Weft_Ext_Loop_add (in /work/weft/ext/modules/weft.so)\n==7==  Address 0x10042ce0 is in a rw- anonymous segment\n==7== \n";
        $unnamed = "==7== Invalid read of size 8\n==7==    at 0x4AB6F9: ??? (in /usr/bin/php8.2)\n==7==    by 0x97E7B00: ??? (in /work/weft/ext/modules/weft.so)\n==7==  Address 0x10042ce0 is in a rw- anonymous segment\n==7== \n";
        $summary = "==7== ERROR SUMMARY: 4 errors from 4 contexts (suppressed: 0 from 0)\n";

        [$code, $out] = $this->filter($this->log($engine . $summary));
        self::assertSame(0, $code, $out);
        [$code, $out, $err] = $this->filter($this->log($engine . $ours . $method . $unnamed . $summary));
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('3 finding(s) outside Fiber stack switching; 1 error record(s) judged Fiber noise', $out);
        self::assertStringContainsString('weft_loop_add', $err);
        self::assertStringContainsString('zim_Weft_Ext_Loop_add', $err);
    }

    /**
     * The origin decides, not a word anywhere in the record: a value created by a stack allocation in
     * our own function is a finding even when jump_fcontext is among its frames. (Built records.)
     */
    public function testOnlyAJumpFcontextOriginMakesAnUninitialisedValueNoise(): void
    {
        $log = "==7== Conditional jump or move depends on uninitialised value(s)\n"
            . "==7==    at 0x97DB767: weft_hook_forget_fd (weft_hooks.c:287)\n"
            . "==7==    by 0x3A0FB6: jump_fcontext (in /usr/bin/php8.2)\n"
            . "==7==  Uninitialised value was created by a stack allocation\n"
            . "==7==    at 0x97DB700: weft_hook_forget_fd (weft_hooks.c:280)\n"
            . "==7== \n"
            . "==7== Use of uninitialised value of size 8\n"
            . "==7==    at 0x97DB767: weft_hook_forget_fd (weft_hooks.c:287)\n"
            . "==7== \n";
        [$code, $out, $err] = $this->filter($this->log($log));

        self::assertSame(1, $code, $out);
        self::assertStringContainsString('2 finding(s)', $out, 'one without any origin line counts too');
        self::assertStringContainsString('no ERROR SUMMARY in the log', $out);
        self::assertStringContainsString('weft_hooks.c:280', $err);
    }

    /**
     * A process the tests fork writes to the same log, its lines between the parent's: each process's
     * record is read whole, and valgrind's count is the first process's (a child's repeats the
     * parent's errors from before the fork). (Built from real records.)
     */
    public function testRecordsOfAForkedChildInterleavedWithTheParentsAreEachJudged(): void
    {
        $log = "==100== Command: php vendor/bin/phpunit\n"
            . "==100== Invalid write of size 8\n"
            . "==200== Use of uninitialised value of size 8\n"
            . "==100==    at 0x97E7B94: zim_Weft_Ext_Conn___construct (weft_conn.c:224)\n"
            . "==200==    at 0x47BCBF: execute_ex (in /usr/bin/php8.2)\n"
            . "==100==  Address 0xea2dce8 is 8 bytes inside a block of size 128 free'd\n"
            . "==200==  Uninitialised value was created by a stack allocation\n"
            . "==200==    at 0x3A0FAE: jump_fcontext (in /usr/bin/php8.2)\n"
            . "==200== \n"
            . "==200== ERROR SUMMARY: 90 errors from 9 contexts (suppressed: 0 from 0)\n"
            . "==100== \n"
            . "==100== ERROR SUMMARY: 12 errors from 4 contexts (suppressed: 0 from 0)\n";
        [$code, $out, $err] = $this->filter($this->log($log));

        self::assertSame(1, $code, $out);
        self::assertStringContainsString('1 finding(s) outside Fiber stack switching; 1 error record(s) judged Fiber noise; valgrind counted 12 error(s) from 4 context(s)', $out);
        self::assertStringContainsString("Invalid write of size 8\n   at 0x97E7B94: zim_Weft_Ext_Conn___construct (weft_conn.c:224)\n Address 0xea2dce8", $err);
    }

    /** Past its error limit valgrind prints no more errors: the log cannot be trusted to have none. */
    public function testALogCutAtValgrindsErrorLimitFails(): void
    {
        $log = "==7== More than 1000 different errors detected.  I'm not reporting any more.\n"
            . "==7== Final error counts will be inaccurate.  Go fix your program!\n"
            . "==7== ERROR SUMMARY: 17789 errors from 1000 contexts (suppressed: 0 from 0)\n";
        [$code, $out] = $this->filter($this->log($log), '--status=99');

        self::assertSame(1, $code);
        self::assertStringContainsString('valgrind stopped reporting errors at its limit', $out);
    }

    public function testAMissingLogIsAUsageError(): void
    {
        [$code, , $err] = $this->filter(\sys_get_temp_dir() . '/weft-no-such-memcheck-' . \bin2hex(\random_bytes(4)) . '.log');

        self::assertSame(2, $code);
        self::assertStringContainsString('cannot read', $err);
    }

    private function log(string $text): string
    {
        $file = \tempnam(\sys_get_temp_dir(), 'weft-memcheck-');
        \file_put_contents($file, $text);
        $this->files[] = $file;
        return $file;
    }

    /** @return array{int, string, string} exit code, stdout, stderr */
    private function filter(string $log, string ...$options): array
    {
        $process = \proc_open(
            [\PHP_BINARY, '-n', self::SCRIPT, ...$options, $log],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
        );
        self::assertIsResource($process);
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        \fclose($pipes[1]);
        \fclose($pipes[2]);
        return [\proc_close($process), $out, $err];
    }
}
