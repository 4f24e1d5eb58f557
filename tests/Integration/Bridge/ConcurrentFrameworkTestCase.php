<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/**
 * Several requests in one worker at once, each in its own framework instance (--app-instances): every
 * place a request's state lives in reads back that request's own values after a wait on MariaDB
 * during which the others ran (the fixture's /identity route), and each value that must follow the
 * coroutine is shown to be needed: with its switch removed (the fixture's weft-probe.php, told by
 * PROBE_UNFOLLOW), the same run crosses state between requests.
 */
abstract class ConcurrentFrameworkTestCase extends TestCase
{
    /** "laravel-app" or "symfony-app" */
    abstract protected static function app(): string;

    /** @return list<string> what weft-probe.php can stop following */
    abstract protected static function followedNames(): array;

    /**
     * @param array<string, mixed> $answer
     * @return array<string, mixed> what /identity must answer for request $id, place by place
     */
    abstract protected static function expected(int $id, array $answer): array;

    /** @return array<string, string> the environment that points the app at the test MariaDB */
    abstract protected static function database(string $url): array;

    /** The query string /identity gets besides the id. */
    protected static function query(int $id): string
    {
        return "visitor=$id";
    }

    private ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        $root = \dirname(__DIR__, 3);
        exec('bash ' . escapeshellarg("$root/scripts/fixtures.sh") . ' ' . static::app() . ' 2>&1', $output, $status);
        if ($status !== 0) {
            self::fail('scripts/fixtures.sh ' . static::app() . " failed:\n" . implode("\n", $output));
        }
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    public function testFiftyConcurrentRequestsOnOneWorkerEachReadTheirOwnStateBack(): void
    {
        $base = $this->serve(50);
        $answers = self::identities($base, range(1, 50), 0.2);
        $connections = [];
        foreach ($answers as $id => $answer) {
            self::assertSame([], self::crossings($id, $answer), "request $id saw another request's state");
            $connections[$answer['connection']] = true;
        }
        // One PDO connection per instance, and the pool only grows while every instance is busy: 50
        // connections means the 50 requests were in the framework at the same time.
        self::assertCount(50, $connections, 'each in-flight request has its own database connection');
        self::assertDoesNotMatchRegularExpression('/\b(error|critical|Fatal)\b/', $this->server->output());
    }

    public function testSyncModeStillServesOneRequestAtATimeThroughOneInstance(): void
    {
        $base = $this->serve(8, 'sync');
        $answers = self::identities($base, range(1, 6), 0.05);
        $connections = [];
        foreach ($answers as $id => $answer) {
            self::assertSame([], self::crossings($id, $answer));
            $connections[$answer['connection']] = true;
        }
        self::assertCount(1, $connections, 'sync mode needs one instance: --app-instances applies to coroutine mode');
    }

    #[DataProvider('followed')]
    public function testEachFollowedValueIsNeeded(string $name): void
    {
        $base = $this->serve(16, env: ['PROBE_UNFOLLOW' => $name]);
        $crossed = [];
        foreach (self::identities($base, range(1, 16), 0.1) as $id => $answer) {
            $crossed = [...$crossed, ...self::crossings($id, $answer)];
        }
        self::assertNotSame([], $crossed, "with $name no longer following the coroutine, some request must see another's state");
    }

    /** @return iterable<string, array{string}> */
    public static function followed(): iterable
    {
        foreach (static::followedNames() as $name) {
            yield $name => [$name];
        }
    }

    /**
     * Two logged-in users and anonymous clients, 2,000 requests interleaved 30 at a time on one worker
     * with ten instances: nobody ever sees another's identity or session.
     */
    public function testLoggedInUsersAndAnonymousClientsNeverSeeEachOther(): void
    {
        $base = $this->serve(10);
        $cookies = [];
        $sessions = [];
        foreach (['alice', 'bob'] as $user) {
            [$answer, $setCookies] = self::multi(["$base/who?as=$user"], [])[0];
            self::assertSame($user, $answer['user']);
            $cookies[$user] = self::cookieHeader($setCookies);
            $sessions[$user] = $answer['session'];
        }
        $seen = ['alice' => 0, 'bob' => 0, 'anonymous' => 0];
        for ($round = 0; $round < 2000 / 30; $round++) {
            $clients = [];
            for ($i = 0; $i < 30; $i++) {
                $clients[] = ['alice', 'bob', 'anonymous'][($round + $i) % 3];
            }
            $answers = self::multi(
                array_fill(0, \count($clients), "$base/who"),
                array_map(static fn (string $client): array => $client === 'anonymous' ? [] : ['Cookie: ' . $cookies[$client]], $clients),
            );
            foreach ($clients as $i => $client) {
                [$answer, , $raw] = $answers[$i];
                self::assertIsArray($answer, "round $round, $client: not a JSON answer: " . substr($raw, 0, 300) . "\n" . $this->serverOutput());
                if ($client === 'anonymous') {
                    self::assertNull($answer['user'], "round $round: an anonymous client was given a user");
                    self::assertNotContains($answer['session'], $sessions, "round $round: an anonymous client was given a user's session");
                } else {
                    self::assertSame($client, $answer['user'], "round $round: $client was answered as someone else");
                    self::assertSame($sessions[$client], $answer['session'], "round $round: $client's session changed");
                }
                $seen[$client]++;
            }
        }
        self::assertGreaterThanOrEqual(660, min($seen));
    }

    protected function serverOutput(): string
    {
        return (string) $this->server?->output();
    }

    /** @param array<string, string> $env */
    protected function serve(int $instances, string $mode = 'coroutine', array $env = []): string
    {
        $entry = \dirname(__DIR__, 3) . '/var/fixtures/' . static::app() . '/weft-probe.php';
        $env += ['WEFT_LEAK_WARNINGS' => '', 'APP_ENV' => static::app() === 'symfony-app' ? 'prod' : 'production', 'APP_DEBUG' => 'false']
            + static::database(self::mysqlUrl());
        $this->server = new ServerProcess([$entry, '--workers', '1', '--mode', $mode, '--app-instances', (string) $instances], $env);
        return 'http://' . $this->server->address();
    }

    private static function mysqlUrl(): string
    {
        $url = getenv('WEFT_TEST_MYSQL_URL');
        if (!\is_string($url) || $url === '') {
            self::fail('WEFT_TEST_MYSQL_URL is not set: run the tests with `composer test` (scripts/services.sh starts MariaDB)');
        }
        return $url;
    }

    /**
     * POSTs /identity for each id at once: a query string, a form field, an uploaded file and a cookie,
     * each carrying the id.
     *
     * @param list<int> $ids
     * @return array<int, array<string, mixed>> the decoded answers by id
     */
    private static function identities(string $base, array $ids, float $wait): array
    {
        $dir = sys_get_temp_dir() . '/weft-identity-' . getmypid();
        @mkdir($dir);
        $urls = $options = [];
        foreach ($ids as $id) {
            file_put_contents("$dir/$id.txt", "file $id");
            $urls[] = "$base/identity?id=$id&" . static::query($id);
            $options[] = [
                \CURLOPT_POSTFIELDS => ['id' => (string) $id, 'wait' => (string) $wait, 'doc' => new \CURLFile("$dir/$id.txt", 'text/plain', "doc-$id.txt")],
                \CURLOPT_HTTPHEADER => ['Accept: application/json'],
                \CURLOPT_COOKIE => "client=$id",
            ];
        }
        $answers = [];
        foreach (self::multi($urls, [], $options) as $i => [$answer, , $raw]) {
            $answers[$ids[$i]] = \is_array($answer) ? $answer : ['not an answer' => substr($raw, 0, 500)];
        }
        array_map('unlink', glob("$dir/*.txt") ?: []);
        @rmdir($dir);
        return $answers;
    }

    /** @return list<string> each place where the answer of request $id shows another value than its own */
    private static function crossings(int $id, array $answer): array
    {
        if (isset($answer['not an answer'])) {
            return ['not an answer: ' . $answer['not an answer']];
        }
        $crossed = [];
        foreach (static::expected($id, $answer) as $place => $value) {
            if (($answer[$place] ?? null) !== $value) {
                $crossed[] = "$place: " . json_encode($answer[$place] ?? null) . ' instead of ' . json_encode($value);
            }
        }
        return $crossed;
    }

    /**
     * Sends every request at once (one curl_multi) and waits for all.
     *
     * @param list<string> $urls
     * @param list<list<string>> $headers extra header lines per request
     * @param list<array<int, mixed>> $options extra curl options per request
     * @return list<array{mixed, list<string>, string}> the decoded JSON body, the Set-Cookie values, the raw body
     */
    protected static function multi(array $urls, array $headers, array $options = []): array
    {
        $multi = curl_multi_init();
        $handles = [];
        $cookies = [];
        foreach ($urls as $i => $url) {
            $handle = curl_init($url);
            $cookies[$i] = [];
            curl_setopt_array($handle, ($options[$i] ?? []) + [
                \CURLOPT_RETURNTRANSFER => true,
                \CURLOPT_TIMEOUT => 30,
                \CURLOPT_HTTPHEADER => $headers[$i] ?? [],
                \CURLOPT_HEADERFUNCTION => static function ($h, string $line) use (&$cookies, $i): int {
                    if (stripos($line, 'set-cookie:') === 0) {
                        $cookies[$i][] = trim(substr($line, 11));
                    }
                    return \strlen($line);
                },
            ]);
            curl_multi_add_handle($multi, $handle);
            $handles[$i] = $handle;
        }
        do {
            $status = curl_multi_exec($multi, $running);
            if ($running > 0) {
                curl_multi_select($multi, 1.0);
            }
        } while ($running > 0 && $status === \CURLM_OK);
        $answers = [];
        foreach ($handles as $i => $handle) {
            $raw = (string) curl_multi_getcontent($handle);
            $answers[$i] = [json_decode($raw, true), $cookies[$i], $raw];
            curl_multi_remove_handle($multi, $handle);
        }
        curl_multi_close($multi);
        return $answers;
    }

    /** @param list<string> $setCookies */
    private static function cookieHeader(array $setCookies): string
    {
        return implode('; ', array_map(static fn (string $c): string => explode(';', $c, 2)[0], $setCookies));
    }
}
