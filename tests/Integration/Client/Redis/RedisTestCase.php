<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Redis;

use PHPUnit\Framework\TestCase;
use Weft\Client\Redis\Config;
use Weft\Client\Redis\Connection;
use Weft\Socket\ConnectException;
use Weft\Client\Redis\Pool;
use Weft\Client\Redis\Subscriber;
use Weft\Loop\Loop;

/**
 * Runs against the Redis of scripts/services.sh (WEFT_TEST_REDIS_URL). Tests use database 9 and keys
 * under a prefix of their own, deleted afterwards; every connection, subscriber and pool a test opened
 * is closed, and each test gets a fresh loop.
 */
abstract class RedisTestCase extends TestCase
{
    protected const DATABASE = 9;

    protected string $prefix;
    /** @var list<Connection|Subscriber|Pool> */
    private array $opened = [];

    protected function setUp(): void
    {
        Loop::reset('select');
        $this->prefix = 'weft-test:' . \bin2hex(\random_bytes(6)) . ':';
    }

    protected function tearDown(): void
    {
        foreach ($this->opened as $thing) {
            $thing->close();
        }
        $this->opened = [];
        Loop::reset('select');
        try {
            $cleaner = Connection::connect(self::config());
            $keys = \iterator_to_array($cleaner->scanAll($this->prefix . '*', 1000), false);
            if ($keys !== []) {
                $cleaner->del(...$keys);
            }
            $cleaner->close();
        } catch (ConnectException) {
            // The server is down: a failing test says so already.
        }
    }

    protected static function url(): string
    {
        $url = \getenv('WEFT_TEST_REDIS_URL');
        return \is_string($url) && $url !== '' ? $url : 'redis://127.0.0.1:16379';
    }

    /** The test server, database 9, RESP $protocol. */
    protected static function config(int $protocol = 2): Config
    {
        return Config::fromUrl(self::url())->withDatabase(self::DATABASE)->withProtocol($protocol)->withConnectTimeout(5.0);
    }

    protected function connect(int|Config $config = 2): Connection
    {
        $config = \is_int($config) ? self::config($config) : $config;
        try {
            return $this->opened[] = Connection::connect($config);
        } catch (ConnectException $e) {
            self::fail($e->getMessage() . ' -- is `bash scripts/services.sh start` running?');
        }
    }

    protected function subscriber(int $protocol = 2): Subscriber
    {
        return $this->opened[] = Subscriber::connect(self::config($protocol));
    }

    protected function pool(int|Config $config = 2, ?\Weft\Pool\PoolOptions $options = null): Pool
    {
        return $this->opened[] = new Pool(\is_int($config) ? self::config($config) : $config, $options);
    }

    protected function key(string $name): string
    {
        return $this->prefix . $name;
    }

    /** @return iterable<string, array{int}> */
    public static function protocols(): iterable
    {
        yield 'RESP2' => [2];
        yield 'RESP3' => [3];
    }

    /** A port on which nothing listens (bound, then released). */
    protected static function closedPort(): int
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $name = \stream_socket_get_name($server, false);
        \fclose($server);
        return (int) \substr((string) $name, \strrpos((string) $name, ':') + 1);
    }

    /**
     * The raw bytes of one reply, read on a plain socket: to prove which RESP type the server used.
     *
     * @param list<string> $setup commands sent first (their replies are discarded)
     */
    protected static function rawReply(int $protocol, array $setup, string ...$command): string
    {
        $config = self::config();
        $socket = \stream_socket_client('tcp://' . $config->address(), $errno, $error, 5.0);
        self::assertIsResource($socket, "raw connect: $error");
        \stream_set_timeout($socket, 5);
        $reader = new \Weft\Client\Redis\Protocol\RespReader();
        $send = static function (array $args) use ($socket, $reader): string {
            \fwrite($socket, \Weft\Client\Redis\Protocol\RespWriter::command($args));
            $raw = '';
            while (true) {
                $chunk = \fread($socket, 65536);
                self::assertNotFalse($chunk);
                self::assertNotSame('', $chunk, 'raw connection closed');
                $raw .= $chunk;
                $reader->feed($chunk);
                if ($reader->next($value)) {
                    return $raw;
                }
            }
        };
        if ($protocol === 3) {
            $send(['HELLO', '3']);
        }
        $send(['SELECT', (string) self::DATABASE]);
        foreach ($setup as $args) {
            $send($args);
        }
        $raw = $send($command);
        \fclose($socket);
        return $raw;
    }
}
