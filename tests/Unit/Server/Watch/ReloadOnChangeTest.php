<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server\Watch;

use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Server\MasterHook;
use Weft\Server\Watch\ChangeSource;
use Weft\Server\Watch\ReloadOnChange;

/**
 * The debounce and the reload bookkeeping on a real loop, with changes fed by hand: a burst makes one
 * reload, a change during a reload makes one more after it, nothing after a stop.
 */
final class ReloadOnChangeTest extends TestCase
{
    private ?\Closure $feed = null;
    /** @var list<string> */
    private array $lines = [];
    private int $reloads = 0;
    private ReloadOnChange $hook;
    private Driver $driver;

    protected function setUp(): void
    {
        $this->driver = Loop::reset('select');
        $source = new class ($this->feed) implements ChangeSource {
            public function __construct(private ?\Closure &$feed)
            {
            }

            public function start(Driver $driver, \Closure $onChange): void
            {
                $this->feed = $onChange;
            }

            public function latency(): float
            {
                return 0.0;
            }

            public function watched(): int
            {
                return 1;
            }

            public function name(): string
            {
                return 'by hand';
            }

            public function stop(): void
            {
            }

            public function forked(): void
            {
            }
        };
        $logger = new class ($this->lines) extends AbstractLogger {
            public function __construct(private array &$lines)
            {
            }

            public function log($level, string|\Stringable $message, array $context = []): void
            {
                $this->lines[] = \strtr((string) $message, \array_combine(\array_map(static fn ($k) => '{' . $k . '}', \array_keys($context)), \array_map('strval', $context)));
            }
        };
        $this->hook = new ReloadOnChange($source, $logger, '/app', 0.05, function (): void {
            $this->reloads++;
            $this->hook->event(MasterHook::RELOADING);
        });
        $this->hook->start(static fn () => []);
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    public function testABurstMakesOneReloadNamingEveryFileOnce(): void
    {
        for ($i = 0; $i < 20; $i++) {
            $this->driver->delay($i * 0.005, fn () => ($this->feed)(['/app/a.php', "/app/lib/f$i.php"]));
        }
        $this->runFor(0.4);
        self::assertSame(1, $this->reloads);
        self::assertSame('reloading: 21 files changed: a.php, lib/f0.php, lib/f1.php, lib/f10.php, lib/f11.php, lib/f12.php, lib/f13.php, lib/f14.php, lib/f15.php, lib/f16.php and 11 more', \end($this->lines));
    }

    public function testAChangeDuringAReloadMakesOneMoreOnceItIsOver(): void
    {
        ($this->feed)(['/app/a.php']);
        $this->runFor(0.15);
        self::assertSame(1, $this->reloads);
        // While the new workers boot (no RELOADED yet), another save: no second reload now...
        ($this->feed)(['/elsewhere/b.php']);
        $this->runFor(0.15);
        self::assertSame(1, $this->reloads);
        // ... but once the first is over (done or failed alike).
        $this->hook->event(MasterHook::RELOADED);
        $this->runFor(0.15);
        self::assertSame(2, $this->reloads);
        self::assertSame('reloading: 1 file changed: /elsewhere/b.php', \end($this->lines));
    }

    public function testNothingReloadsOnceStopping(): void
    {
        ($this->feed)(['/app/a.php']);
        $this->hook->event(MasterHook::STOPPING);
        $this->runFor(0.15);
        self::assertSame(0, $this->reloads);
    }

    private function runFor(float $seconds): void
    {
        $this->driver->delay($seconds, fn () => $this->driver->stop());
        $this->driver->run();
    }
}
