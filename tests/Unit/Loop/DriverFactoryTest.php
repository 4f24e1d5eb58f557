<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Loop;

use PHPUnit\Framework\TestCase;
use Weft\Loop\DriverFactory;
use Weft\Loop\NativeLoopMissing;

final class DriverFactoryTest extends TestCase
{
    /** The loop says what is missing in its own words; how to build the extension is the command line's to say. */
    public function testTheEpollLoopWithoutTheExtensionIsATypedErrorThatNamesTheWayOut(): void
    {
        // In a PHP without the extension, whichever way this suite runs.
        $script = <<<'PHP'
            require $argv[1];
            try {
                Weft\Loop\DriverFactory::create('epoll');
                echo "no NativeLoopMissing\n";
            } catch (Weft\Loop\NativeLoopMissing $e) {
                echo get_class($e), "\n", $e->getMessage(), "\n";
            }
            echo Weft\Loop\DriverFactory::resolve('auto'), "\n";
            PHP;
        $process = \proc_open(
            [\PHP_BINARY, '-n', '-d', 'memory_limit=256M', '-r', $script, \dirname(__DIR__, 3) . '/vendor/autoload.php'],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
        );
        self::assertIsResource($process);
        $output = (string) \stream_get_contents($pipes[1]);
        $errors = (string) \stream_get_contents($pipes[2]);
        \proc_close($process);
        $lines = \explode("\n", \trim($output));
        self::assertSame(NativeLoopMissing::class, $lines[0] ?? null, $output . $errors);
        self::assertStringStartsWith(NativeLoopMissing::MESSAGE, $lines[1] ?? '');
        self::assertStringContainsString('select loop', $output);
        self::assertSame('select', \end($lines));
    }

    public function testAnUnknownBackendIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        DriverFactory::create('kqueue');
    }
}
