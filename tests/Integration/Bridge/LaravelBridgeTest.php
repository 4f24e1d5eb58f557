<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

use Weft\Tests\Support\Curl;

/** A Laravel 12 application (tests/Fixtures/laravel-app) under `bin/weft serve`. */
final class LaravelBridgeTest extends FrameworkBridgeTestCase
{
    protected static function app(): string
    {
        return 'laravel-app';
    }

    protected static function errorPageMarker(): string
    {
        return 'Server Error';
    }

    protected static function filesDir(): string
    {
        return 'storage/app';
    }

    protected static function devEnvironment(): string
    {
        return 'local';
    }

    public function testConfigAuthAndUrlStateBelongToOneRequest(): void
    {
        $base = $this->serve();
        $first = json_decode(Curl::get("$base/state?marker=one&login=7")['body'], true);
        self::assertSame(['config' => null, 'user' => null], ['config' => $first['config'], 'user' => $first['user']]);
        // config() written and a user logged in by the first request: the second sees neither.
        $second = json_decode(Curl::get("$base/state?marker=two", ['Host' => 'other.test'])['body'], true);
        self::assertNull($second['config']);
        self::assertNull($second['user']);
        self::assertSame('http://other.test/state', $second['url']);
    }

    /**
     * The services boot built are shared by every request: what a request changes on them through
     * ordinary calls (App::setLocale(), View::share(), Log::shareContext(), the array cache) is put
     * back before the next request, which would otherwise serve the next visitor in French with
     * the last visitor's name in its views and logs.
     */
    public function testSharedServicesAreAsBootLeftThemForEachRequest(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(mode: $mode);
            $fresh = ['locale' => 'en', 'translator' => 'en', 'view' => null, 'log' => [], 'cache' => null, 'console' => false];
            foreach (['alice', 'bob', 'carol'] as $visitor) {
                $response = Curl::get("$base/shared?visitor=$visitor");
                self::assertSame(200, $response['status'], $response['body']);
                self::assertSame($fresh, json_decode($response['body'], true), "$mode, before $visitor's request");
            }
        }
    }

    public function testScopedInstancesAndTerminatingCallbacksBelongToOneRequest(): void
    {
        $base = $this->serve();
        for ($i = 0; $i < 3; $i++) {
            self::assertSame(['same' => true, 'hits' => 1], json_decode(Curl::get("$base/scoped")['body'], true));
        }
        @unlink(\dirname(__DIR__, 3) . '/var/fixtures/laravel-app/storage/app/terminated.txt');
        self::assertSame('registered', Curl::get("$base/terminate-probe?id=first")['body']);
        self::assertSame("first\n", Curl::get("$base/terminated")['body']);
        Curl::get("$base/terminated?id=later");
        self::assertSame("first\n", Curl::get("$base/terminated")['body'], 'the callback ran once, after its own request');
    }

    public function testTheDatabaseConnectionStaysOpenAndAnOpenTransactionIsRolledBack(): void
    {
        $url = getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft';
        $base = $this->serve(['DB_CONNECTION' => 'mysql', 'DB_URL' => $url]);
        $first = json_decode(Curl::get("$base/db")['body'], true);
        self::assertSame(0, $first['transaction_level']);
        self::assertGreaterThan(0, $first['connection']);
        self::assertSame(500, Curl::get("$base/db-fail")['status']);
        // The same connection (resident, not reconnected per request), with no transaction left open.
        self::assertSame($first, json_decode(Curl::get("$base/db")['body'], true));
        self::assertStringContainsString(
            'GET /db-fail left a transaction open on the "mysql" database connection; it was rolled back',
            $this->serverOutput(),
        );
    }
}
