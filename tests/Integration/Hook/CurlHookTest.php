<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Timeout;
use Weft\Hook\Hooks;
use Weft\Loop\NativeDriver;
use Weft\Loop\Loop;
use Weft\Tests\Support\ServerProcess;

use function Weft\go;
use function Weft\run;

/**
 * The curl hook (ext/weft_curl.c) against a real local HTTP and HTTPS upstream
 * (fixtures/curl-upstream.php, a separate process that reports what it saw: how many requests were in
 * flight at once, which connection served a request).
 *
 * Every behaviour is checked inside a coroutine (where curl_exec suspends) and outside one (where it
 * blocks exactly as without Weft), with the same expected outcome. Overlap is asserted from the
 * upstream's side (both requests in flight at once), never from wall time.
 */
final class CurlHookTest extends TestCase
{
    private const CURL = Hooks::KINDS['curl'];

    /** @var array<string, array{process: resource, stdin: resource, port: int}> */
    private static array $upstreams = [];
    private static string $certDir = '';

    public static function setUpBeforeClass(): void
    {
        if (!\extension_loaded('curl')) {
            self::markTestSkipped('the curl extension is not loaded');
        }
        if (!\extension_loaded('weft')) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        if (\PHP_OS_FAMILY === 'Linux' && \in_array(\php_uname('m'), ['x86_64', 'aarch64'], true) && \PHP_ZTS === 0) {
            // Where the hook is supported, it must have passed its start-up check.
            self::assertStringStartsWith('active', \Weft\Ext\CURL_HOOK);
        } elseif (!\str_starts_with(\Weft\Ext\CURL_HOOK, 'active')) {
            self::markTestSkipped('no curl hook here: ' . \Weft\Ext\CURL_HOOK);
        }
        self::$certDir = \sys_get_temp_dir() . '/weft-curl-' . \bin2hex(\random_bytes(4));
        \mkdir(self::$certDir);
        [$cert, $key] = self::selfSignedCertificate(self::$certDir);
        self::$upstreams['http'] = self::startUpstream([]);
        self::$upstreams['https'] = self::startUpstream(['--tls', "$cert:$key"]);
    }

    public static function tearDownAfterClass(): void
    {
        foreach (self::$upstreams as $upstream) {
            \fclose($upstream['stdin']); // the upstream stops when its stdin closes
            $deadline = \microtime(true) + 5;
            while (\proc_get_status($upstream['process'])['running'] && \microtime(true) < $deadline) {
                \usleep(10_000);
            }
            \proc_terminate($upstream['process'], 9);
            \proc_close($upstream['process']);
        }
        self::$upstreams = [];
        if (self::$certDir !== '' && \is_dir(self::$certDir)) {
            \array_map('unlink', \glob(self::$certDir . '/*') ?: []);
            \rmdir(self::$certDir);
        }
    }

    protected function setUp(): void
    {
        Loop::reset('select');
        Hooks::enable(self::CURL);
        self::assertSame(self::CURL, Hooks::enabled() & self::CURL);
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        Loop::reset('select');
    }

    /** @return iterable<string, array{string}> */
    public static function backends(): iterable
    {
        yield 'select' => ['select'];
        yield 'epoll' => ['epoll'];
    }

    /** @return iterable<string, array{bool}> */
    public static function places(): iterable
    {
        yield 'inside a coroutine' => [true];
        yield 'outside a coroutine' => [false];
    }

    #[DataProvider('backends')]
    public function testTwoCurlExecInTwoCoroutinesAreInFlightAtOnce(string $backend): void
    {
        $this->useLoop($backend);
        $url = self::url('http', '/delay?s=1&await=2');
        [$a, $b] = self::concurrently(
            static fn (): array => self::get("$url&id=a"),
            static fn (): array => self::get("$url&id=b"),
        );
        // await=2: the upstream holds each request until both are in flight (or 10 s): peak 2 proves they were.
        self::assertSame(['id' => 'a', 'peak' => 2], \array_intersect_key($a['json'], ['id' => 1, 'peak' => 1]));
        self::assertSame(['id' => 'b', 'peak' => 2], \array_intersect_key($b['json'], ['id' => 1, 'peak' => 1]));
    }

    public function testOutsideACoroutineCurlExecBlocksAsWithoutWeft(): void
    {
        $url = self::url('http', '/delay?s=0.2');
        $a = self::get("$url&id=a");
        $b = self::get("$url&id=b");
        self::assertSame([1, 1], [$a['json']['peak'], $b['json']['peak']]);
    }

    public function testWithTheCurlHookOffTwoCoroutinesTakeTurns(): void
    {
        Hooks::disable();
        $url = self::url('http', '/delay?s=0.2');
        [$a, $b] = self::concurrently(
            static fn (): array => self::get("$url&id=a"),
            static fn (): array => self::get("$url&id=b"),
        );
        self::assertSame([1, 1], [$a['json']['peak'], $b['json']['peak']], 'each blocked the process in turn');
    }

    public function testHttpsToALocalTlsUpstream(): void
    {
        $url = self::url('https', '/delay?s=0.5&await=2');
        [$a, $b] = self::concurrently(
            static fn (): array => self::get("$url&id=a", [\CURLOPT_SSL_VERIFYPEER => false, \CURLOPT_SSL_VERIFYHOST => 0]),
            static fn (): array => self::get("$url&id=b", [\CURLOPT_CAINFO => self::$certDir . '/cert.pem', \CURLOPT_SSL_VERIFYHOST => 0]),
        );
        self::assertSame([2, 2], [$a['json']['peak'], $b['json']['peak']]);
        self::assertSame(200, $a['info']['http_code']);
        self::assertStringStartsWith('https://', $b['info']['url']);

        $outside = self::get(self::url('https', '/conn'), [\CURLOPT_SSL_VERIFYPEER => false, \CURLOPT_SSL_VERIFYHOST => 0]);
        self::assertSame(0, $outside['errno']);
        self::assertArrayHasKey('conn', $outside['json']);

        // Verification keeps its meaning: the self-signed certificate is refused without its CA.
        $refused = [];
        foreach ([true, false] as $inside) {
            $refused[] = self::at($inside, static fn (): array => self::get(self::url('https', '/conn'), [\CURLOPT_CAINFO => self::$certDir . '/key.pem']))['errno'];
        }
        self::assertContains($refused[0], [\CURLE_SSL_CACERT_BADFILE, \CURLE_SSL_PEER_CERTIFICATE]);
        self::assertSame($refused[0], $refused[1], 'the same error inside and outside a coroutine');
    }

    public function testLargeResponsesInTwoCoroutinesArriveWhole(): void
    {
        // 8 MB each: many waits per transfer, the two transfers interleaved.
        [$a, $b] = self::concurrently(
            static fn (): array => self::get(self::url('http', '/big?mb=8&seed=a')),
            static fn (): array => self::get(self::url('http', '/big?mb=8&seed=b')),
        );
        self::assertSame(\str_repeat(\md5('a'), 8 * 32768), $a['body']);
        self::assertSame(\str_repeat(\md5('b'), 8 * 32768), $b['body']);
    }

    #[DataProvider('places')]
    public function testCurloptTimeoutGivesErrno28(bool $inside): void
    {
        [$result, $ticks] = self::atWithTicker($inside, static fn (): array => self::get(self::url('http', '/delay?s=5'), [\CURLOPT_TIMEOUT_MS => 400]));
        self::assertFalse($result['body']);
        self::assertSame(\CURLE_OPERATION_TIMEDOUT, $result['errno']);
        self::assertMatchesRegularExpression('/^Operation timed out after \d+ milliseconds with 0 bytes received$/', $result['error']);
        if ($inside) {
            self::assertGreaterThan(0, $ticks, 'another coroutine ran while curl_exec waited');
        }
    }

    #[DataProvider('places')]
    public function testCurloptConnectTimeoutGivesErrno28(bool $inside): void
    {
        // A listener whose accept queue is full: the kernel drops further SYNs, so a connect hangs.
        $listener = \stream_socket_server('tcp://127.0.0.1:0', $errno, $error, \STREAM_SERVER_BIND | \STREAM_SERVER_LISTEN, \stream_context_create(['socket' => ['backlog' => 0]]));
        $address = \stream_socket_get_name($listener, false);
        $fillers = [];
        for ($i = 0; $i < 3; $i++) {
            $fillers[] = \stream_socket_client("tcp://$address", $errno, $error, 1, \STREAM_CLIENT_CONNECT | \STREAM_CLIENT_ASYNC_CONNECT);
        }
        [$result, $ticks] = self::atWithTicker($inside, static fn (): array => self::get("http://$address/", [\CURLOPT_CONNECTTIMEOUT_MS => 300]));
        self::assertSame(\CURLE_OPERATION_TIMEDOUT, $result['errno'], $result['error']);
        // libcurl words it after the state its timer finds the connect in; both are its own messages.
        self::assertMatchesRegularExpression('/^(Failed to connect to 127\.0\.0\.1 port \d+ after \d+ ms: Timeout was reached|Connection timeout after \d+ ms)$/', $result['error']);
        if ($inside) {
            self::assertGreaterThan(0, $ticks, 'another coroutine ran while curl_exec waited');
        }
        \array_map('fclose', \array_filter($fillers));
        \fclose($listener);
    }

    #[DataProvider('places')]
    public function testARefusedConnection(bool $inside): void
    {
        $refused = self::at($inside, static fn (): array => self::get('http://127.0.0.1:' . self::closedPort() . '/'));
        self::assertSame(\CURLE_COULDNT_CONNECT, $refused['errno']);
        self::assertStringContainsString("Couldn't connect to server", $refused['error']);
    }

    #[DataProvider('places')]
    public function testAServerThatDropsTheConnection(bool $inside): void
    {
        $dropped = self::at($inside, static fn (): array => self::get(self::url('http', '/drop')));
        self::assertFalse($dropped['body']);
        self::assertSame(\CURLE_GOT_NOTHING, $dropped['errno']);
        self::assertSame('Empty reply from server', $dropped['error']);
    }

    #[DataProvider('places')]
    public function testTwoCallsOnOneHandleReuseTheConnection(bool $inside): void
    {
        $result = self::at($inside, static function (): array {
            $ch = \curl_init(self::url('http', '/conn'));
            \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
            $first = \json_decode((string) \curl_exec($ch), true);
            $connects = [\curl_getinfo($ch, \CURLINFO_NUM_CONNECTS)];
            $second = \json_decode((string) \curl_exec($ch), true);
            $connects[] = \curl_getinfo($ch, \CURLINFO_NUM_CONNECTS);
            return [$first['conn'], $second['conn'], $connects];
        });
        self::assertSame($result[0], $result[1], 'the upstream saw one connection');
        self::assertSame([1, 0], $result[2], 'the second call opened no connection');
    }

    public function testACurlShareHandleKeepsConnectionsAcrossCoroutines(): void
    {
        $share = \curl_share_init();
        \curl_share_setopt($share, \CURLSHOPT_SHARE, \CURL_LOCK_DATA_CONNECT);
        \curl_share_setopt($share, \CURLSHOPT_SHARE, \CURL_LOCK_DATA_DNS);
        // "localhost": a name, so libcurl's resolver thread runs too.
        $url = \str_replace('127.0.0.1', 'localhost', self::url('http', '/delay?s=0.2&await=2'));
        $round = static fn (): array => self::concurrently(
            static fn (): array => self::get("$url&id=a", [\CURLOPT_SHARE => $share, \CURLOPT_IPRESOLVE => \CURL_IPRESOLVE_V4]),
            static fn (): array => self::get("$url&id=b", [\CURLOPT_SHARE => $share, \CURLOPT_IPRESOLVE => \CURL_IPRESOLVE_V4]),
        );
        $first = $round();
        $second = $round();
        self::assertSame([2, 2, 2, 2], \array_map(static fn (array $r): int => $r['json']['peak'], [...$first, ...$second]));
        self::assertSame([1, 1, 0, 0], \array_map(static fn (array $r): int => $r['connects'], [...$first, ...$second]), 'the second round reused both connections');
        $connections = static fn (array $rs): array => \array_map(static fn (array $r): int => $r['json']['conn'], $rs);
        self::assertEqualsCanonicalizing($connections($first), $connections($second));
    }

    #[DataProvider('places')]
    public function testCallbacksRunInTheCallingCoroutineAndInfoIsAsUsual(bool $inside): void
    {
        $result = self::at($inside, static function (): array {
            $fiber = \Fiber::getCurrent();
            $headers = [];
            $body = '';
            $sameFiber = true;
            $ch = \curl_init(self::url('http', '/headers?n=3'));
            \curl_setopt_array($ch, [
                \CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$headers, &$sameFiber, $fiber): int {
                    $sameFiber = $sameFiber && \Fiber::getCurrent() === $fiber;
                    if (\str_starts_with($line, 'X-Weft-I:')) {
                        $headers[] = \trim($line);
                    }
                    return \strlen($line);
                },
                \CURLOPT_WRITEFUNCTION => static function ($ch, string $chunk) use (&$body, &$sameFiber, $fiber): int {
                    $sameFiber = $sameFiber && \Fiber::getCurrent() === $fiber;
                    $body .= $chunk;
                    return \strlen($chunk);
                },
            ]);
            $ok = \curl_exec($ch);
            return [$ok, $headers, $body, $sameFiber, \curl_getinfo($ch, \CURLINFO_RESPONSE_CODE), \curl_errno($ch)];
        });
        self::assertSame([true, ['X-Weft-I: 1', 'X-Weft-I: 2', 'X-Weft-I: 3'], 'ok', true, 200, 0], $result);
    }

    public function testACallbackThatSuspendsLetsOtherCoroutinesTransfer(): void
    {
        $url = self::url('http', '/conn');
        $inCallback = false;
        [$a, $b] = self::concurrently(
            static function () use ($url, &$inCallback): string {
                $ch = \curl_init($url);
                \curl_setopt($ch, \CURLOPT_WRITEFUNCTION, static function ($ch, string $chunk) use (&$inCallback): int {
                    $inCallback = true;
                    \Weft\sleep(0.3); // suspends inside libcurl's callback
                    $inCallback = false;
                    return \strlen($chunk);
                });
                return \curl_exec($ch) === true ? 'a done' : 'a failed: ' . \curl_error($ch);
            },
            static function () use ($url, &$inCallback): string {
                while (!$inCallback) {
                    \Weft\sleep(0.005);
                }
                $result = self::get($url);
                return $result['errno'] === 0 && $inCallback ? 'b done while a was in its callback' : 'b: ' . $result['error'];
            },
        );
        self::assertSame(['a done', 'b done while a was in its callback'], [$a, $b]);
    }

    public function testCurlGetinfoAndTheResponseAreTheSameInsideAndOutside(): void
    {
        $options = [
            \CURLOPT_FOLLOWLOCATION => true,
            \CURLOPT_HEADER => true,
            \CURLINFO_HEADER_OUT => true,
            \CURLOPT_HTTPHEADER => ['X-Test: 1'],
        ];
        $fetch = static function () use ($options): array {
            $result = self::get(self::url('http', '/redirect?to=/headers%3Fn%3D2'), $options);
            // Everything but timings, ports and the request's own header block (its order is libcurl's).
            $info = \array_diff_key($result['info'], \array_flip(['local_port', 'total_time', 'namelookup_time', 'connect_time', 'pretransfer_time',
                'starttransfer_time', 'redirect_time', 'speed_download', 'speed_upload', 'total_time_us', 'namelookup_time_us', 'connect_time_us',
                'pretransfer_time_us', 'starttransfer_time_us', 'redirect_time_us', 'appconnect_time_us', 'appconnect_time', 'certinfo']));
            return [$result['body'], $info, $result['errno']];
        };
        $inside = run($fetch);
        $outside = $fetch();
        self::assertSame(0, $inside[2]);
        self::assertSame(1, $inside[1]['redirect_count']);
        self::assertStringEndsWith('/headers?n=2', $inside[1]['url']);
        self::assertStringContainsString("X-Weft-I: 2\r\n", $inside[0]);
        self::assertSame($outside, $inside);
    }

    #[DataProvider('backends')]
    public function testCurlMultiWithSeveralHandlesSuspendsInCurlMultiSelect(string $backend): void
    {
        $this->useLoop($backend);
        $url = self::url('http', '/delay?s=0.5&await=3');
        // Three requests in flight at once at the upstream: two from a curl_multi loop in one coroutine,
        // one from curl_exec in another, which could only start while the first waited in curl_multi_select.
        [$multi, $single] = self::concurrently(
            static fn (): array => self::multiGet(["$url&id=m1", "$url&id=m2"]),
            static fn (): array => self::get("$url&id=e"),
        );
        self::assertSame([3, 3], \array_column($multi, 'peak'));
        self::assertSame(3, $single['json']['peak']);
    }

    public function testCurlMultiWithManyHandlesInACoroutine(): void
    {
        // More descriptors than the hook keeps on its stack.
        $url = self::url('http', '/delay?s=0.3&await=12');
        [$results] = self::concurrently(static fn (): array => self::multiGet(\array_map(static fn (int $i): string => "$url&id=$i", \range(1, 12))));
        self::assertSame(\array_fill(0, 12, 12), \array_column($results, 'peak'));
    }

    public function testCurlMultiOutsideACoroutine(): void
    {
        $url = self::url('http', '/delay?s=0.3&await=3');
        $results = self::multiGet(["$url&id=1", "$url&id=2", "$url&id=3"]);
        self::assertSame([3, 3, 3], \array_column($results, 'peak'), 'curl_multi is concurrent by itself');
        self::assertSame(['1', '2', '3'], \array_column($results, 'id'));
    }

    public function testGuzzleWithItsDefaultHandlerInTwoCoroutines(): void
    {
        self::needGuzzle();
        $url = self::url('http', '/delay?s=0.5&await=2');
        // One client shared by both: its CurlHandler takes a curl handle per request.
        $client = new \GuzzleHttp\Client(['timeout' => 20]);
        [$a, $b] = self::concurrently(
            static fn (): array => \json_decode((string) $client->get("$url&id=a")->getBody(), true),
            static fn (): array => \json_decode((string) $client->get("$url&id=b")->getBody(), true),
        );
        self::assertSame([['a', 2], ['b', 2]], [[$a['id'], $a['peak']], [$b['id'], $b['peak']]]);
    }

    public function testGuzzlePromisesWaitInCurlMultiSelect(): void
    {
        self::needGuzzle();
        $url = self::url('http', '/delay?s=0.5&await=3');
        [$promised, $single] = self::concurrently(
            static function () use ($url): array {
                // The CurlMultiHandler of this client's stack drives both requests.
                $client = new \GuzzleHttp\Client(['timeout' => 20]);
                $responses = \GuzzleHttp\Promise\Utils::unwrap([$client->getAsync("$url&id=p1"), $client->getAsync("$url&id=p2")]);
                return \array_map(static fn ($r): int => \json_decode((string) $r->getBody(), true)['peak'], $responses);
            },
            static fn (): int => \json_decode((string) (new \GuzzleHttp\Client(['timeout' => 20]))->get("$url&id=s")->getBody(), true)['peak'],
        );
        self::assertSame([[3, 3], 3], [$promised, $single]);
    }

    public function testGuzzleErrorsAreTheUsualOnes(): void
    {
        self::needGuzzle();
        $client = new \GuzzleHttp\Client();
        $messages = [];
        foreach ([true, false] as $inside) {
            $messages[] = self::at($inside, static function () use ($client): string {
                try {
                    $client->get(self::url('http', '/delay?s=5'), ['timeout' => 0.3]);
                    return 'no error';
                } catch (\GuzzleHttp\Exception\ConnectException $e) {
                    return (string) \preg_replace('/after \d+ milliseconds/', 'after N milliseconds', $e->getMessage());
                }
            });
        }
        self::assertStringStartsWith('cURL error 28: Operation timed out after N milliseconds with 0 bytes received', $messages[0]);
        self::assertSame($messages[1], $messages[0], 'the same inside and outside a coroutine');
    }

    /** @return iterable<string, array{string, int}> */
    public static function serveHooks(): iterable
    {
        yield 'hooks on (the default)' => ['all', 2];
        yield 'hooks off' => ['none', 1];
    }

    /** Guzzle's default handler in a real `bin/weft serve` worker in coroutine mode. */
    #[DataProvider('serveHooks')]
    public function testGuzzleUnderBinWeftServe(string $hooks, int $peak): void
    {
        self::needGuzzle();
        $server = new ServerProcess([\dirname(__DIR__) . '/fixtures/curl-guzzle-app.php', '--workers', '1', '--mode', 'coroutine', '--hooks', $hooks]);
        try {
            // With the hooks off the worker serves one request at a time: await=1 keeps that case short.
            $upstream = self::url('http', "/delay?s=0.5&await=$peak");
            $base = "http://{$server->address()}";
            $answers = self::multiGetRaw([
                "$base/sync?to=" . \rawurlencode("$upstream&id=a"),
                "$base/sync?to=" . \rawurlencode("$upstream&id=b"),
            ]);
            self::assertSame([$peak, $peak], \array_map(static fn (string $body): int => \json_decode($body, true)['peak'] ?? -1, $answers), \implode("\n", $answers));

            // Promises: the worker's coroutine waits in curl_multi_select while the other request runs.
            // Hooks off: the promises overlap each other (curl_multi), the other request waits its turn.
            $expected = $peak === 2 ? [3, 3, 3] : [2, 2, 1];
            [$async, $sync] = self::multiGetRaw([
                "$base/async?to=" . \rawurlencode(self::url('http', "/delay?s=0.5&await=$expected[0]")),
                "$base/sync?to=" . \rawurlencode(self::url('http', "/delay?s=0.5&await=$expected[2]&id=s")),
            ]);
            $peaks = \array_map(static fn (string $line): int => \json_decode($line, true)['peak'] ?? -1, [...\explode("\n", $async), $sync]);
            self::assertSame($expected, $peaks, "$async\n$sync");
        } finally {
            $server->stop();
        }
    }

    public function testTwoCoroutinesOnOneCurlHandleGetAClearError(): void
    {
        $ch = \curl_init(self::url('http', '/delay?s=0.5'));
        \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
        [$first, $second, $setopt] = self::concurrently(
            static fn (): string|false => \curl_exec($ch),
            static function () use ($ch): string {
                try {
                    \curl_exec($ch);
                    return 'no error';
                } catch (ConcurrentUse $e) {
                    return $e->getMessage();
                }
            },
            static function () use ($ch): string {
                try {
                    \curl_setopt($ch, \CURLOPT_URL, 'http://127.0.0.1:1/');
                    return 'no error';
                } catch (ConcurrentUse $e) {
                    return $e->getMessage();
                }
            },
        );
        self::assertSame(1, \json_decode($first, true)['peak'], 'the first transfer is intact');
        self::assertStringStartsWith('curl_exec(): this CurlHandle is in use by another coroutine (suspended in curl_exec())', $second);
        self::assertStringStartsWith('curl_setopt(): this CurlHandle is in use by another coroutine', $setopt);
        // Free again afterwards, and the URL was not changed.
        self::assertSame(0, self::get('', [], $ch)['errno']);
    }

    public function testTwoCoroutinesOnOneCurlMultiHandleGetAClearError(): void
    {
        $mh = \curl_multi_init();
        $ch = \curl_init(self::url('http', '/delay?s=0.5'));
        \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
        \curl_multi_add_handle($mh, $ch);
        [$result, $intruder] = self::concurrently(
            static function () use ($mh): int {
                // Until the answer (0.5 s) is in: this coroutine waits in curl_multi_select meanwhile.
                do {
                    \curl_multi_exec($mh, $running);
                    if ($running > 0) {
                        \curl_multi_select($mh, 5.0);
                    }
                } while ($running > 0);
                return \curl_multi_info_read($mh)['result'] ?? -1;
            },
            static function () use ($mh): string {
                try {
                    \curl_multi_exec($mh, $running);
                    return 'no error';
                } catch (ConcurrentUse $e) {
                    return $e->getMessage();
                }
            },
        );
        self::assertSame(\CURLE_OK, $result, 'the transfer of the first coroutine is intact');
        self::assertSame(1, \json_decode((string) \curl_multi_getcontent($ch), true)['peak']);
        self::assertStringStartsWith('curl_multi_exec(): this CurlMultiHandle is in use by another coroutine (suspended in curl_multi_select())', $intruder);
        \curl_multi_remove_handle($mh, $ch);
    }

    public function testACancelledCurlExecThrowsIntoItsCoroutineAndTheHandleStaysUsable(): void
    {
        $ch = \curl_init(self::url('http', '/delay?s=30'));
        \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
        $outcome = run(static function () use ($ch): string {
            try {
                \Weft\timeout(0.3, static fn () => \curl_exec($ch), 'curl_exec');
                return 'finished';
            } catch (Timeout $e) {
                return 'timeout';
            }
        });
        self::assertSame('timeout', $outcome);
        // The cancelled transfer's connection is gone; the handle serves the next call.
        $again = self::get(self::url('http', '/conn'), [], $ch);
        self::assertSame(0, $again['errno']);
        self::assertSame(1, \curl_getinfo($ch, \CURLINFO_NUM_CONNECTS), 'a new connection: the cancelled one was discarded');
    }

    public function testInAGcDestructorCurlExecBlocksInsteadOfSuspending(): void
    {
        $url = self::url('http', '/conn');
        $result = run(static function () use ($url): array {
            $seen = [];
            $cycle = new class ($url, $seen) {
                public ?object $self = null;

                /** @param list<mixed> $seen */
                public function __construct(private readonly string $url, private array &$seen)
                {
                }

                public function __destruct()
                {
                    // The GC forbids switching Fibers: the hook must block here, and still work.
                    $ch = \curl_init($this->url);
                    \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
                    $this->seen[] = \Weft\Ext\Hooks::canSuspend(\Weft\Ext\Hooks::CURL);
                    $this->seen[] = \json_decode((string) \curl_exec($ch), true)['conn'] ?? null;
                }
            };
            $cycle->self = $cycle;
            unset($cycle);
            \gc_collect_cycles();
            return $seen;
        });
        self::assertFalse($result[0]);
        self::assertIsInt($result[1]);
    }

    public function testWeftCurlHookOffLeavesCurlUntouched(): void
    {
        $script = <<<'PHP'
            require $argv[1] . '/vendor/autoload.php';
            echo \Weft\Ext\CURL_HOOK, "\n";
            echo \Weft\Hook\Hooks::enable(\Weft\Hook\Hooks::ALL) & \Weft\Ext\Hooks::CURL, "\n";
            $ch = \curl_init($argv[2]);
            \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
            echo \Weft\run(static fn () => \is_string(\curl_exec($ch)) ? 'ok' : \curl_error($ch)), "\n";
            PHP;
        $extension = \dirname(__DIR__, 3) . '/ext/modules/weft.so';
        $command = [\PHP_BINARY, '-d', "extension=$extension", '-r', $script, \dirname(__DIR__, 3), self::url('http', '/conn')];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, ['WEFT_CURL_HOOK' => 'off'] + \getenv());
        $output = (string) \stream_get_contents($pipes[1]);
        self::assertSame(0, \proc_close($process), $output);
        self::assertSame("unavailable: turned off by WEFT_CURL_HOOK=off\n0\nok\n", $output, 'no warning, curl not hooked, curl still works');

        // A server says so at start-up, with the reason.
        $server = new ServerProcess([\dirname(__DIR__) . '/fixtures/curl-guzzle-app.php', '--workers', '1'], ['WEFT_CURL_HOOK' => 'off']);
        try {
            self::assertStringContainsString('curl is not hooked (unavailable: turned off by WEFT_CURL_HOOK=off)', $server->output());
            self::assertStringNotContainsString('curl', (string) ($server->status()['workers'][0]['hooks'] ?? 'curl'));
        } finally {
            $server->stop();
        }
    }

    public function testAtShutdownAndInADestroyedFiberCurlExecBlocksAsUsual(): void
    {
        $script = <<<'PHP'
            require $argv[1] . '/vendor/autoload.php';
            $url = $argv[2];
            \Weft\Hook\Hooks::enable(\Weft\Hook\Hooks::ALL);
            $get = static function (string $url): string {
                $ch = \curl_init($url);
                \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
                return \curl_exec($ch) === false ? 'error ' . \curl_error($ch) : 'ok';
            };
            \register_shutdown_function(static function () use ($get, $url): void {
                echo 'shutdown ', $get($url), "\n";
            });
            $fiber = new \Fiber(static function () use ($get, $url): void {
                try {
                    \Fiber::suspend();
                } finally {
                    echo 'fiber destroyed ', $get($url), "\n";
                }
            });
            $fiber->start();
            echo "end of script\n";
            PHP;
        $extension = \dirname(__DIR__, 3) . '/ext/modules/weft.so';
        $command = [\PHP_BINARY, '-d', "extension=$extension", '-r', $script, \dirname(__DIR__, 3), self::url('http', '/conn')];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        $output = (string) \stream_get_contents($pipes[1]);
        $code = \proc_close($process);
        self::assertSame(0, $code, $output);
        self::assertSame("end of script\nshutdown ok\nfiber destroyed ok\n", $output);
    }

    // ---------------------------------------------------------------------------------------------------

    private static function needGuzzle(): void
    {
        if (!\class_exists(\GuzzleHttp\Client::class)) {
            self::markTestSkipped('guzzlehttp/guzzle is not installed (composer install)');
        }
    }

    private function useLoop(string $backend): void
    {
        if ($backend === 'epoll' && !\Weft\Loop\DriverFactory::epollAvailable()) {
            self::markTestSkipped('no epoll backend');
        }
        Loop::reset($backend);
        Hooks::enable(self::CURL);
    }

    /**
     * One GET through curl_exec. @param array<int, mixed> $options
     * @return array{body: string|false, json: mixed, errno: int, error: string, info: array<string, mixed>, connects: int}
     */
    private static function get(string $url, array $options = [], ?\CurlHandle $ch = null): array
    {
        $ch ??= \curl_init();
        if ($url !== '') {
            \curl_setopt($ch, \CURLOPT_URL, $url);
        }
        \curl_setopt_array($ch, [\CURLOPT_RETURNTRANSFER => true] + $options);
        $body = \curl_exec($ch);
        return [
            'body' => $body,
            'json' => \is_string($body) ? \json_decode($body, true) : null,
            'errno' => \curl_errno($ch),
            'error' => \curl_error($ch),
            'info' => \curl_getinfo($ch),
            'connects' => \curl_getinfo($ch, \CURLINFO_NUM_CONNECTS),
        ];
    }

    /**
     * The classic curl_multi loop (the shape Guzzle's CurlMultiHandler uses). @param list<string> $urls
     * @return list<mixed> the decoded bodies, in $urls order
     */
    private static function multiGet(array $urls): array
    {
        $mh = \curl_multi_init();
        $handles = [];
        foreach ($urls as $url) {
            $ch = \curl_init($url);
            \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
            \curl_multi_add_handle($mh, $ch);
            $handles[] = $ch;
        }
        $running = 0;
        do {
            $status = \curl_multi_exec($mh, $running);
            if ($running > 0 && $status === \CURLM_OK) {
                \curl_multi_select($mh, 1.0);
            }
        } while ($running > 0 && $status === \CURLM_OK);
        $bodies = [];
        foreach ($handles as $ch) {
            $bodies[] = \json_decode((string) \curl_multi_getcontent($ch), true);
            \curl_multi_remove_handle($mh, $ch);
        }
        return $bodies;
    }

    /**
     * Bodies of GET requests made all at once from this process (curl_multi outside any coroutine).
     * @param list<string> $urls @return list<string>
     */
    private static function multiGetRaw(array $urls): array
    {
        $mh = \curl_multi_init();
        $handles = [];
        foreach ($urls as $url) {
            $ch = \curl_init($url);
            \curl_setopt_array($ch, [\CURLOPT_RETURNTRANSFER => true, \CURLOPT_TIMEOUT => 30]);
            \curl_multi_add_handle($mh, $ch);
            $handles[] = $ch;
        }
        do {
            \curl_multi_exec($mh, $running);
            if ($running > 0) {
                \curl_multi_select($mh, 1.0);
            }
        } while ($running > 0);
        return \array_map(static function (\CurlHandle $ch): string {
            self::assertSame(200, \curl_getinfo($ch, \CURLINFO_RESPONSE_CODE), (string) \curl_multi_getcontent($ch));
            return (string) \curl_multi_getcontent($ch);
        }, $handles);
    }

    /**
     * Runs each task in a coroutine of its own, all at once; returns their results in order.
     * @return list<mixed>
     */
    private static function concurrently(\Closure ...$tasks): array
    {
        return run(static function () use ($tasks): array {
            $coroutines = \array_map(static fn (\Closure $task) => go($task), $tasks);
            return \array_map(static fn ($coroutine) => $coroutine->join(), $coroutines);
        });
    }

    private static function at(bool $inside, \Closure $task): mixed
    {
        return $inside ? run($task) : $task();
    }

    /**
     * Runs $task inside or outside a coroutine; inside, a second coroutine counts its own 10 ms ticks
     * meanwhile, which it can only do while $task is suspended. @return array{mixed, int}
     */
    private static function atWithTicker(bool $inside, \Closure $task): array
    {
        if (!$inside) {
            return [$task(), 0];
        }
        return run(static function () use ($task): array {
            $ticks = 0;
            $done = false;
            go(static function () use (&$ticks, &$done): void {
                while (!$done) {
                    \Weft\sleep(0.01);
                    $ticks++;
                }
            });
            try {
                $result = $task();
                return [$result, $ticks];
            } finally {
                $done = true;
            }
        });
    }

    private static function url(string $which, string $path): string
    {
        return \sprintf('%s://127.0.0.1:%d%s', $which, self::$upstreams[$which]['port'], $path);
    }

    /** A port nothing listens on: bound and closed again. */
    private static function closedPort(): int
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) \substr((string) \strrchr(\stream_socket_get_name($server, false), ':'), 1);
        \fclose($server);
        return $port;
    }

    /** @param list<string> $args @return array{process: resource, stdin: resource, port: int} */
    private static function startUpstream(array $args): array
    {
        $command = \array_merge([\PHP_BINARY, \dirname(__DIR__) . '/fixtures/curl-upstream.php'], $args);
        $process = \proc_open($command, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        self::assertIsResource($process);
        $line = '';
        $deadline = \microtime(true) + 20;
        \stream_set_blocking($pipes[1], false);
        while (!\preg_match('/^READY (\d+)$/m', $line, $m)) {
            if (\microtime(true) > $deadline) {
                self::fail('the upstream did not start: ' . $line . \stream_get_contents($pipes[2]));
            }
            $read = [$pipes[1]];
            $w = $e = null;
            if (\stream_select($read, $w, $e, 0, 100_000)) {
                $line .= (string) \fread($pipes[1], 1024);
            }
        }
        return ['process' => $process, 'stdin' => $pipes[0], 'port' => (int) $m[1]];
    }

    /** @return array{string, string} the certificate and key files */
    private static function selfSignedCertificate(string $dir): array
    {
        $key = \openssl_pkey_new(['private_key_bits' => 2048, 'private_key_type' => \OPENSSL_KEYTYPE_RSA]);
        $csr = \openssl_csr_new(['commonName' => '127.0.0.1'], $key, ['digest_alg' => 'sha256']);
        $cert = \openssl_csr_sign($csr, null, $key, 2, ['digest_alg' => 'sha256']);
        \openssl_x509_export($cert, $certPem);
        \openssl_pkey_export($key, $keyPem);
        \file_put_contents("$dir/cert.pem", $certPem);
        \file_put_contents("$dir/key.pem", $keyPem);
        return ["$dir/cert.pem", "$dir/key.pem"];
    }
}
