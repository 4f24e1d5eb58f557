<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Http;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Client\Http\Url;

final class UrlTest extends TestCase
{
    public function testParse(): void
    {
        $url = Url::parse('HTTPS://user:p%40ss@Example.COM:8443/a/b?x=1&y=2#frag');
        self::assertSame('https', $url->scheme);
        self::assertSame('example.com', $url->host);
        self::assertSame(8443, $url->port);
        self::assertSame('/a/b?x=1&y=2', $url->target);
        self::assertSame(['user', 'p@ss'], [$url->user, $url->password]);
        self::assertSame('https://example.com:8443', $url->origin());
        self::assertSame('example.com:8443', $url->authority());
        self::assertSame('https://example.com:8443/a/b?x=1&y=2', (string) $url, 'no credentials, no fragment');
    }

    public function testDefaultsAndIpv6(): void
    {
        $url = Url::parse('http://127.0.0.1');
        self::assertSame([80, '/', '127.0.0.1', 'http://127.0.0.1:80'], [$url->port, $url->target, $url->authority(), $url->origin()]);
        self::assertSame(443, Url::parse('https://h?q')->port);
        self::assertSame('/?q', Url::parse('https://h?q')->target);
        $v6 = Url::parse('http://[::1]:8080/x');
        self::assertSame('::1', $v6->host);
        self::assertSame('[::1]:8080', $v6->authority());
        self::assertSame('[::1]:8080', $v6->socketAddress());
    }

    /** @return iterable<array{string, string}> */
    public static function references(): iterable
    {
        yield 'absolute' => ['https://other.example/x', 'https://other.example/x'];
        yield 'scheme-relative' => ['//cdn.example/y', 'http://cdn.example/y'];
        yield 'absolute path' => ['/root?q=1', 'http://h.example:81/root?q=1'];
        yield 'relative' => ['c', 'http://h.example:81/a/b/c'];
        yield 'dot segments' => ['../../../up/./here', 'http://h.example:81/up/here'];
        yield 'trailing dot-dot' => ['..', 'http://h.example:81/a/'];
        yield 'query only' => ['?page=2', 'http://h.example:81/a/b/file?page=2'];
        yield 'fragment only' => ['#top', 'http://h.example:81/a/b/file?x=1'];
    }

    #[DataProvider('references')]
    public function testResolve(string $reference, string $expected): void
    {
        self::assertSame($expected, (string) Url::parse('http://h.example:81/a/b/file?x=1')->resolve($reference));
    }

    /** @return iterable<array{string}> */
    public static function invalid(): iterable
    {
        yield ['ftp://h/'];
        yield ['/just/a/path'];
        yield ['http://'];
        yield ["http://h/a b"];
        yield ["http://h/\r\nX: y"];
    }

    #[DataProvider('invalid')]
    public function testInvalid(string $url): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Url::parse($url);
    }

    public function testMessagesHideThePassword(): void
    {
        try {
            Url::parse('ftp://me:hunter2@h/');
            self::fail('no exception');
        } catch (\InvalidArgumentException $e) {
            self::assertStringNotContainsString('hunter2', $e->getMessage());
        }
    }
}
