<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

use Weft\Tests\Support\ServerProcess;

/** ConcurrentFrameworkTestCase against the Laravel fixture app. */
final class ConcurrentLaravelTest extends ConcurrentFrameworkTestCase
{
    /**
     * In development the leak detector reports a static that requests in flight together write (a
     * race between users), naming it, and nothing of what follows the coroutine.
     */
    public function testTheLeakDetectorReportsAStaticRacedByConcurrentRequests(): void
    {
        $base = $this->serve(4, env: ['WEFT_LEAK_WARNINGS' => '1']);
        self::assertSame(200, \Weft\Tests\Support\Curl::get("$base/race?id=0")['status']);
        foreach (\Weft\Tests\Support\Curl::getAll(array_map(static fn (int $id): string => "$base/race?id=$id", range(1, 4))) as $answer) {
            self::assertSame(200, $answer['status']);
        }
        $output = ServerProcess::waitFor(fn (): ?string => str_contains($output = $this->serverOutput(), 'state race') ? $output : null, 10.0, 'the race report');
        self::assertMatchesRegularExpression('/state race: static App\\\\Registry::\$log changed while other requests were in flight in this worker during GET \/race/', $output);
        self::assertStringNotContainsString('Illuminate\\Container\\Container::$instance', $output);
        self::assertStringNotContainsString('Facade::$resolvedInstance', $output);
    }

    /** A streamed body that waits while it is produced still reads its own request's state after the wait. */
    public function testStreamedBodiesReadTheirOwnStateAcrossWaits(): void
    {
        $base = $this->serve(10);
        $answers = \Weft\Tests\Support\Curl::getAll(array_map(static fn (int $id): string => "$base/stream-identity?id=$id", array_combine(range(1, 10), range(1, 10))));
        foreach ($answers as $id => $answer) {
            self::assertSame(200, $answer['status']);
            self::assertSame("before $id\nafter $id $id $id\n", $answer['body']);
        }
    }

    protected static function app(): string
    {
        return 'laravel-app';
    }

    /** Laravel\FollowedState's statics and PhpGlobals' values. */
    protected static function followedNames(): array
    {
        return [
            'Illuminate\Container\Container::$instance',
            'Illuminate\Support\Facades\Facade::$app',
            'Illuminate\Support\Facades\Facade::$resolvedInstance',
            'Illuminate\Database\Eloquent\Model::$resolver',
            'Illuminate\Database\Eloquent\Model::$dispatcher',
            'Illuminate\Database\Eloquent\Model::$booted',
            'Illuminate\Database\Eloquent\Model::$globalScopes',
            'Illuminate\View\Component::$factory',
            'Illuminate\Support\Once::$instance',
            'Illuminate\Support\Number::$locale',
            'Illuminate\Support\Number::$currency',
            'Carbon\Carbon::locale',
            '$_GET', '$_POST', '$_COOKIE', '$_FILES', '$_REQUEST', '$_SERVER',
            'date_default_timezone', 'setlocale', 'Locale::default',
        ];
    }

    protected static function database(string $url): array
    {
        return ['DB_CONNECTION' => 'mysql', 'DB_URL' => $url];
    }

    protected static function expected(int $id, array $answer): array
    {
        $odd = $id % 2 === 1;
        $own = (string) $id;
        return [
            'id' => $own, 'buffer' => "<$id></$id>", 'container' => $own, 'facade' => $own, 'request' => $own,
            'config' => $own, 'locale' => "l$id", 'session' => $own, 'user' => $own,
            'cookie' => $own, 'log' => $own, 'view' => $own, 'component' => $own,
            'model_connection' => $answer['connection'] ?? null, 'model_events' => 1, 'model_booted' => true,
            'scope' => $own, 'once' => $own, 'number' => "n$id/C$id",
            'carbon' => $odd ? 'fr' : 'de', 'timezone' => $odd ? 'Asia/Tokyo' : 'America/Lima', 'numeric' => $odd ? 'C.UTF-8' : 'C',
            'intl' => "i$id", 'get' => $own, 'post' => $own, 'request_global' => $own,
            'cookie_global' => $own, 'files' => "doc-$id.txt", 'server' => $own,
            'query_string' => "id=$id&visitor=$id",
        ];
    }
}
