<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Mysql;

use PHPUnit\Framework\Attributes\RequiresPhpExtension;
use PHPUnit\Framework\TestCase;
use Weft\Client\Mysql\Internal\Auth;

/**
 * The scrambles are checked the way a server checks them (it knows only the stored double hash), not
 * by re-running the client's formula: an independent derivation of the same protocol rule.
 */
final class AuthTest extends TestCase
{
    private const SCRAMBLE = "\x3a\x21\x5f\x6b\x10\x7e\x44\x2c\x39\x51\x0b\x62\x73\x2d\x4e\x19\x58\x24\x6f\x35";

    public function testNativePasswordStage2MatchesTheServersStoredHash(): void
    {
        // SELECT PASSWORD('weft'), PASSWORD('secret') on MariaDB 10.11.
        self::assertSame('*9F2C75EF0DDD3C91AE0B6B6F05BE61182A270F2A', '*' . \strtoupper(\sha1(\sha1('weft', true))));
        self::assertSame('*14E65567ABDB5135D0CFD9A70B3032C179A49EE7', '*' . \strtoupper(\sha1(\sha1('secret', true))));
    }

    public function testNativePasswordVerifiesLikeTheServer(): void
    {
        foreach (['weft', 'secret', 'pässwörd with spaces', \str_repeat('x', 200)] as $password) {
            $stored = \sha1(\sha1($password, true), true); // mysql.user holds SHA1(SHA1(password))
            $response = Auth::nativePassword($password, self::SCRAMBLE);
            self::assertSame(20, \strlen($response));
            // Server side: SHA1(password) = response XOR SHA1(scramble . stored); it must hash to stored.
            $candidate = $response ^ \sha1(self::SCRAMBLE . $stored, true);
            self::assertSame($stored, \sha1($candidate, true), $password);
            self::assertNotSame($stored, \sha1(Auth::nativePassword($password . 'x', self::SCRAMBLE) ^ \sha1(self::SCRAMBLE . $stored, true), true));
        }
        self::assertSame('', Auth::nativePassword('', self::SCRAMBLE), 'an empty password sends an empty response');
    }

    public function testCachingSha2PasswordVerifiesLikeTheServer(): void
    {
        foreach (['weft', 'secret', 'pässwörd', \str_repeat('y', 100)] as $password) {
            // The server's cache holds SHA256(SHA256(password)).
            $stored = \hash('sha256', \hash('sha256', $password, true), true);
            $response = Auth::cachingSha2Password($password, self::SCRAMBLE);
            self::assertSame(32, \strlen($response));
            // Server side: SHA256(password) = response XOR SHA256(stored . scramble); it must hash to stored.
            $candidate = $response ^ \hash('sha256', $stored . self::SCRAMBLE, true);
            self::assertSame($stored, \hash('sha256', $candidate, true), $password);
            self::assertSame(\hash('sha256', $password, true), $candidate);
        }
        self::assertSame('', Auth::cachingSha2Password('', self::SCRAMBLE));
    }

    public function testCachingSha2KnownVector(): void
    {
        // Worked by hand from the formula, step by step with PHP's hash functions.
        $password = 'weft';
        $stage1 = \hash('sha256', 'weft', true);
        $stage2 = \hash('sha256', $stage1, true);
        $mask = \hash('sha256', $stage2 . self::SCRAMBLE, true);
        $expected = '';
        for ($i = 0; $i < 32; $i++) {
            $expected .= \chr(\ord($stage1[$i]) ^ \ord($mask[$i]));
        }
        self::assertSame(\bin2hex($expected), \bin2hex(Auth::cachingSha2Password($password, self::SCRAMBLE)));
    }

    #[RequiresPhpExtension('openssl')]
    public function testRsaFullAuthenticationDecryptsToThePasswordXoredWithTheScramble(): void
    {
        $key = \openssl_pkey_new(['private_key_bits' => 2048, 'private_key_type' => \OPENSSL_KEYTYPE_RSA]);
        $public = \openssl_pkey_get_details($key)['key'];
        foreach (['weft', 'a password longer than the twenty-byte scramble, so the mask repeats'] as $password) {
            $encrypted = Auth::rsaEncryptPassword($password, self::SCRAMBLE, $public);
            self::assertSame(256, \strlen($encrypted));
            self::assertTrue(\openssl_private_decrypt($encrypted, $plain, $key, \OPENSSL_PKCS1_OAEP_PADDING), 'OAEP padding');
            $unmasked = '';
            for ($i = 0, $n = \strlen($plain); $i < $n; $i++) {
                $unmasked .= \chr(\ord($plain[$i]) ^ \ord(self::SCRAMBLE[$i % 20]));
            }
            self::assertSame($password . "\0", $unmasked);
        }
    }

    public function testOnlyTheTwoPluginsAreSupported(): void
    {
        self::assertTrue(Auth::supports('mysql_native_password'));
        self::assertTrue(Auth::supports('caching_sha2_password'));
        self::assertFalse(Auth::supports('client_ed25519'));
        self::assertFalse(Auth::supports('sha256_password'));
    }
}
