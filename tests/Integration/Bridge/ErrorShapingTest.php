<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Curl;
use Weft\Tests\Support\ServerProcess;

/**
 * An undecodable body reaches the application: a PSR-15 middleware catches the BadRequest that
 * getParsedBody() throws and answers with its own JSON and request id; without such a middleware
 * the server's 400 is the default.
 */
final class ErrorShapingTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/psr15-errors.php';

    /** @return iterable<string, array{string}> */
    public static function modes(): iterable
    {
        yield 'coroutine' => ['coroutine'];
        yield 'sync' => ['sync'];
    }

    #[DataProvider('modes')]
    public function testTheApplicationShapesTheErrorOfAnUndecodableBody(string $mode): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--mode', $mode]);
        $base = 'http://' . $server->address();

        $json = Curl::request('POST', "$base/items", ['Content-Type' => 'application/json', 'X-Request-Id' => 'req-42'], '{"name": ');
        self::assertSame(422, $json['status']);
        self::assertSame(['application/problem+json'], $json['headers']['content-type']);
        self::assertSame(['req-42'], $json['headers']['x-request-id']);
        $error = json_decode($json['body'], true);
        self::assertSame('invalid_body', $error['error']);
        self::assertSame('req-42', $error['request_id']);
        self::assertStringStartsWith('Invalid JSON body', $error['detail']);

        $multipart = Curl::request('POST', "$base/upload", ['Content-Type' => 'multipart/form-data; boundary=zz'], "no boundary here");
        self::assertSame(422, $multipart['status']);
        self::assertStringContainsString('multipart', json_decode($multipart['body'], true)['detail']);

        // The same request with a valid body goes through; the id is the middleware's own.
        $ok = Curl::request('POST', "$base/items", ['Content-Type' => 'application/json'], '{"name": "a"}');
        self::assertSame(200, $ok['status']);
        self::assertSame(['parsed' => ['name' => 'a']], json_decode($ok['body'], true));
        self::assertMatchesRegularExpression('/^[0-9a-f]{16}$/', $ok['headers']['x-request-id'][0]);

        // Nobody catches it: the default 400, and the connection and worker serve on.
        $raw = Curl::request('POST', "$base/raw", ['Content-Type' => 'application/json'], '{');
        self::assertSame(400, $raw['status']);
        self::assertStringContainsString('Invalid JSON body', $raw['body']);
        self::assertSame(200, Curl::request('POST', "$base/raw", ['Content-Type' => 'application/json'], '[1]')['status']);
        $server->stop();
    }
}
