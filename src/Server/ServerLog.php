<?php

declare(strict_types=1);

namespace Weft\Server;

use Psr\Log\LoggerInterface;

/**
 * The one place an application finds the server's PSR-3 logger: `Weft\logger()`. Set in each worker
 * before the application loads (and by the fpm front controller); outside a server, a logger to stderr.
 * Static because an application file has no other way in; it holds one object and nothing else.
 */
final class ServerLog
{
    private static ?LoggerInterface $logger = null;

    public static function install(LoggerInterface $logger): void
    {
        self::$logger = $logger;
    }

    public static function get(): LoggerInterface
    {
        return self::$logger ??= Logger::stderr();
    }
}
