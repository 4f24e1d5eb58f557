<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\OutputBuffers;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

final class OutputBuffersTest extends CoroutineTestCase
{
    /** Two coroutines each render into their own buffer and wait in the middle: nothing crosses. */
    public function testEachCoroutineKeepsItsOwnBuffersAcrossWaits(): void
    {
        $level = ob_get_level();
        $rendered = run(static function (): array {
            $rendered = [];
            $wg = new \Weft\Coroutine\WaitGroup();
            foreach (['a', 'b', 'c'] as $i => $who) {
                $wg->add();
                go(static function () use ($who, $i, &$rendered, $wg): void {
                    ob_start();
                    echo "<$who>";
                    ob_start();
                    echo "[$who";
                    sleep(0.002 * (3 - $i));
                    echo "$who]";
                    $inner = ob_get_clean();
                    sleep(0.001);
                    echo $inner, "</$who>";
                    $rendered[$who] = ob_get_clean();
                    $wg->done();
                });
            }
            $wg->wait();
            return $rendered;
        });
        // Each got its own buffers back whichever finished first (the 1-2 ms steps blur on a loaded machine).
        \ksort($rendered);
        self::assertSame(['a' => '<a>[aa]</a>', 'b' => '<b>[bb]</b>', 'c' => '<c>[cc]</c>'], $rendered);
        self::assertSame($level, ob_get_level(), 'the caller\'s buffers are left as they were');
    }

    /** A buffer opened with start() keeps its handler: a streamed body's echo reaches its own sink. */
    public function testAHandlerBufferKeepsItsHandlerAcrossWaits(): void
    {
        $sinks = run(static function (): array {
            $sinks = ['a' => '', 'b' => ''];
            $wg = new \Weft\Coroutine\WaitGroup();
            foreach (['a', 'b'] as $who) {
                $wg->add();
                go(static function () use ($who, &$sinks, $wg): void {
                    OutputBuffers::start(static function (string $chunk) use (&$sinks, $who): string {
                        $sinks[$who] .= $chunk;
                        return '';
                    }, 1);
                    echo "1$who ";
                    sleep(0.002);
                    echo "2$who";
                    ob_end_flush();
                    $wg->done();
                });
            }
            $wg->wait();
            return $sinks;
        });
        self::assertSame(['a' => '1a 2a', 'b' => '1b 2b'], $sinks);
    }

    /**
     * With the extension the handlers themselves move: a coroutine that waits inside its own buffer's
     * handler (a streamed body writing to a slow client) while others echo into their own buffers, and a
     * handler given to ob_start() directly, each keep working and nothing crosses.
     */
    public function testNativelyAHandlerThatWaitsWhileRunningAndAPlainCallbackKeepWorking(): void
    {
        if (!class_exists(\Weft\Ext\OutputStack::class)) {
            self::markTestSkipped('needs the native extension (Weft\Ext\OutputStack)');
        }
        $sinks = run(static function (): array {
            $sinks = ['a' => '', 'b' => '', 'c' => ''];
            $wg = new \Weft\Coroutine\WaitGroup();
            foreach (['a', 'b'] as $who) {
                $wg->add();
                go(static function () use ($who, &$sinks, $wg): void {
                    ob_start(static function (string $chunk) use (&$sinks, $who): string {
                        if ($chunk !== '') {
                            sleep(0.002); // waits inside the handler, as a write to a slow client does
                            $sinks[$who] .= $chunk;
                        }
                        return '';
                    }, 1);
                    echo "1$who ";
                    echo "2$who";
                    ob_end_flush();
                    $wg->done();
                });
            }
            $wg->add();
            go(static function () use (&$sinks, $wg): void {
                ob_start(static function (string $chunk) use (&$sinks): string {
                    $sinks['c'] .= strtoupper($chunk);
                    return '';
                });
                echo 'c';
                sleep(0.003);
                echo 'c';
                ob_end_flush();
                $wg->done();
            });
            $wg->wait();
            return $sinks;
        });
        self::assertSame(['a' => '1a 2a', 'b' => '1b 2b', 'c' => 'CC'], $sinks);
    }

    public function testWithoutItTheBuffersWouldCross(): void
    {
        // The same interleaving with the buffer opened outside the coroutines' own levels (below
        // their base, so not theirs to take along) shows what the mechanism prevents.
        ob_start();
        run(static function (): void {
            foreach (['a', 'b'] as $who) {
                go(static function () use ($who): void {
                    echo "[$who";
                    sleep(0.001);
                    echo "$who]";
                });
            }
        });
        self::assertSame('[a[ba]b]', ob_get_clean());
    }
}
