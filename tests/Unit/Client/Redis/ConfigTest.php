<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Redis;

use PHPUnit\Framework\TestCase;
use Weft\Client\Redis\Config;

final class ConfigTest extends TestCase
{
    public function testDefaults(): void
    {
        $c = Config::defaults();
        self::assertSame(['127.0.0.1', 6379, null, null, 0, 2, 5.0, null, false], [
            $c->host, $c->port, $c->username, $c->password, $c->database, $c->protocol, $c->connectTimeout, $c->timeout, $c->tls,
        ]);
        self::assertSame('127.0.0.1:6379', $c->address());
    }

    public function testFullUrl(): void
    {
        $c = Config::fromUrl('redis://user:p%40ss@10.0.0.5:6380/2?protocol=3&timeout=2');
        self::assertSame(['10.0.0.5', 6380, 'user', 'p@ss', 2, 3, 2.0, 2.0], [
            $c->host, $c->port, $c->username, $c->password, $c->database, $c->protocol, $c->connectTimeout, $c->timeout,
        ]);
        self::assertSame('redis://user@10.0.0.5:6380/2', $c->describe(), 'no password in messages');
    }

    public function testPasswordOnly(): void
    {
        $c = Config::fromUrl('redis://:secret@localhost');
        self::assertNull($c->username);
        self::assertSame('secret', $c->password);
        self::assertSame(6379, $c->port);
        self::assertSame('redis://:***@localhost:6379/0', $c->describe());
    }

    public function testOtherForms(): void
    {
        self::assertTrue(Config::fromUrl('rediss://h:1')->tls);
        $unix = Config::fromUrl('unix:///run/redis.sock?db=3');
        self::assertSame('unix:///run/redis.sock', $unix->address());
        self::assertSame(3, $unix->database);
        self::assertSame('[::1]:6379', Config::fromUrl('redis://[::1]:6379')->address());
        $c = Config::fromUrl('redis://h?connect_timeout=1.5&read_timeout=0.25');
        self::assertSame([1.5, 0.25], [$c->connectTimeout, $c->timeout]);
    }

    public function testWithersReturnCopies(): void
    {
        $a = Config::defaults();
        $b = $a->withHost('redis.local')->withPort(7000)->withAuth('pw', 'me')->withDatabase(4)->withProtocol(3)
            ->withConnectTimeout(1.0)->withTimeout(3.0)->withTls();
        self::assertSame('127.0.0.1', $a->host);
        self::assertSame(['redis.local', 7000, 'me', 'pw', 4, 3, 1.0, 3.0, true], [
            $b->host, $b->port, $b->username, $b->password, $b->database, $b->protocol, $b->connectTimeout, $b->timeout, $b->tls,
        ]);
        self::assertNull($b->withTimeout(null)->timeout);
        self::assertNull($b->withAuth(null)->password);
    }

    public function testInvalidInput(): void
    {
        foreach ([
            'http://h',
            'redis://h/x',
            'redis://h?protocol=4',
            'redis://h?bogus=1',
            'redis://h?timeout=abc',
            'redis://justauser@h',
            'not a url',
        ] as $url) {
            try {
                Config::fromUrl($url);
                self::fail("accepted $url");
            } catch (\InvalidArgumentException) {
                self::assertTrue(true);
            }
        }
    }
}
