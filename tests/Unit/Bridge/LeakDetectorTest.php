<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bridge;

use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Weft\Bridge\LeakDetector;

final class LeakDetectorTest extends TestCase
{
    /** @var list<string> */
    private array $warnings = [];

    private function detector(array $ignore = []): LeakDetector
    {
        $warnings = &$this->warnings;
        return new LeakDetector(new class ($warnings) extends AbstractLogger {
            public function __construct(private array &$warnings)
            {
            }

            public function log($level, \Stringable|string $message, array $context = []): void
            {
                $this->warnings[] = "$level: $message";
            }
        }, $ignore);
    }

    protected function tearDown(): void
    {
        LeakyStatics::$cache = [];
        LeakyStatics::$counter = 0;
    }

    public function testAChangedStaticIsReportedOnceAfterThePathWarmedUp(): void
    {
        $detector = $this->detector();
        self::assertSame([], $detector->check('GET /a', []));      // baseline
        LeakyStatics::$cache[] = 'x';
        self::assertSame([], $detector->check('GET /b', []));      // first time down /b: warm-up
        LeakyStatics::$cache[] = 'y';
        self::assertSame(['static ' . LeakyStatics::class . '::$cache'], $detector->check('GET /b', []));
        LeakyStatics::$cache[] = 'z';
        self::assertSame([], $detector->check('GET /b', []), 'reported once per worker');
        LeakyStatics::$counter++;
        self::assertSame(['static ' . LeakyStatics::class . '::$counter'], $detector->check('GET /b', []));
        self::assertCount(2, $this->warnings);
        self::assertStringContainsString('warning: state leak: GET /b changed static ' . LeakyStatics::class . '::$cache', $this->warnings[0]);
    }

    public function testAServicePropertyChangeIsNamedWithTheServiceId(): void
    {
        $service = new LeakyService();
        $detector = $this->detector();
        $detector->check('GET /x', ['cart' => $service]);
        $detector->check('GET /x', ['cart' => $service]);
        $service->items[] = 'book';
        self::assertSame([LeakyService::class . ' (service "cart")->items'], $detector->check('GET /x', ['cart' => $service]));
        // Put back as it was: nothing to report, the fingerprint is the value, not a version.
        $service->items = [];
        self::assertSame([], $detector->check('GET /x', ['cart' => $service]));
    }

    public function testUnchangedStateAndIgnoredEntriesAreNotReported(): void
    {
        $service = new LeakyService();
        $detector = $this->detector([LeakyService::class . '->items', LeakyStatics::class . '::$cache']);
        $detector->check('GET /x', [LeakyService::class => $service]);
        $detector->check('GET /x', [LeakyService::class => $service]);
        $service->items[] = 'ignored';
        LeakyStatics::$cache[] = 'ignored too';
        self::assertSame([], $detector->check('GET /x', [LeakyService::class => $service]));
        $service->total = 3;
        self::assertSame([LeakyService::class . '->total'], $detector->check('GET /x', [LeakyService::class => $service]));
    }

    public function testACollectionReplacedByAnEmptyOneIsAResetAndOneThatGrowsIsALeak(): void
    {
        $service = new LeakyService();
        $service->collaborator = new \ArrayObject();
        $detector = $this->detector();
        $detector->check('GET /x', ['s' => $service]);
        $detector->check('GET /x', ['s' => $service]);
        $service->collaborator = new \ArrayObject();
        self::assertSame([], $detector->check('GET /x', ['s' => $service]));
        $service->collaborator[] = 'kept';
        self::assertSame([LeakyService::class . ' (service "s")->collaborator'], $detector->check('GET /x', ['s' => $service]));
    }

    public function testAPropertyEntryCoversSubclasses(): void
    {
        $service = new LeakySubService();
        $detector = $this->detector([LeakyParent::class . '->startedAt']);
        $detector->check('GET /x', ['k' => $service]);
        $detector->check('GET /x', ['k' => $service]);
        $service->startedAt = 2.5;
        self::assertSame([], $detector->check('GET /x', ['k' => $service]));
    }

    public function testNestedArraysAndReplacedObjectsCount(): void
    {
        $service = new LeakyService();
        $detector = $this->detector();
        $detector->check('GET /x', ['s' => $service]);
        $detector->check('GET /x', ['s' => $service]);
        $service->nested['a']['b'] = 1;
        self::assertSame([LeakyService::class . ' (service "s")->nested'], $detector->check('GET /x', ['s' => $service]));
        $keep = $service->collaborator;
        $service->collaborator = new \stdClass();
        self::assertSame([LeakyService::class . ' (service "s")->collaborator'], $detector->check('GET /x', ['s' => $service]));
        unset($keep);
    }
}

final class LeakyStatics
{
    /** @var list<string> */
    public static array $cache = [];
    public static int $counter = 0;
}

final class LeakyService
{
    /** @var list<string> */
    public array $items = [];
    public int $total = 0;
    /** @var array<string, mixed> */
    public array $nested = ['a' => []];
    public object $collaborator;

    public function __construct()
    {
        $this->collaborator = new \stdClass();
    }
}

class LeakyParent
{
    public float $startedAt = 0.0;
}

final class LeakySubService extends LeakyParent
{
}
