<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Row;
use Weft\Bench\Scenario\UpstreamScenario;
use Weft\Bench\Settings;

/** `bench upstream --app curl|streams`: the hooks-off row is the blocking baseline beside the hooks-on row. */
final class UpstreamAppsTest extends TestCase
{
    /** @param array<string, mixed> $params */
    private static function row(array $params, float $rps): Row
    {
        // In the scenario's order: the app and the hooks come last.
        $row = new Row('upstream', ['mode' => 'coroutine', 'loop' => 'epoll', 'workers' => 2, 'concurrency' => 100, 'delay' => 3.0] + $params);
        $row->metrics = ['rps' => $rps, 'bound_rps' => 32.3, 'errors' => ['connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0, 'non2xx' => 0]];
        $row->status = Row::OK;
        return $row;
    }

    public function testTheHooksOffRowIsNotHeldToTheBoundAndIsCompared(): void
    {
        $scenario = new UpstreamScenario(new Settings(apps: ['curl']));
        $on = self::row(['app' => 'curl', 'hooks' => 'on'], 32.0);
        $off = self::row(['app' => 'curl', 'hooks' => 'off'], 0.6);
        $off->metrics['errors']['timeout'] = 80;

        $check = $scenario->checks([$on, $off])[0];
        self::assertTrue($check->holds, $check->evidence);
        self::assertStringNotContainsString('hooks off', $check->evidence);
        self::assertContains('curl handler (unchanged blocking code): 32.0 req/s with the hooks on, 0.60 req/s with them off (53.3 x).', $scenario->findings([$on, $off]));

        $on->metrics['rps'] = 20.0;
        self::assertFalse($scenario->checks([$on, $off])[0]->holds, 'the hooks-on row is held to the bound');
    }

    public function testRowLabelsNameTheHooks(): void
    {
        self::assertSame('coroutine epoll w=2 c=100 delay 3s curl hooks off', self::row(['app' => 'curl', 'hooks' => 'off'], 0.0)->label());
    }
}
