<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Hook;

use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Weft\Ext\Watchdog;
use Weft\Hook\BlockingDetector;
use Weft\Http\Message\Request;
use Weft\Loop\Loop;
use Weft\Tests\Support\Memcheck;

use function Weft\run;

/** The detector names the request and the call that held the loop, once per site per interval. */
final class BlockingDetectorTest extends TestCase
{
    protected function setUp(): void
    {
        if (!\class_exists(Watchdog::class, false)) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        if (\class_exists(Watchdog::class, false)) {
            Watchdog::stop();
        }
        Loop::reset('select');
    }

    public function testABlockingCallIsLoggedWithItsRequestAndSiteOncePerInterval(): void
    {
        $logger = self::logger();
        $detector = new BlockingDetector($logger, 0.08, 60.0, static fn (): string => 'GET /report?x=1'); // as the server's dispatcher names the request
        $driver = Loop::get();
        $detector->start($driver);
        $handler = static function (Request $request): void {
            for ($i = 0; $i < 2; $i++) {
                \usleep(300_000); // the same site twice: logged once
                \Weft\sleep(0.05); // the loop turns (and beats) in between
            }
        };
        run(static fn () => $handler(new Request('GET', '/report?x=1')));
        $detector->stop($driver);

        // (A loaded machine may also hold the loop elsewhere now and then: only this request's reports count.)
        $reports = \array_values(\array_filter($logger->lines, static fn ($l) => \str_contains($l, 'held the worker') && \str_contains($l, '/report')));
        self::assertCount(1, $reports, \implode("\n", $logger->lines));
        self::assertMatchesRegularExpression('/^warning: A blocking call held the worker for \d+ ms \(threshold 80 ms\) in GET \/report: usleep\(\) at \S+BlockingDetectorTest\.php:\d+; stack: /', $reports[0]);
        $stats = $detector->stats();
        self::assertGreaterThanOrEqual(2, $stats['blocked']);
        self::assertGreaterThanOrEqual(250.0, $stats['lag_max_ms']);
        self::assertSame(0.0, $detector->stats()['lag_ms'], 'the interval figure resets after each report');
    }

    /**
     * Loading code (an autoloader, the compile of an included file) is the first request's cost, not a
     * blocking call: it is left out of the held time, and a blocking call right after it is reported
     * at its own site.
     */
    public function testTimeLoadingCodeIsNotCounted(): void
    {
        $class = 'Weft\\Tests\\Unit\\Hook\\SlowlyLoaded' . \bin2hex(\random_bytes(4));
        $loader = static function (string $name) use ($class): void {
            if ($name === $class) {
                \usleep(200_000); // a slow autoloader: a cold disk, a big class map
                eval('namespace Weft\\Tests\\Unit\\Hook; final class ' . \substr($class, \strrpos($class, '\\') + 1) . ' {}');
            }
        };
        $function = 'weft_test_big_' . \bin2hex(\random_bytes(4));
        $file = \sys_get_temp_dir() . "/$function.php";
        $code = "<?php\n";
        $functions = Memcheck::cases(4000, 1000); // under valgrind a quarter still compiles for far over the limit
        for ($f = 0; $f < $functions; $f++) {
            // ~120 ms to compile here: many small functions (one huge one compiles in quadratic time).
            $code .= "function {$function}_$f(\$x) {\n" . \str_repeat("\$a = [\$x, 'text', 2 * \$x]; \$b = \$a[2] + \$x;\n", 10) . "return \$b;\n}\n";
        }
        \file_put_contents($file, $code);
        \spl_autoload_register($loader);
        $logger = self::logger();
        $detector = new BlockingDetector($logger, 0.05, 60.0, static fn (): string => 'GET /loading'); // as the server's dispatcher names the request
        $driver = Loop::get();
        $detector->start($driver);
        try {
            $line = 0;
            run(static function () use ($class, $file, &$line): void {
                (static function (Request $request) use ($class, $file, &$line): void {
                    new $class();
                    \Weft\sleep(0.02);
                    require $file;
                    // An ordinary call: where the watchdog would catch the compile above if it counted.
                    \str_repeat($file, 1);
                    \Weft\sleep(0.02);
                    new $class(); // loaded: no autoload
                    $line = __LINE__ + 1;
                    \usleep(150_000);
                })(new Request('GET', '/loading'));
            });
        } finally {
            $detector->stop($driver);
            \spl_autoload_unregister($loader);
            @\unlink($file);
        }
        $reports = \array_values(\array_filter($logger->lines, static fn ($l) => \str_contains($l, 'held the worker') && \str_contains($l, '/loading')));
        self::assertCount(1, $reports, \implode("\n", $logger->lines));
        self::assertMatchesRegularExpression('/held the worker for \d+ ms \(threshold 50 ms\) in GET \/loading: usleep\(\) at \S+BlockingDetectorTest\.php:' . $line . ';/', $reports[0]);
    }

    /** A framework rendering its error page (a debug page highlights every frame's source) is not reported. */
    public function testAFrameworkRenderingItsErrorPageIsNotReported(): void
    {
        require_once __DIR__ . '/fixtures/FakeErrorRenderer.php';
        $logger = self::logger();
        $detector = new BlockingDetector($logger, 0.05, 60.0, static fn (): string => 'GET /error-page'); // as the server's dispatcher names the request
        $driver = Loop::get();
        $detector->start($driver);
        try {
            run(static function (): void {
                (static function (Request $request): void {
                    (new \Illuminate\Foundation\Exceptions\Renderer\WeftTestRenderer())->render(static function (): void {
                        \usleep(150_000);
                    });
                    \Weft\sleep(0.02);
                })(new Request('GET', '/error-page'));
            });
        } finally {
            $detector->stop($driver);
        }
        $reports = \array_filter($logger->lines, static fn ($l) => \str_contains($l, 'held the worker') && \str_contains($l, '/error-page'));
        self::assertSame([], \array_values($reports));
        self::assertSame(0, $detector->stats()['blocked']);
    }

    /**
     * A pool that boots a further framework instance for a request holds the worker while it boots: Weft's
     * doing, not a call the application could change, so not reported (a hold in the request is).
     */
    public function testBootingAFurtherFrameworkInstanceIsNotReported(): void
    {
        $logger = self::logger();
        $detector = new BlockingDetector($logger, 0.05, 60.0, static fn (): string => 'GET /boot'); // as the server's dispatcher names the request
        $boots = 0;
        $pool = new \Weft\Bridge\InstancePool(static function () use (&$boots): \stdClass {
            if (++$boots === 2) {
                \usleep(150_000); // a slow boot, in a request
            }
            return new \stdClass();
        }, 2, \Weft\Coroutine\StateSet::capture());
        $pool->warm();
        $driver = Loop::get();
        $detector->start($driver);
        try {
            run(static function () use ($pool): void {
                $requests = [];
                for ($i = 0; $i < 2; $i++) {
                    $requests[] = \Weft\go(static function () use ($pool): void {
                        $instance = $pool->acquire();
                        \Weft\sleep(0.02);
                        $pool->release($instance);
                    });
                }
                foreach ($requests as $request) {
                    $request->join();
                }
                \usleep(150_000); // the same request then blocks in its own code: that is reported
                \Weft\sleep(0.02);
            });
        } finally {
            $detector->stop($driver);
            \gc_enable(); // the pool took PHP's collector over when its second instance booted
        }
        self::assertSame(2, $pool->booted());
        $reports = \array_values(\array_filter($logger->lines, static fn ($l) => \str_contains($l, 'held the worker') && \str_contains($l, '/boot')));
        self::assertCount(1, $reports, \implode("\n", $logger->lines));
        self::assertStringNotContainsString('InstancePool', $reports[0]);
    }

    /** Highlighting PHP source is what a debug error page does for every frame: not a blocking call. */
    public function testHighlightingSourceIsNotCounted(): void
    {
        self::skipUnderValgrind();
        $source = "<?php\n" . \str_repeat("\$a = [1, 'text', 2 * \$b]; // a line of some application\n", 30000);
        $logger = self::logger();
        $detector = new BlockingDetector($logger, 0.05, 60.0, static fn (): string => 'GET /highlight'); // as the server's dispatcher names the request
        $driver = Loop::get();
        $detector->start($driver);
        try {
            run(static function () use ($source): void {
                (static function (Request $request) use ($source): void {
                    \ob_start();
                    \highlight_string($source); // ~200 ms here
                    \ob_end_clean();
                    \str_repeat('x', 1); // an ordinary call, where the hold would be caught
                    \Weft\sleep(0.02);
                })(new Request('GET', '/highlight'));
            });
        } finally {
            $detector->stop($driver);
        }
        $reports = \array_filter($logger->lines, static fn ($l) => \str_contains($l, 'held the worker') && \str_contains($l, '/highlight'));
        self::assertSame([], \array_values($reports));
    }

    public function testWeftsOwnGzipHoldingTheLoopIsNamedAsSuchNotAsLoad(): void
    {
        self::skipUnderValgrind();
        $logger = self::logger();
        $detector = new BlockingDetector($logger, 0.05, 60.0);
        $driver = Loop::get();
        $detector->start($driver);
        // One slice as big as the body: what the gzip layer did before it compressed in slices.
        $sink = new class () implements \Weft\Http\Message\BodyWriter {
            public function write(string $chunk): void
            {
            }
        };
        \mt_srand(7);
        $text = '';
        while (\strlen($text) < 6 * 1024 * 1024) {
            $text .= \mt_rand() . ' words of a large text file ' . \mt_rand() . "\n";
        }
        run(static function () use ($sink, $text): void {
            $writer = new \Weft\Http\Compression\GzipBodyWriter($sink, 9, null, \strlen($text));
            $writer->write($text);
            $writer->finish();
        });
        $detector->stop($driver);
        $reports = \array_values(\array_filter($logger->lines, static fn ($l) => \str_contains($l, 'gzip compression of a response held the worker')));
        self::assertCount(1, $reports, \implode("\n", $logger->lines));
        self::assertStringStartsWith('warning: ', $reports[0]);
        self::assertStringContainsString('precompressed copy (FILE.gz next to a --static file), lower --gzip-level', $reports[0]);
        foreach ($logger->lines as $line) {
            self::assertStringNotContainsString('many requests at once', $line);
        }
    }

    /** Seconds of CPU in PHP and zlib natively, most of an hour under scripts/ext-memcheck.sh. */
    private static function skipUnderValgrind(): void
    {
        if (Memcheck::active()) {
            self::markTestSkipped('pure CPU work, far too slow under valgrind (scripts/ext-memcheck.sh)');
        }
    }

    private static function logger(): AbstractLogger
    {
        return new class () extends AbstractLogger {
            /** @var list<string> */
            public array $lines = [];

            public function log($level, \Stringable|string $message, array $context = []): void
            {
                $this->lines[] = $level . ': ' . \strtr((string) $message, \array_map(
                    static fn ($v) => \is_scalar($v) ? (string) $v : '',
                    \array_combine(\array_map(static fn ($k) => '{' . $k . '}', \array_keys($context)), $context),
                ));
            }
        };
    }
}
