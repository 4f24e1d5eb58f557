<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Mysql;

use PHPUnit\Framework\TestCase;
use Weft\Client\Mysql\Config;

final class ConfigTest extends TestCase
{
    public function testFromUrl(): void
    {
        $config = Config::fromUrl('mysql://us%40er:p%3Ass%2Fword@db.example:3307/my%20db?charset=latin1&tls=1&tls_verify=0&tls_ca=/ca.pem&connect_timeout=2.5&multi_statements=1');
        self::assertSame('db.example', $config->host);
        self::assertSame(3307, $config->port);
        self::assertSame('us@er', $config->user);
        self::assertSame('p:ss/word', $config->password);
        self::assertSame('my db', $config->database);
        self::assertSame('latin1', $config->charset);
        self::assertTrue($config->tls);
        self::assertFalse($config->tlsOptions['verify_peer']);
        self::assertSame('/ca.pem', $config->tlsOptions['cafile']);
        self::assertSame(2.5, $config->connectTimeout);
        self::assertTrue($config->multiStatements);
        self::assertSame('db.example:3307', $config->address());
    }

    public function testDefaults(): void
    {
        $config = Config::fromUrl('mariadb://localhost');
        self::assertSame('root', $config->user);
        self::assertSame('', $config->password);
        self::assertNull($config->database);
        self::assertSame(3306, $config->port);
        self::assertSame('utf8mb4', $config->charset);
        self::assertFalse($config->tls);
        self::assertSame(Config::DEFAULT_CONNECT_TIMEOUT, $config->connectTimeout);
        self::assertTrue($config->sslContextOptions()['verify_peer'], 'TLS verifies the server unless told not to');
        self::assertSame('[::1]:3306', Config::fromUrl('mysql://[::1]/x')->address());
        self::assertSame('unix:///run/mysqld.sock', Config::fromUrl('mysql://u@localhost/db?socket=/run/mysqld.sock')->address());
    }

    public function testWithMethodsReturnCopies(): void
    {
        $base = new Config(user: 'a', password: 'p', database: 'd');
        $changed = $base->withHost('10.0.0.1', 3310)->withUser('b')->withDatabase(null)->withTls(true, ['cafile' => '/x'])
            ->withConnectTimeout(1.0)->withMultiStatements()->withCharset('utf8mb3')->withPassword('q');
        self::assertSame('127.0.0.1', $base->host);
        self::assertSame('a', $base->user);
        self::assertSame('10.0.0.1:3310', $changed->address());
        self::assertSame(['b', 'q', null, true, '/x', 1.0, true, 'utf8mb3'], [
            $changed->user, $changed->password, $changed->database, $changed->tls, $changed->tlsOptions['cafile'],
            $changed->connectTimeout, $changed->multiStatements, $changed->charset,
        ]);
    }

    public function testThePasswordStaysOutOfDumps(): void
    {
        $config = Config::fromUrl('mysql://weft:hunter2@127.0.0.1/weft');
        self::assertStringNotContainsString('hunter2', \print_r($config, true));
        \ob_start();
        \var_dump($config);
        self::assertStringNotContainsString('hunter2', (string) \ob_get_clean());
    }

    public function testRejectsNonsense(): void
    {
        foreach (['postgres://x/y', 'not a url', 'mysql://h/db?tsl=1', 'mysql://h:0/db', 'mysql://h/db?charset=utf8;drop', 'mysql://h/db?connect_timeout=0'] as $url) {
            try {
                Config::fromUrl($url);
                self::fail("accepted $url");
            } catch (\InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
    }
}
