<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Weft\Server\FatalPolicy;
use Weft\Server\InFlight;

/** What a worker says and does when PHP ends it: the requests in flight named and answered, never dropped. */
final class FatalPolicyTest extends TestCase
{
    private FatalPolicyTestLogger $logger;
    private int $abandoned = 0;
    private string $memoryLimit = '';

    protected function setUp(): void
    {
        $this->logger = new FatalPolicyTestLogger();
        $this->memoryLimit = (string) \ini_get('memory_limit');
        InFlight::reset();
        InFlight::from(static fn (int $count): array => \array_slice([
            ['request' => 'GET /old', 'since' => 1.0],
            ['request' => 'GET /big', 'since' => 2.0],
            ['request' => 'POST /form', 'since' => 3.0],
        ], 0, $count));
        InFlight::onFatal(function (): int {
            $this->abandoned++;
            return 3;
        }, static fn (): ?string => 'GET /big');
    }

    protected function tearDown(): void
    {
        InFlight::reset();
        \ini_set('memory_limit', $this->memoryLimit);
    }

    public function testTheMemoryLimitNamesTheRequestItHitFirstThenTheOthersAndAnswersThem(): void
    {
        FatalPolicy::shutdown(
            ['type' => \E_ERROR, 'message' => 'Allowed memory size of 134217728 bytes exhausted (tried to allocate 4096 bytes)', 'file' => '/srv/app.php', 'line' => 3],
            $this->logger,
            128 * 1024 * 1024,
        );
        self::assertSame([
            'critical: Fatal error (--memory-limit 128M) while running GET /big, GET /old, POST /form: '
            . 'Allowed memory size of 134217728 bytes exhausted (tried to allocate 4096 bytes) in /srv/app.php:3; the worker exits and is replaced',
        ], $this->logger->lines);
        self::assertSame(1, $this->abandoned, 'the requests in flight are answered (500 and 503s), not left empty');
        self::assertSame('-1', \ini_get('memory_limit'), 'room to log: the limit was just hit');
    }

    public function testAnotherFatalErrorWithNothingRunningSaysSo(): void
    {
        InFlight::reset();
        FatalPolicy::shutdown(['type' => \E_COMPILE_ERROR, 'message' => 'Cannot redeclare f()', 'file' => '/srv/f.php', 'line' => 9], $this->logger, 0);
        self::assertSame(['critical: Fatal error while running no request: Cannot redeclare f() in /srv/f.php:9; the worker exits and is replaced'], $this->logger->lines);
    }

    public function testAnExitInARequestIsNamedAndTheRequestsInFlightAnswered(): void
    {
        FatalPolicy::shutdown(null, $this->logger, 0);
        self::assertSame(['error: exit() in GET /big ends the worker, which is replaced; 2 other request(s) in flight get a 503'], $this->logger->lines);
        self::assertSame(1, $this->abandoned);
    }

    public function testAWorkerEndingNormallySaysNothing(): void
    {
        InFlight::reset();
        FatalPolicy::shutdown(['type' => \E_WARNING, 'message' => 'a warning', 'file' => '/srv/a.php', 'line' => 1], $this->logger, 0);
        self::assertSame([], $this->logger->lines);
        self::assertSame(0, $this->abandoned);
    }
}

/** @internal */
final class FatalPolicyTestLogger extends AbstractLogger
{
    /** @var list<string> */
    public array $lines = [];

    public function log($level, string|\Stringable $message, array $context = []): void
    {
        $this->lines[] = $level . ': ' . \preg_replace_callback('/\{(\w+)\}/', static fn (array $m): string => (string) ($context[$m[1]] ?? $m[0]), (string) $message);
    }
}
