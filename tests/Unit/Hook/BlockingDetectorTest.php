<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Hook;

use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Weft\Ext\Watchdog;
use Weft\Hook\BlockingDetector;
use Weft\Http\Message\Request;
use Weft\Loop\Loop;

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
            Watchdog::stop();   // not there when setUp() skipped the test
        }
        Loop::reset('select');
    }

    public function testABlockingCallIsLoggedWithItsRequestAndSiteOncePerInterval(): void
    {
        $logger = new class () extends AbstractLogger {
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
        $detector = new BlockingDetector($logger, 0.08, 60.0);
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

    public function testWeftsOwnGzipHoldingTheLoopIsNamedAsSuchNotAsLoad(): void
    {
        $logger = new class () extends AbstractLogger {
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
}
