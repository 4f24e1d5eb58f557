<?php

declare(strict_types=1);

namespace Weft\Client\Mysql\Internal;

/**
 * The password scrambles of the authentication plugins. The password itself never goes over the wire
 * in clear, except caching_sha2_password's full authentication over TLS (or, RSA-encrypted, over TCP).
 *
 * @internal
 */
final class Auth
{
    public const NATIVE = 'mysql_native_password';
    public const CACHING_SHA2 = 'caching_sha2_password';

    /** caching_sha2_password "AuthMoreData" status bytes. */
    public const FAST_AUTH_SUCCESS = 0x03;
    public const PERFORM_FULL_AUTH = 0x04;
    public const REQUEST_PUBLIC_KEY = "\x02";

    private function __construct()
    {
    }

    public static function supports(string $plugin): bool
    {
        return $plugin === self::NATIVE || $plugin === self::CACHING_SHA2;
    }

    /** The first answer to a plugin's challenge (the 20-byte scramble). */
    public static function response(string $plugin, string $password, string $scramble): string
    {
        return match ($plugin) {
            self::NATIVE => self::nativePassword($password, $scramble),
            self::CACHING_SHA2 => self::cachingSha2Password($password, $scramble),
            default => throw new \LogicException("Unsupported authentication plugin $plugin"),
        };
    }

    /** mysql_native_password: SHA1(password) XOR SHA1(scramble . SHA1(SHA1(password))). */
    public static function nativePassword(string $password, string $scramble): string
    {
        if ($password === '') {
            return '';
        }
        $stage1 = \sha1($password, true);
        return $stage1 ^ \sha1($scramble . \sha1($stage1, true), true);
    }

    /** caching_sha2_password: SHA256(password) XOR SHA256(SHA256(SHA256(password)) . scramble). */
    public static function cachingSha2Password(string $password, string $scramble): string
    {
        if ($password === '') {
            return '';
        }
        $stage1 = \hash('sha256', $password, true);
        return $stage1 ^ \hash('sha256', \hash('sha256', $stage1, true) . $scramble, true);
    }

    /**
     * caching_sha2_password full authentication without TLS: the NUL-terminated password XORed with the
     * scramble (repeated to length), RSA-encrypted with the server's public key, OAEP padding.
     */
    public static function rsaEncryptPassword(string $password, string $scramble, string $publicKeyPem): string
    {
        $plain = $password . "\0";
        $mask = \str_repeat($scramble, \intdiv(\strlen($plain), \strlen($scramble)) + 1);
        $key = @\openssl_pkey_get_public($publicKeyPem);
        if ($key === false) {
            throw new \RuntimeException('The server\'s RSA public key cannot be read: ' . (\openssl_error_string() ?: 'invalid PEM'));
        }
        if (!\openssl_public_encrypt($plain ^ \substr($mask, 0, \strlen($plain)), $encrypted, $key, \OPENSSL_PKCS1_OAEP_PADDING)) {
            throw new \RuntimeException('RSA encryption of the password failed: ' . (\openssl_error_string() ?: 'unknown error'));
        }
        return $encrypted;
    }
}
