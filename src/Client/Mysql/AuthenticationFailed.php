<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

/**
 * The server refused the credentials (1045 access denied, 1698 ...), or the account uses an
 * authentication method this client does not speak.
 */
final class AuthenticationFailed extends QueryError
{
    /** Client-side code, as in libmysqlclient (CR_AUTH_PLUGIN_CANNOT_LOAD). */
    public const UNSUPPORTED_PLUGIN = 2059;

    public static function rejected(string $user, string $address, int $code, string $sqlState, string $message): self
    {
        return new self(
            \sprintf('Authentication of "%s" at %s failed: SQLSTATE[%s] %d: %s', $user, $address, $sqlState, $code, $message),
            $code,
            $sqlState,
            $message,
        );
    }

    public static function unsupportedPlugin(string $plugin, string $address): self
    {
        return new self(
            \sprintf(
                'The server at %s asks for the authentication plugin "%s", which is not supported '
                . '(supported: mysql_native_password, caching_sha2_password)',
                $address,
                $plugin,
            ),
            self::UNSUPPORTED_PLUGIN,
            'HY000',
            "unsupported authentication plugin $plugin",
        );
    }

    public static function fullAuthNeedsSecureChannel(string $address, string $reason): self
    {
        return new self(
            \sprintf('caching_sha2_password full authentication at %s failed: %s', $address, $reason),
            self::UNSUPPORTED_PLUGIN,
            'HY000',
            $reason,
        );
    }
}
