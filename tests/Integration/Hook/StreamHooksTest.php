<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Cancelled;
use Weft\Hook\Hooks;
use Weft\Loop\NativeDriver;
use Weft\Loop\Loop;
use Weft\Tests\Integration\Client\Http\ChildProcess;

use function Weft\go;
use function Weft\run;

/**
 * Unchanged blocking PHP code against real services, with the stream hooks on: inside a coroutine a call
 * that waits lets the others run (shown by the order in which they finish: a blocking call would finish
 * first whatever its length), outside one it behaves as without Weft.
 */
final class StreamHooksTest extends TestCase
{
    private static ?ChildProcess $upstream = null;
    private static ?ChildProcess $tls = null;
    private static string $tlsDir = '';

    public static function setUpBeforeClass(): void
    {
        if (!Hooks::isSupported()) {
            return;
        }
        self::$upstream = new ChildProcess([\PHP_BINARY, \dirname(__DIR__, 3) . '/examples/delay-server.php', '--port', '0', '--delay', '0']);
        self::$tlsDir = \sys_get_temp_dir() . '/weft-hook-tls-' . \bin2hex(\random_bytes(4));
        \mkdir(self::$tlsDir);
        self::$tls = new ChildProcess([\PHP_BINARY, __DIR__ . '/fixtures/slow-tls-server.php', ...self::certificate(self::$tlsDir)]);
    }

    public static function tearDownAfterClass(): void
    {
        self::$upstream?->stop();
        self::$tls?->stop();
        self::$upstream = self::$tls = null;
        if (self::$tlsDir !== '') {
            \array_map('unlink', \glob(self::$tlsDir . '/*') ?: []);
            @\rmdir(self::$tlsDir);
        }
    }

    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        Loop::reset('select');
        self::assertSame(Hooks::KINDS['stream'], Hooks::enable(Hooks::KINDS['stream']) & Hooks::KINDS['stream']);
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

    #[DataProvider('backends')]
    public function testPdoQueriesInTwoCoroutinesOverlap(string $backend): void
    {
        $this->useLoop($backend);
        $log = run(static function (): array {
            $log = [];
            $slow = go(static function () use (&$log): void {
                self::pdo()->query('SELECT SLEEP(0.6)')->fetchColumn();
                $log[] = 'slow';
            });
            $fast = go(static function () use (&$log): void {
                self::pdo()->query('SELECT SLEEP(0.1)')->fetchColumn();
                $log[] = 'fast';
            });
            $slow->join();
            $fast->join();
            return $log;
        });
        self::assertSame(['fast', 'slow'], $log);
    }

    public function testWithStreamHooksOffTheSameCodeBlocks(): void
    {
        Hooks::disable();
        $log = run(static function (): array {
            $log = [];
            $slow = go(static function () use (&$log): void {
                self::pdo()->query('SELECT SLEEP(0.3)')->fetchColumn();
                $log[] = 'slow';
            });
            $fast = go(static function () use (&$log): void {
                self::pdo()->query('SELECT 1')->fetchColumn();
                $log[] = 'fast';
            });
            $slow->join();
            $fast->join();
            return $log;
        });
        self::assertSame(['slow', 'fast'], $log);
    }

    public function testMysqliQueriesInTwoCoroutinesOverlap(): void
    {
        $log = run(static function (): array {
            $log = [];
            $slow = go(static function () use (&$log): void {
                self::mysqli()->query('SELECT SLEEP(0.6)')->fetch_row();
                $log[] = 'slow';
            });
            $fast = go(static function () use (&$log): void {
                self::assertSame([['1']], self::mysqli()->query('SELECT 1')->fetch_all());
                $log[] = 'fast';
            });
            $slow->join();
            $fast->join();
            return $log;
        });
        self::assertSame(['fast', 'slow'], $log);
    }

    public function testRedisBlpopWaitsWhileAnotherCoroutinePushes(): void
    {
        $key = 'weft:hooks:' . \bin2hex(\random_bytes(6));
        $popped = run(static function () use ($key): mixed {
            $waiter = go(static fn () => self::redis()->blPop([$key], 5));
            $pusher = go(static fn () => self::redis()->rPush($key, 'v'));
            $pusher->join();
            return $waiter->join();
        });
        self::assertSame([$key, 'v'], $popped);
    }

    public function testFileGetContentsHttpAndHttpsOverlap(): void
    {
        $http = 'http://127.0.0.1:' . self::$upstream->port;
        $https = 'https://localhost:' . self::$tls->port;
        $context = \stream_context_create(['ssl' => ['cafile' => self::$tlsDir . '/cert.pem']]);
        $log = run(static function () use ($http, $https, $context): array {
            $log = [];
            $waits = [
                go(static function () use ($http, &$log): void {
                    $log[] = 'http slow ' . \file_get_contents($http . '/?delay=1.5');
                }),
                go(static function () use ($https, $context, &$log): void {
                    $log[] = 'https slow ' . \file_get_contents($https . '/?delay=1.5', false, $context);
                }),
                go(static function () use ($http, &$log): void {
                    $log[] = 'http fast ' . \file_get_contents($http . '/?delay=0.05');
                }),
            ];
            foreach ($waits as $wait) {
                $wait->join();
            }
            return $log;
        });
        self::assertSame('http fast ok', $log[0]);
        self::assertEqualsCanonicalizing(['http fast ok', 'http slow ok', 'https slow secure'], $log);
    }

    public function testOutsideACoroutineEverythingWorksAsWithoutWeft(): void
    {
        self::assertSame('1', (string) self::pdo()->query('SELECT 1')->fetchColumn());
        self::assertSame('ok', \file_get_contents('http://127.0.0.1:' . self::$upstream->port . '/'));
        $context = \stream_context_create(['ssl' => ['cafile' => self::$tlsDir . '/cert.pem']]);
        self::assertSame('secure', \file_get_contents('https://localhost:' . self::$tls->port . '/', false, $context));
        self::assertTrue(self::redis()->set('weft:hooks:outside', 'x'));
    }

    public function testAnUntrustedCertificateIsStillRefusedInACoroutine(): void
    {
        $result = run(static function (): array {
            $messages = '';
            \set_error_handler(static function (int $type, string $message) use (&$messages): bool {
                $messages .= $message . "\n";
                return true;
            });
            try {
                $body = \file_get_contents('https://localhost:' . self::$tls->port . '/');
            } finally {
                \restore_error_handler();
            }
            return [$body, $messages];
        });
        self::assertFalse($result[0]);
        self::assertStringContainsString('certificate verify failed', $result[1]);
    }

    public function testStreamTimeoutKeepsItsMeaningInACoroutine(): void
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = \stream_socket_get_name($server, false);
        $result = run(static function () use ($address): array {
            $other = go(static function (): string {
                \Weft\sleep(0.01);
                return 'ran';
            });
            $client = \stream_socket_client('tcp://' . $address, $errno, $error, 5);
            \stream_set_timeout($client, 0, 200_000);
            $data = \fread($client, 10);
            return [$data, \stream_get_meta_data($client)['timed_out'], $other->join()];
        });
        \fclose($server);
        self::assertSame(['', true, 'ran'], $result);
    }

    public function testDefaultSocketTimeoutAndMysqlReadTimeout(): void
    {
        $previous = \ini_set('default_socket_timeout', '1');
        try {
            $result = run(static fn () => @\file_get_contents('http://127.0.0.1:' . self::$upstream->port . '/?delay=3'));
            self::assertFalse($result);
        } finally {
            \ini_set('default_socket_timeout', (string) $previous);
        }
        $previous = \ini_set('mysqlnd.net_read_timeout', '1');
        try {
            $error = run(static function (): string {
                try {
                    self::pdo()->query('SELECT SLEEP(3)');
                    return 'no error';
                } catch (\PDOException $e) {
                    return $e->getMessage();
                }
            });
            self::assertStringContainsString('gone away', $error);
        } finally {
            \ini_set('mysqlnd.net_read_timeout', (string) $previous);
        }
    }

    public function testRedisReadTimeoutKeepsItsMeaningInsideAndOutsideACoroutine(): void
    {
        $call = static function (): string {
            $url = \parse_url(\getenv('WEFT_TEST_REDIS_URL') ?: 'redis://127.0.0.1:16379');
            $redis = new \Redis();
            $redis->connect($url['host'], $url['port'], 5.0, null, 0, 0.3);
            try {
                // Sent raw, so phpredis does not stretch its read timeout for the blocking command.
                $redis->rawCommand('BLPOP', 'weft:hooks:never-' . \bin2hex(\random_bytes(4)), '5');
                return 'no timeout';
            } catch (\RedisException $e) {
                return $e->getMessage();
            }
        };
        [$inside, $other] = run(static function () use ($call): array {
            $other = go(static function (): string {
                \Weft\sleep(0.05);
                return 'ran';
            });
            return [$call(), $other->join()];
        });
        self::assertSame('socket error on read socket', $inside);
        self::assertSame('ran', $other);
        self::assertSame('socket error on read socket', $call());
    }

    public function testAKilledConnectionFailsTheSuspendedQuery(): void
    {
        $error = run(static function (): string {
            $victim = self::pdo();
            $id = (int) $victim->query('SELECT CONNECTION_ID()')->fetchColumn();
            $query = go(static function () use ($victim): string {
                try {
                    $victim->query('SELECT SLEEP(10)')->fetchColumn();
                    return 'no error';
                } catch (\PDOException $e) {
                    return $e->getMessage();
                }
            });
            self::pdo()->exec("KILL {$id}");
            return $query->join(5.0);
        });
        self::assertMatchesRegularExpression('/gone away|Lost connection|interrupted|server shutdown/i', $error);
    }

    public function testAStreamClosedByAnotherCoroutineWakesItsReader(): void
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = \stream_socket_get_name($server, false);
        $result = run(static function () use ($address): array {
            $client = \stream_socket_client('tcp://' . $address, $errno, $error, 5);
            $reader = go(static function () use ($client): array {
                $data = @\fread($client, 10);
                return [$data, \error_get_last()['message'] ?? ''];
            });
            \fclose($client);
            return $reader->join(5.0);
        });
        \fclose($server);
        self::assertFalse($result[0]);
        self::assertStringContainsString('closed by another coroutine', $result[1]);
    }

    public function testTwoCoroutinesOnOneConnectionGetAClearError(): void
    {
        $key = 'weft:hooks:' . \bin2hex(\random_bytes(6));
        $result = run(static function () use ($key): array {
            $redis = self::redis();
            $first = go(static fn () => $redis->blPop([$key], 1));
            try {
                $redis->get($key);
                $second = 'no error';
            } catch (\Throwable $e) {
                $second = $e->getMessage();
            }
            return [$first->join(), $second];
        });
        self::assertStringContainsString('one coroutine at a time', $result[1]);
    }

    public function testCancellingACoroutineSuspendedInAQueryThrowsIntoIt(): void
    {
        $outcome = run(static function (): string {
            $query = go(static function (): string {
                self::pdo()->query('SELECT SLEEP(5)');
                return 'finished';
            });
            \Weft\sleep(0.1);
            $query->cancel();
            try {
                return $query->join(5.0);
            } catch (Cancelled) {
                return 'cancelled';
            }
        });
        self::assertSame('cancelled', $outcome);
    }

    public function testPersistentConnectionsAreNotHookedAndStaySafe(): void
    {
        $results = run(static function (): array {
            $open = static fn () => (string) self::pdo([\PDO::ATTR_PERSISTENT => true])->query('SELECT 1')->fetchColumn();
            $a = go($open);
            $b = go($open);
            return [$a->join(), $b->join()];
        });
        self::assertSame(['1', '1'], $results);
    }

    private function useLoop(string $backend): void
    {
        if ($backend === 'epoll' && !\Weft\Loop\DriverFactory::epollAvailable()) {
            self::markTestSkipped('no epoll backend');
        }
        Loop::reset($backend);
    }

    private static function pdo(array $options = []): \PDO
    {
        $url = \parse_url(\getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft');
        return new \PDO(
            \sprintf('mysql:host=%s;port=%d;dbname=%s', $url['host'], $url['port'], \ltrim($url['path'], '/')),
            $url['user'],
            $url['pass'] ?? '',
            $options + [\PDO::ATTR_ERRMODE => \PDO::ERRMODE_EXCEPTION],
        );
    }

    private static function mysqli(): \mysqli
    {
        $url = \parse_url(\getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft');
        return new \mysqli($url['host'], $url['user'], $url['pass'] ?? '', \ltrim($url['path'], '/'), $url['port']);
    }

    private static function redis(): \Redis
    {
        $url = \parse_url(\getenv('WEFT_TEST_REDIS_URL') ?: 'redis://127.0.0.1:16379');
        $redis = new \Redis();
        $redis->connect($url['host'], $url['port'], 5.0);
        return $redis;
    }

    /** @return array{string, string} certificate and key files for localhost */
    private static function certificate(string $dir): array
    {
        $config = $dir . '/openssl.cnf';
        \file_put_contents($config, "[req]\ndistinguished_name = dn\n[dn]\n[ext]\nsubjectAltName = DNS:localhost, IP:127.0.0.1\n"
            . "basicConstraints = critical, CA:TRUE\nkeyUsage = digitalSignature, keyEncipherment, keyCertSign\n");
        $options = ['config' => $config, 'digest_alg' => 'sha256', 'x509_extensions' => 'ext', 'req_extensions' => 'ext'];
        $key = \openssl_pkey_new(['private_key_type' => \OPENSSL_KEYTYPE_RSA, 'private_key_bits' => 2048] + $options);
        $csr = \openssl_csr_new(['commonName' => 'localhost'], $key, $options);
        $cert = \openssl_csr_sign($csr, null, $key, 1, $options, \random_int(1, \PHP_INT_MAX));
        \openssl_x509_export_to_file($cert, $dir . '/cert.pem');
        \openssl_pkey_export_to_file($key, $dir . '/key.pem', null, $options);
        return [$dir . '/cert.pem', $dir . '/key.pem'];
    }
}
