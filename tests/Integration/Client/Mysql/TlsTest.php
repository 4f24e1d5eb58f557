<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Mysql;

use PHPUnit\Framework\Attributes\DataProvider;
use Weft\Client\Mysql\Connection;
use Weft\Socket\TlsException;

/**
 * TLS against the test MariaDB, whose self-signed certificate scripts/services.sh keeps in
 * var/services/mariadb/tls/server-cert.pem.
 */
final class TlsTest extends MysqlTestCase
{
    private static function certificate(): string
    {
        $path = \dirname(__DIR__, 4) . '/var/services/mariadb/tls/server-cert.pem';
        if (!\is_readable($path)) {
            self::markTestSkipped("The test MariaDB has no TLS certificate ($path); restart it with scripts/services.sh");
        }
        return $path;
    }

    #[DataProvider('modes')]
    public function testTlsWithAVerifiedCertificate(string $mode): void
    {
        $ca = self::certificate();
        self::inMode($mode, function () use ($ca): void {
            $db = $this->connect(self::config()->withTls(true, ['cafile' => $ca]));
            self::assertTrue($db->isTls());
            self::assertMatchesRegularExpression('/^TLSv1\.[23]$/', $db->query("SHOW SESSION STATUS LIKE 'Ssl_version'")->fetchColumn('Value'));
            self::assertNotSame('', $db->query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")->fetchColumn('Value'));
            // Both protocols and a large value through the encrypted stream.
            $big = \str_repeat('tls', 400_000);
            self::assertSame($big, $db->query('SELECT ? AS v', [$big])->fetchColumn());
            self::assertSame(\strlen($big), $db->query("SELECT LENGTH(REPEAT('tls', 400000))")->fetchColumn());
            self::assertTrue($db->ping());
        });
    }

    public function testTlsFromAUrlWithoutVerification(): void
    {
        self::certificate();
        $db = Connection::connect(self::url() . '?tls=1&tls_verify=0');
        self::assertTrue($db->isTls());
        self::assertSame(1, $db->query('SELECT 1')->fetchColumn());
        $db->close();
    }

    public function testAnUntrustedCertificateIsRefused(): void
    {
        self::certificate();
        $this->expectException(TlsException::class);
        Connection::connect(self::config()->withTls(true, ['cafile' => '/etc/ssl/certs/ca-certificates.crt']));
    }
}
