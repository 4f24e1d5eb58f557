<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Cli;

use PHPUnit\Framework\TestCase;
use Weft\Cli\ControlCommand;

/** `bin/weft status` as a person reads it. */
final class StatusRenderTest extends TestCase
{
    public function testAWorkerServingAFrameworkSaysHowManyInstancesItBooted(): void
    {
        $out = ControlCommand::render(self::serverStatus([self::worker(1, 101) + ['app_instances' => 3], self::worker(2, 102)]));
        self::assertStringContainsString("  worker 1 has booted 3 framework instance(s)\n", $out);
        self::assertStringNotContainsString('worker 2 has booted', $out, 'a worker without a bridge reports no instances');
        self::assertMatchesRegularExpression('/^1 +101 +ready /m', $out);
    }

    /** @param list<array<string, mixed>> $workers @return array<string, mixed> */
    private static function serverStatus(array $workers): array
    {
        return ['master' => [
            'state' => 'running', 'address' => '127.0.0.1:8080', 'pid' => 100, 'mode' => 'coroutine', 'loop' => 'epoll',
            'uptime' => 12.0, 'restarts' => 0, 'rss' => 20 << 20, 'workers' => \count($workers),
        ], 'workers' => $workers];
    }

    /** @return array<string, mixed> */
    private static function worker(int $slot, int $pid): array
    {
        return ['slot' => $slot, 'pid' => $pid, 'generation' => 1, 'state' => 'ready', 'uptime' => 10.0, 'requests' => 5,
            'connections' => 1, 'coroutines' => 2, 'memory' => 4 << 20, 'rss' => 30 << 20];
    }
}
