<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

/**
 * ConcurrentFrameworkTestCase against the Symfony fixture app, Doctrine DBAL waiting on MariaDB. Every
 * request here starts a session: Symfony's is PHP's own session module, one per process, so those
 * requests take turns for it (NativeSessionLock) while their database waits still overlap others'.
 */
final class ConcurrentSymfonyTest extends ConcurrentFrameworkTestCase
{
    protected static function app(): string
    {
        return 'symfony-app';
    }

    /** SymfonyHandler::STATICS and PhpGlobals' values. */
    protected static function followedNames(): array
    {
        return [
            'Symfony\Component\VarDumper\VarDumper::$handler',
            '$_GET', '$_POST', '$_COOKIE', '$_FILES', '$_REQUEST', '$_SERVER',
            'date_default_timezone', 'setlocale', 'Locale::default',
        ];
    }

    protected static function database(string $url): array
    {
        return ['DATABASE_URL' => $url];
    }

    protected static function query(int $id): string
    {
        // Half of them use the session.
        return $id % 2 === 0 ? 'session=1' : 'x=1';
    }

    protected static function expected(int $id, array $answer): array
    {
        $odd = $id % 2 === 1;
        $own = (string) $id;
        return [
            'id' => $own, 'attribute' => $own, 'locale' => "l$id", 'session' => $own, 'service' => $own,
            'dump' => "$id:x", 'timezone' => $odd ? 'Asia/Tokyo' : 'America/Lima', 'numeric' => $odd ? 'C.UTF-8' : 'C',
            'intl' => "i$id", 'get' => $own, 'post' => $own, 'request_global' => $own,
            'cookie_global' => $own, 'files' => "doc-$id.txt", 'server' => $own,
            'query_string' => "id=$id&" . self::query($id),
        ];
    }
}
