<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Hook;

use PHPUnit\Framework\TestCase;
use Weft\Ext\ExitException;
use Weft\Hook\ExitTrap;
use Weft\Hook\Hooks;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/** exit()/die() in a coroutine throws ExitException into it; anywhere else it is the original. */
final class ExitHookTest extends TestCase
{
    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        Loop::reset('select');
        self::assertSame(Hooks::KINDS['exit'], Hooks::enable(Hooks::KINDS['exit']));
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        Loop::reset('select');
    }

    public function testExitInACoroutineEndsOnlyThatCoroutine(): void
    {
        $outcome = run(static function (): array {
            $other = go(static function (): string {
                \Weft\sleep(0.02);
                return 'other finished';
            });
            $exits = [
                go(static function (): void {
                    exit(3);
                }),
                go(static function (): void {
                    $message = 'bye ' . \PHP_VERSION_ID;
                    \ob_start(); // die() prints its message
                    try {
                        die($message);
                    } finally {
                        \ob_end_clean();
                    }
                }),
                go(static function (): void {
                    exit;
                }),
            ];
            $seen = [];
            foreach ($exits as $coroutine) {
                try {
                    $coroutine->join();
                    $seen[] = 'no exit';
                } catch (ExitException $e) {
                    $seen[] = [$e->getCode(), $e->getMessage()];
                }
            }
            return [$seen, $other->join()];
        });
        [$seen, $other] = $outcome;
        self::assertSame('other finished', $other);
        self::assertSame(3, $seen[0][0]);
        self::assertStringContainsString('with status 3: it ends this request (or coroutine) only', $seen[0][1]);
        self::assertStringContainsString('with "bye ' . \PHP_VERSION_ID . '"', $seen[1][1]);
        self::assertSame(0, $seen[2][0]);
    }

    /** As the original exit() does, die("message") prints its message (into the request's output). */
    public function testExitWithAStringPrintsIt(): void
    {
        \ob_start();
        try {
            run(static function (): void {
                try {
                    go(static function (): void {
                        echo 'before, ';
                        die('the message');
                    })->join();
                } catch (ExitException) {
                }
            });
        } finally {
            $output = \ob_get_clean();
        }
        self::assertSame('before, the message', $output);
    }

    /**
     * A framework catches the ExitException and renders it; ExitTrap still tells the code that runs
     * the coroutine that it exited, with the very exception (file and line of the exit()), and only
     * that coroutine's.
     */
    public function testExitTrapKnowsWhichCoroutineExited(): void
    {
        [$exited, $caught, $other, $again] = run(static function (): array {
            $other = go(static function (): ?\Throwable {
                \Weft\sleep(0.01);
                return ExitTrap::take();
            });
            $exited = go(static function (): array {
                try {
                    exit(2);
                } catch (\Throwable $e) {
                    // What a framework does: an error page.
                }
                return [ExitTrap::take(), $e, ExitTrap::take()];
            })->join();
            return [$exited[0], $exited[1], $other->join(), $exited[2]];
        });
        self::assertInstanceOf(ExitException::class, $exited);
        self::assertSame($caught, $exited);
        self::assertSame(__FILE__, $exited->getFile());
        self::assertSame(2, $exited->getCode());
        self::assertNull($other, 'another coroutine did not exit');
        self::assertNull($again, 'take() forgets it');
        self::assertNull(ExitTrap::take(), 'outside a coroutine: nothing');
    }

    public function testTheExceptionIsAnErrorThatCatchExceptionDoesNotSwallow(): void
    {
        $caught = run(static function (): string {
            try {
                try {
                    exit(1);
                } catch (\Exception) {
                    return 'swallowed';
                }
            } catch (ExitException) {
                return 'passed through catch (Exception)';
            }
        });
        self::assertSame('passed through catch (Exception)', $caught);
    }

    public function testOutsideACoroutineExitEndsTheProcessAsUsual(): void
    {
        $script = 'require ' . \var_export(\dirname(__DIR__, 3) . '/vendor/autoload.php', true) . ';'
            . ' Weft\Hook\Hooks::enable(); echo "before "; exit(7);';
        $command = [\PHP_BINARY, '-d', 'extension=' . \dirname(__DIR__, 3) . '/ext/modules/weft.so', '-r', $script];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $output = \stream_get_contents($pipes[1]);
        $code = \proc_close($process);
        self::assertSame(7, $code);
        self::assertSame('before ', $output);
    }

    public function testExitInAFiberThatIsNotAWeftCoroutineEndsTheProcess(): void
    {
        // A worker forked while its master ran in a coroutine runs inside that Fiber: its exit() is an exit.
        $script = 'require ' . \var_export(\dirname(__DIR__, 3) . '/vendor/autoload.php', true) . ';'
            . ' Weft\Hook\Hooks::enable(); (new Fiber(static function () { exit(4); }))->start(); echo "survived";';
        $command = [\PHP_BINARY, '-d', 'extension=' . \dirname(__DIR__, 3) . '/ext/modules/weft.so', '-r', $script];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $output = \stream_get_contents($pipes[1]);
        self::assertSame(4, \proc_close($process));
        self::assertSame('', $output);
    }

    public function testWithTheHookOffExitInACoroutineEndsTheProcess(): void
    {
        $script = 'require ' . \var_export(\dirname(__DIR__, 3) . '/vendor/autoload.php', true) . ';'
            . ' Weft\Hook\Hooks::enable(Weft\Hook\Hooks::KINDS["sleep"]);'
            . ' Weft\run(static function () { Weft\go(static function () { exit(9); })->join(); }); echo "survived";';
        $command = [\PHP_BINARY, '-d', 'extension=' . \dirname(__DIR__, 3) . '/ext/modules/weft.so', '-r', $script];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $output = \stream_get_contents($pipes[1]);
        $code = \proc_close($process);
        self::assertSame(9, $code);
        self::assertSame('', $output);
    }
}
