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

    /**
     * Nothing takes turns while a worker has booted one kernel: its second boots for a request that
     * arrives while one is in the first, past the point where its session would have been made to wait.
     * One request starts its session after a wait on the database, the other before a longer one; in
     * either order of arrival, each gets its own session, one after the other.
     */
    public function testSessionsTakeTurnsFromTheSecondKernelOn(): void
    {
        $base = $this->serve(2);
        for ($round = 1; $round <= 2; $round++) {
            [[$late, , $lateRaw], [$early, , $earlyRaw]] = self::multi(["$base/who?wait=0.3", "$base/who?as=bob&wait=0.6"], []);
            self::assertIsArray($late, "round $round, the session started after the wait: " . substr($lateRaw, 0, 300) . "\n" . $this->serverOutput());
            self::assertNull($late['user']);
            self::assertIsArray($early, "round $round, the session started before the wait: " . substr($earlyRaw, 0, 300) . "\n" . $this->serverOutput());
            self::assertSame('bob', $early['user']);
            self::assertNotSame($early['session'], $late['session']);
        }
        self::assertDoesNotMatchRegularExpression('/already started|\b(error|critical)\b/i', $this->serverOutput());
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
