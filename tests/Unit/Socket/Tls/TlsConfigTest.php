<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Socket\Tls;

use PHPUnit\Framework\TestCase;
use Weft\Socket\Tls\Certificate;
use Weft\Socket\Tls\TicketKeys;
use Weft\Socket\Tls\TlsConfig;

final class TlsConfigTest extends TestCase
{
    public function testEntriesPairCertificatesAndKeysByServerName(): void
    {
        $config = TlsConfig::fromOptions(['/c/default.pem', 'API.example.org=/c/api.pem', '*.example.net=/c/net.pem'], ['/c/default.key', 'api.example.org=/c/api.key']);
        self::assertEquals([
            new Certificate(null, '/c/default.pem', '/c/default.key'),
            new Certificate('api.example.org', '/c/api.pem', '/c/api.key'),
            new Certificate('*.example.net', '/c/net.pem', '/c/net.pem'), // its key in the same file
        ], $config->certificates);
        $options = $config->contextOptions();
        self::assertSame('/c/default.pem', $options['local_cert']);
        self::assertSame(['api.example.org' => ['local_cert' => '/c/api.pem', 'local_pk' => '/c/api.key'], '*.example.net' => ['local_cert' => '/c/net.pem', 'local_pk' => '/c/net.pem']], $options['SNI_server_certs']);
        self::assertSame('http/1.1', $options['alpn_protocols']);
        self::assertSame(TlsConfig::INTERMEDIATE_CIPHERS, $options['ciphers']);
        self::assertFalse($options['verify_peer']);
    }

    public function testRelativePathsBecomeAbsolute(): void
    {
        $config = TlsConfig::fromOptions(['cert.pem'], []);
        self::assertSame(\getcwd() . '/cert.pem', $config->certificates[0]->certFile);
        self::assertSame(\getcwd() . '/cert.pem', $config->certificates[0]->keyFile);
    }

    /** @return iterable<string, array{list<string>, list<string>, string}> */
    public static function badOptions(): iterable
    {
        yield 'no default' => [['a.test=/c/a.pem'], [], 'needs a default certificate'];
        yield 'two defaults' => [['/c/a.pem', '/c/b.pem'], [], 'two files for the default'];
        yield 'a key without its certificate' => [['/c/a.pem'], ['b.test=/c/b.key'], 'gives a key for b.test'];
        yield 'not a name' => [['/c/a.pem', 'bad name=/c/b.pem'], [], 'does not start with a server name'];
        yield 'no file' => [['/c/a.pem', 'b.test='], [], 'names no file'];
    }

    #[\PHPUnit\Framework\Attributes\DataProvider('badOptions')]
    public function testBadEntriesAreRefusedNamingThem(array $certs, array $keys, string $message): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage($message);
        TlsConfig::fromOptions($certs, $keys);
    }

    public function testTicketKeysAreTheSameForOneSecretAndRotate(): void
    {
        $secret = \random_bytes(32);
        $period = TicketKeys::period(\microtime(true));
        $keys = (new TicketKeys($secret))->keysFor($period);
        self::assertSame(240, \strlen($keys));
        self::assertSame($keys, (new TicketKeys($secret))->keysFor($period), 'every worker derives the same keys');
        $next = (new TicketKeys($secret))->keysFor($period + 1);
        self::assertSame(\substr($keys, 160, 80), \substr($next, 0, 80), "the next period's key is accepted ahead");
        self::assertSame(\substr($keys, 0, 80), \substr($next, 80, 80), 'the previous key is still accepted');
        self::assertNotSame($keys, TicketKeys::generate()->keysFor($period));
    }
}
