<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Pgsql;

use PHPUnit\Framework\TestCase;
use Weft\Client\Pgsql\Config;

final class ConfigTest extends TestCase
{
    public function testFromUrl(): void
    {
        $config = Config::fromUrl('pgsql://weft:s%40cret@127.0.0.1:15432/weft?connect_timeout=2.5&sslmode=disable&application_name=app');
        self::assertSame('127.0.0.1', $config->host);
        self::assertSame(15432, $config->port);
        self::assertSame('weft', $config->user);
        self::assertSame('s@cret', $config->password);
        self::assertSame('weft', $config->database);
        self::assertSame(2.5, $config->connectTimeout);
        self::assertSame(['sslmode' => 'disable', 'application_name' => 'app'], $config->options);
        self::assertFalse($config->decodeJson);
        self::assertSame('127.0.0.1:15432', $config->address());
    }

    public function testDefaultsAndOtherSchemes(): void
    {
        $config = Config::fromUrl('postgres://localhost');
        self::assertSame([5432, 'postgres', null, null, Config::DEFAULT_CONNECT_TIMEOUT], [
            $config->port, $config->user, $config->password, $config->database, $config->connectTimeout,
        ]);
        self::assertSame('::1', Config::fromUrl('postgresql://u@[::1]:6000/d?decode_json=1')->host);
        self::assertTrue(Config::fromUrl('postgresql://u@[::1]:6000/d?decode_json=1')->decodeJson);
        self::assertSame('[::1]:6000', Config::fromUrl('postgresql://u@[::1]:6000/d')->address());
    }

    public function testConnectionStringQuotesValues(): void
    {
        $config = Config::defaults()->withHost('db', 6432)->withUser('us er', "it's\\x")->withDatabase('d')
            ->withConnectTimeout(0.2)->withOption('sslmode', 'require');
        self::assertSame(
            "sslmode='require' host='db' port='6432' user='us er' password='it\\'s\\\\x' dbname='d' connect_timeout='1'",
            $config->toConnectionString(),
        );
    }

    public function testWithReturnsCopies(): void
    {
        $a = Config::defaults();
        $b = $a->withDecodeJson()->withConnectTimeout(3.0);
        self::assertFalse($a->decodeJson);
        self::assertTrue($b->decodeJson);
        self::assertSame(3.0, $b->connectTimeout);
        self::assertSame(Config::DEFAULT_CONNECT_TIMEOUT, $a->connectTimeout);
    }

    public function testRejectsOtherSchemesWithoutLeakingThePassword(): void
    {
        try {
            Config::fromUrl('mysql://u:topsecret@h/d');
            self::fail('no exception');
        } catch (\InvalidArgumentException $e) {
            self::assertStringNotContainsString('topsecret', $e->getMessage());
            self::assertStringContainsString('pgsql://', $e->getMessage());
        }
    }

    public function testRejectsInvalidValues(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Config::defaults()->withConnectTimeout(0.0);
    }

    public function testRejectsInvalidOptionNames(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Config::defaults()->withOption("x' host='evil", 'y');
    }
}
