<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/** Options that change how a running server behaves, each against a real server process. */
final class ServerOptionsTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/app.php';

    public function testMaxConnectionsRefusesTheExtraOneWith503(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--max-connections', '2']);
        $held = [new RawHttp($server->address()), new RawHttp($server->address())];
        foreach ($held as $client) {
            self::assertSame(200, $client->send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")->response()['status']);
        }
        $extra = new RawHttp($server->address());
        $response = $extra->response();
        self::assertSame(503, $response['status']);
        self::assertSame('close', $response['headers']['connection']);
        self::assertTrue($extra->isClosedByPeer());
        // The connections it holds are unaffected, and a freed slot serves again.
        self::assertSame(200, $held[0]->send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")->response()['status']);
        $held[1]->close();
        $served = ServerProcess::waitFor(static function () use ($server) {
            $response = RawHttp::get($server->address());
            return $response['status'] === 200 ? $response : null;
        }, 10, 'a freed slot');
        self::assertSame('Hello World', $served['body']);
        $server->stop();
    }

    public function testDebugPutsTheTraceInThe500(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--debug']);
        $response = RawHttp::get($server->address(), '/throw');
        self::assertSame(500, $response['status']);
        self::assertStringContainsString('DomainException: secret detail of the failure', $response['body']);
        self::assertStringContainsString('fixtures/app.php', $response['body']);
        $server->stop();
    }

    public function testPsr15Application(): void
    {
        $server = new ServerProcess([__DIR__ . '/../fixtures/psr15.php', '--workers', '1']);
        $client = new RawHttp($server->address());
        $response = $client->send(
            "POST /items?page=2 HTTP/1.1\r\nHost: t\r\nX-Test: psr\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nname=ab",
        )->response();
        self::assertSame(201, $response['status']);
        self::assertSame('yes', $response['headers']['x-psr']);
        self::assertSame(
            ['method' => 'POST', 'path' => '/items', 'query' => ['page' => '2'], 'parsed' => ['name' => 'ab'], 'header' => 'psr'],
            \json_decode($response['body'], true),
        );
        $client->close();
        $server->stop();
    }

    public function testSyncModeServesTheSameApplication(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2', '--mode', 'sync']);
        self::assertSame('Hello World', RawHttp::get($server->address())['body']);
        self::assertSame('one two three', RawHttp::get($server->address(), '/stream')['body']);
        self::assertSame(500, RawHttp::get($server->address(), '/throw')['status']);
        self::assertSame('slept', RawHttp::get($server->address(), '/sleep?s=0.01')['body']);
        self::assertSame('sync', $server->status()['master']['mode']);
        $server->stop();
    }
}
