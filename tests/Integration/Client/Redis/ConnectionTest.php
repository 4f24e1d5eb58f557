<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Redis;

use PHPUnit\Framework\Attributes\DataProvider;
use Weft\Client\Redis\Config;
use Weft\Client\Redis\Connection;
use Weft\Client\Redis\ConnectionLost;
use Weft\Socket\ConnectException;
use Weft\Client\Redis\Protocol\Push;
use Weft\Client\Redis\RedisError;
use Weft\Pool\BrokenConnection;

use function Weft\run;

final class ConnectionTest extends RedisTestCase
{
    #[DataProvider('protocols')]
    public function testConnectsAndSpeaksTheRequestedProtocol(int $protocol): void
    {
        $redis = $this->connect($protocol);
        self::assertSame($protocol, $redis->protocol());
        self::assertSame('PONG', $redis->ping());
        self::assertSame('hi', $redis->ping('hi'));
        self::assertStringContainsString("resp=$protocol", $redis->command('CLIENT', 'INFO'));
        self::assertStringContainsString('db=' . self::DATABASE, $redis->command('CLIENT', 'INFO'));
        if ($protocol === 3) {
            $info = $redis->serverInfo();
            self::assertSame('redis', $info['server']);
            self::assertSame(3, $info['proto']);
        } else {
            self::assertSame([], $redis->serverInfo());
        }
    }

    public function testConnectsFromAUrlString(): void
    {
        $redis = Connection::connect(self::url() . '/' . self::DATABASE . '?protocol=3&timeout=2');
        try {
            self::assertSame(3, $redis->protocol());
            self::assertSame(2.0, $redis->config()->timeout);
            self::assertSame('PONG', $redis->ping());
        } finally {
            $redis->close();
        }
        self::assertTrue($redis->isClosed());
    }

    #[DataProvider('protocols')]
    public function testAuthWithUserAndPassword(int $protocol): void
    {
        $redis = $this->connect(self::config($protocol)->withAuth('weft', 'weft'));
        self::assertSame('weft', $redis->command('ACL', 'WHOAMI'));
        self::assertSame('PONG', $redis->ping());
    }

    #[DataProvider('protocols')]
    public function testWrongPasswordIsARedisErrorWithItsPrefix(int $protocol): void
    {
        try {
            Connection::connect(self::config($protocol)->withAuth('not-the-password', 'weft'));
            self::fail('a wrong password must be refused');
        } catch (RedisError $e) {
            self::assertSame('WRONGPASS', $e->prefix);
            self::assertStringContainsString('WRONGPASS', $e->getMessage());
        }
    }

    public function testPasswordOnlyAuth(): void
    {
        // The test server's default user has no password: RESP2 "AUTH <password>" says so...
        try {
            Connection::connect(self::config(2)->withAuth('weft'));
            self::fail('AUTH <password> must fail without a password configured');
        } catch (RedisError $e) {
            self::assertSame('ERR', $e->prefix);
            self::assertStringContainsString('AUTH <password> called without any password configured', $e->getMessage());
        }
        // ...while RESP3 sends "HELLO 3 AUTH default <password>", which a nopass user accepts.
        $redis = $this->connect(self::config(3)->withAuth('anything'));
        self::assertSame('default', $redis->command('ACL', 'WHOAMI'));
    }

    public function testUnknownCommandIsAnErr(): void
    {
        $redis = $this->connect(2);
        try {
            $redis->command('NOSUCHCOMMAND', 'x');
            self::fail();
        } catch (RedisError $e) {
            self::assertSame('ERR', $e->prefix);
            self::assertStringContainsString('unknown command', $e->getMessage());
        }
        self::assertSame('PONG', $redis->ping());
    }

    public function testDatabaseSelection(): void
    {
        $a = $this->connect(self::config()->withDatabase(9));
        $b = $this->connect(self::config()->withDatabase(10));
        $key = $this->key('db');
        $a->set($key, 'nine');
        self::assertNull($b->get($key), 'another database');
        self::assertSame('nine', $a->get($key));
        $b->select(9);
        self::assertSame('nine', $b->get($key));
        self::assertStringContainsString('db=9', $b->command('CLIENT', 'INFO'));
    }

    #[DataProvider('protocols')]
    public function testStringAndKeyHelpers(int $protocol): void
    {
        $r = $this->connect($protocol);
        $k = $this->key('s');
        self::assertNull($r->get($k));
        self::assertTrue($r->set($k, 'v1'));
        self::assertSame('v1', $r->get($k));
        self::assertTrue($r->set($k, 42));
        self::assertSame('42', $r->get($k));
        self::assertTrue($r->set($k, 1.5));
        self::assertSame('1.5', $r->get($k));

        self::assertFalse($r->set($k, 'x', nx: true), 'NX on an existing key');
        self::assertTrue($r->set($this->key('new'), 'x', nx: true));
        self::assertFalse($r->set($this->key('missing'), 'x', xx: true), 'XX on a missing key');
        self::assertTrue($r->set($k, 'v2', xx: true));
        self::assertSame('v2', $r->set($k, 'v3', get: true), 'GET returns the old value');
        self::assertNull($r->set($this->key('fresh'), 'v', get: true));

        self::assertTrue($r->set($k, 'v', ex: 100));
        self::assertGreaterThan(90, $r->ttl($k));
        self::assertTrue($r->set($k, 'v', px: 50000));
        self::assertGreaterThan(40, $r->ttl($k));
        self::assertTrue($r->set($k, 'w', keepTtl: true));
        self::assertGreaterThan(40, $r->ttl($k), 'KEEPTTL kept the expiry');
        self::assertTrue($r->set($k, 'w'));
        self::assertSame(-1, $r->ttl($k), 'a plain SET drops the expiry');
        self::assertSame(-2, $r->ttl($this->key('nothing')));
        self::assertTrue($r->expire($k, 100));
        self::assertGreaterThan(90, $r->ttl($k));
        self::assertFalse($r->expire($this->key('nothing'), 100));

        $c = $this->key('counter');
        self::assertSame(1, $r->incr($c));
        self::assertSame(11, $r->incrBy($c, 10));
        self::assertSame(10, $r->decr($c));
        self::assertSame(7, $r->decrBy($c, 3));

        self::assertTrue($r->mset([$this->key('m1') => 'a', $this->key('m2') => 2]));
        self::assertSame(['a', '2', null], $r->mget($this->key('m1'), $this->key('m2'), $this->key('m3')));

        self::assertSame(2, $r->exists($k, $c, $this->key('nothing')));
        self::assertSame(2, $r->del($k, $c, $this->key('nothing')));
        self::assertSame(0, $r->exists($k));

        $keys = $r->keys($this->prefix . 'm*');
        \sort($keys);
        self::assertSame([$this->key('m1'), $this->key('m2')], $keys);
    }

    #[DataProvider('protocols')]
    public function testScanVisitsEveryKey(int $protocol): void
    {
        $r = $this->connect($protocol);
        $values = [];
        for ($i = 0; $i < 250; $i++) {
            $values[$this->key("scan:$i")] = $i;
        }
        $r->mset($values);
        [$cursor, $keys] = $r->scan('0', $this->prefix . 'scan:*', 10);
        self::assertIsString($cursor);
        self::assertIsArray($keys);
        $all = \array_unique(\iterator_to_array($r->scanAll($this->prefix . 'scan:*', 50), false));
        \sort($all);
        $expected = \array_keys($values);
        \sort($expected);
        self::assertSame($expected, $all);
    }

    #[DataProvider('protocols')]
    public function testHashHelpers(int $protocol): void
    {
        $r = $this->connect($protocol);
        $h = $this->key('h');
        self::assertSame([], $r->hgetall($h));
        self::assertSame(1, $r->hset($h, 'name', 'ada'));
        self::assertSame(2, $r->hset($h, ['age' => 36, 'city' => 'London', 'name' => 'Ada']));
        self::assertSame('Ada', $r->hget($h, 'name'));
        self::assertNull($r->hget($h, 'nothing'));
        self::assertSame(['name' => 'Ada', 'age' => '36', 'city' => 'London'], $r->hgetall($h));
        self::assertSame(40, $r->hincrBy($h, 'age', 4));
        self::assertTrue($r->hexists($h, 'age'));
        self::assertFalse($r->hexists($h, 'nothing'));
        self::assertSame(3, $r->hlen($h));
        self::assertSame(2, $r->hdel($h, 'age', 'city', 'nothing'));
        self::assertSame(['name' => 'Ada'], $r->hgetall($h));

        // Numeric field names: RESP3 maps and RESP2 pairs decode to the same array.
        $r->hset($this->key('n'), ['0' => 'zero', '1' => 'one']);
        self::assertSame([0 => 'zero', 1 => 'one'], $r->hgetall($this->key('n')));
    }

    #[DataProvider('protocols')]
    public function testListHelpers(int $protocol): void
    {
        $r = $this->connect($protocol);
        $l = $this->key('l');
        self::assertSame(2, $r->rpush($l, 'b', 'c'));
        self::assertSame(3, $r->lpush($l, 'a'));
        self::assertSame(5, $r->rpush($l, 4, 5.5));
        self::assertSame(['a', 'b', 'c', '4', '5.5'], $r->lrange($l, 0, -1));
        self::assertSame(['b', 'c'], $r->lrange($l, 1, 2));
        self::assertSame(5, $r->llen($l));
        self::assertSame('a', $r->lpop($l));
        self::assertSame('5.5', $r->rpop($l));
        self::assertSame([$l, 'b'], $r->blpop($l, 1.0));
        self::assertSame([$l, '4'], $r->brpop([$this->key('empty'), $l], 1.0));
        self::assertSame(1, $r->llen($l));
        self::assertNull($r->lpop($this->key('empty')));
        self::assertSame([], $r->lrange($this->key('empty'), 0, -1));
    }

    #[DataProvider('protocols')]
    public function testBlpopTimesOutWithNull(int $protocol): void
    {
        $r = $this->connect(self::config($protocol)->withTimeout(0.5));
        $started = \hrtime(true);
        // The reply timeout (0.5 s) is extended by the command's own wait.
        self::assertNull($r->blpop($this->key('nothing'), 0.8));
        self::assertGreaterThanOrEqual(0.7, (\hrtime(true) - $started) / 1e9);
        self::assertSame('PONG', $r->ping());
    }

    #[DataProvider('protocols')]
    public function testSetHelpers(int $protocol): void
    {
        $r = $this->connect($protocol);
        $s = $this->key('set');
        self::assertSame(3, $r->sadd($s, 'a', 'b', 'c'));
        self::assertSame(0, $r->sadd($s, 'a'));
        self::assertSame(1, $r->sadd($s, 7));
        $members = $r->smembers($s);
        \sort($members);
        self::assertSame(['7', 'a', 'b', 'c'], $members);
        self::assertTrue($r->sismember($s, 'a'));
        self::assertTrue($r->sismember($s, 7));
        self::assertFalse($r->sismember($s, 'z'));
        self::assertSame(4, $r->scard($s));
        self::assertSame(2, $r->srem($s, 'a', 'b', 'z'));
        self::assertSame(2, $r->scard($s));
        self::assertSame([], $r->smembers($this->key('empty')));
    }

    #[DataProvider('protocols')]
    public function testSortedSetHelpers(int $protocol): void
    {
        $r = $this->connect($protocol);
        $z = $this->key('z');
        self::assertSame(3, $r->zadd($z, ['alice' => 1.5, 'bob' => 3, 'carol' => -2.25]));
        self::assertSame(0, $r->zadd($z, ['alice' => 2.5]));
        self::assertSame(['carol', 'alice', 'bob'], $r->zrange($z, 0, -1));
        self::assertSame(['carol' => -2.25, 'alice' => 2.5, 'bob' => 3.0], $r->zrange($z, 0, -1, true));
        self::assertSame(['bob' => 3.0], $r->zrange($z, -1, -1, true));
        self::assertSame([], $r->zrange($this->key('empty'), 0, -1, true));
        self::assertSame(2.5, $r->zscore($z, 'alice'));
        self::assertNull($r->zscore($z, 'nobody'));
        self::assertSame(3.0, $r->zincrBy($z, 0.5, 'alice'));
        self::assertSame(4.0, $r->zincrBy($z, 1, 'alice'));
        self::assertSame(3, $r->zcard($z));
        self::assertSame(1, $r->zrem($z, 'carol', 'nobody'));
        self::assertSame(2, $r->zcard($z));
        $r->zadd($z, ['big' => \INF, 'small' => -\INF]);
        self::assertSame(\INF, $r->zscore($z, 'big'));
        self::assertSame(['small' => -\INF], $r->zrange($z, 0, 0, true));
    }

    public function testFlushdbEmptiesOnlyTheSelectedDatabase(): void
    {
        $own = $this->connect(self::config()->withDatabase(15));
        $other = $this->connect(2);
        $own->set('weft-flush-test', '1');
        $other->set($this->key('kept'), '1');
        self::assertTrue($own->flushdb());
        self::assertNull($own->get('weft-flush-test'));
        self::assertSame('1', $other->get($this->key('kept')));
        self::assertTrue($own->flushdb(async: true));
    }

    #[DataProvider('protocols')]
    public function testPublishCountsReceivers(int $protocol): void
    {
        $r = $this->connect($protocol);
        self::assertSame(0, $r->publish($this->key('nobody-listens'), 'hello'));
    }

    #[DataProvider('protocols')]
    public function testErrorRepliesAreTypedAndLeaveTheConnectionUsable(int $protocol): void
    {
        $r = $this->connect($protocol);
        $r->set($this->key('str'), 'x');
        try {
            $r->lpush($this->key('str'), 'y');
            self::fail();
        } catch (RedisError $e) {
            self::assertSame('WRONGTYPE', $e->prefix);
            self::assertStringStartsWith('WRONGTYPE Operation against a key holding the wrong kind of value', $e->getMessage());
            self::assertNotInstanceOf(BrokenConnection::class, $e);
        }
        try {
            $r->incr($this->key('str'));
            self::fail();
        } catch (RedisError $e) {
            self::assertSame('ERR', $e->prefix);
        }
        self::assertSame('x', $r->get($this->key('str')));
    }

    public function testBinarySafeAndLargeValues(): void
    {
        $r = $this->connect(3);
        $binary = "\0\r\n\$-1\r\n*3\r\n\xff";
        $r->set($this->key('bin'), $binary);
        self::assertSame($binary, $r->get($this->key('bin')));
        $big = \random_bytes(2 * 1024 * 1024);
        $r->set($this->key('big'), $big);
        self::assertSame($big, $r->get($this->key('big')));
    }

    public function testResp2DecodingOfRealReplies(): void
    {
        $r = $this->connect(2);
        $this->fillTypes($r);
        // RESP2 has arrays, bulk strings, integers, nulls: the client gives the same PHP values as RESP3.
        self::assertStringStartsWith('*', self::rawReply(2, [], 'HGETALL', $this->key('h')));
        self::assertSame(['f' => 'v', 'g' => 'w'], $r->hgetall($this->key('h')));
        self::assertStringStartsWith('$', self::rawReply(2, [], 'ZSCORE', $this->key('z'), 'm'));
        self::assertSame(1.5, $r->zscore($this->key('z'), 'm'));
        self::assertSame('1.5', $r->command('ZSCORE', $this->key('z'), 'm'), 'raw command: RESP2 sends a double as text');
        self::assertSame("\$-1\r\n", self::rawReply(2, [], 'GET', $this->key('none')));
        self::assertNull($r->get($this->key('none')));
        self::assertSame("*-1\r\n", self::rawReply(2, [], 'BLPOP', $this->key('none'), '0.01'));
        self::assertNull($r->blpop($this->key('none'), 0.01));
        self::assertSame(1, $r->command('EVAL', 'return true', 0), 'Lua true is integer 1 in RESP2');
        self::assertNull($r->command('EVAL', 'return false', 0), 'Lua false is a null in RESP2');
        self::assertSame(['a', 'b'], $r->command('EVAL', "return {'a','b'}", 0));
    }

    public function testResp3DecodingOfEveryTypeTheServerProduces(): void
    {
        $r = $this->connect(3);
        $this->fillTypes($r);
        $h = $this->key('h');

        self::assertStringStartsWith('%2', self::rawReply(3, [], 'HGETALL', $h), 'map');
        self::assertSame(['f' => 'v', 'g' => 'w'], $r->command('HGETALL', $h));

        self::assertStringStartsWith('~2', self::rawReply(3, [], 'SMEMBERS', $this->key('s')), 'set');
        $members = $r->command('SMEMBERS', $this->key('s'));
        \sort($members);
        self::assertSame(['a', 'b'], $members);

        self::assertSame(",1.5\r\n", self::rawReply(3, [], 'ZSCORE', $this->key('z'), 'm'), 'double');
        self::assertSame(1.5, $r->command('ZSCORE', $this->key('z'), 'm'));
        self::assertSame([['m', 1.5]], $r->command('ZRANGE', $this->key('z'), 0, -1, 'WITHSCORES'));

        self::assertSame("_\r\n", self::rawReply(3, [], 'GET', $this->key('none')), 'null');
        self::assertNull($r->command('GET', $this->key('none')));

        self::assertSame("#t\r\n", self::rawReply(3, [], 'EVAL', 'redis.setresp(3); return true', '0'), 'boolean');
        self::assertTrue($r->command('EVAL', 'redis.setresp(3); return true', 0));
        self::assertFalse($r->command('EVAL', 'redis.setresp(3); return false', 0));

        self::assertSame(",3.25\r\n", self::rawReply(3, [], 'EVAL', 'return {double=3.25}', '0'));
        self::assertSame(3.25, $r->command('EVAL', 'return {double=3.25}', 0));

        self::assertStringStartsWith('(', self::rawReply(3, [], 'EVAL', "return {big_number='123456789012345678901234567890'}", '0'), 'big number');
        self::assertSame('123456789012345678901234567890', $r->command('EVAL', "return {big_number='123456789012345678901234567890'}", 0));

        self::assertStringStartsWith('=', self::rawReply(3, [], 'CLIENT', 'INFO'), 'verbatim string');
        $info = $r->command('CLIENT', 'INFO');
        self::assertStringStartsWith('id=', $info, 'the "txt:" format prefix is removed');

        self::assertSame("+OK\r\n", self::rawReply(3, [], 'SET', $this->key('x'), 'y'), 'simple string');
        self::assertSame(':', self::rawReply(3, [], 'INCR', $this->key('i'))[0], 'integer');
        self::assertSame("\$1\r\ny\r\n", self::rawReply(3, [], 'GET', $this->key('x')), 'blob string');
        self::assertSame('y', $r->get($this->key('x')));
        self::assertSame(['a' => 1], $r->command('EVAL', 'return {map={a=1}}', 0));
        self::assertSame(['a'], $r->command('EVAL', 'return {set={a=true}}', 0));
        self::assertStringStartsWith('-MYERR', self::rawReply(3, [], 'EVAL', "return redis.error_reply('MYERR bad thing')", '0'), 'error');
        try {
            $r->command('EVAL', "return redis.error_reply('MYERR bad thing')", 0);
            self::fail();
        } catch (RedisError $e) {
            self::assertSame('MYERR', $e->prefix);
            self::assertSame('MYERR bad thing', $e->getMessage());
        }
        // Attributes are not produced by any command of Redis 7.0 (DEBUG PROTOCOL attrib is disabled on the
        // test server): the unit tests of RespReader cover them.
        self::assertSame([], $r->lastAttributes());
    }

    public function testResp3PushesBetweenRepliesGoToTheHandler(): void
    {
        $r = $this->connect(3);
        $writer = $this->connect(2);
        $pushes = [];
        $r->onPush(static function (Push $push) use (&$pushes): void {
            $pushes[] = $push;
        });
        $r->command('CLIENT', 'TRACKING', 'ON');
        $r->set($this->key('tracked'), '1');
        self::assertSame('1', $r->get($this->key('tracked')));
        $writer->set($this->key('tracked'), '2');
        // The invalidation was pushed before the reply to this command.
        self::assertSame('PONG', $r->ping());
        self::assertCount(1, $pushes);
        self::assertSame('invalidate', $pushes[0]->kind);
        self::assertSame([[$this->key('tracked')]], $pushes[0]->data);
    }

    #[DataProvider('protocols')]
    public function testPipelineReturnsRepliesInOrderWithErrorsInPlace(int $protocol): void
    {
        $r = $this->connect($protocol);
        $k = $this->key('p');
        $results = $r->pipeline(function ($pipe) use ($k): void {
            $pipe->set($k, 'v');
            $pipe->get($k);
            $pipe->incr($k);                       // error: not an integer
            $pipe->hset($k . 'h', ['a' => '1']);
            $pipe->hgetall($k . 'h');
            $pipe->zadd($k . 'z', ['m' => 0.5]);
            $pipe->zscore($k . 'z', 'm');
            $pipe->command('LPUSH', $k, 'x');      // error: wrong type
            $pipe->get($k . 'none');
            self::assertCount(9, $pipe);
        });
        self::assertCount(9, $results);
        self::assertTrue($results[0]);
        self::assertSame('v', $results[1]);
        self::assertInstanceOf(RedisError::class, $results[2]);
        self::assertSame('ERR', $results[2]->prefix);
        self::assertSame(1, $results[3]);
        self::assertSame(['a' => '1'], $results[4]);
        self::assertSame(1, $results[5]);
        self::assertSame(0.5, $results[6]);
        self::assertInstanceOf(RedisError::class, $results[7]);
        self::assertSame('WRONGTYPE', $results[7]->prefix);
        self::assertNull($results[8]);
        self::assertSame([], $r->pipeline(static function (): void {
        }));
        self::assertSame('v', $r->get($k), 'the connection is in sync after the pipeline');
    }

    public function testAThousandCommandsInOnePipeline(): void
    {
        $r = $this->connect(2);
        $k = $this->key('many');
        $results = $r->pipeline(function ($pipe) use ($k): void {
            for ($i = 0; $i < 1000; $i++) {
                $pipe->incr($k);
            }
        });
        self::assertSame(\range(1, 1000), $results);
    }

    #[DataProvider('protocols')]
    public function testTransaction(int $protocol): void
    {
        $r = $this->connect($protocol);
        $k = $this->key('tx');
        $results = $r->transaction(function ($tx) use ($k): void {
            $tx->set($k, '10');
            $tx->incrBy($k, 5);
            $tx->hset($k, 'f', 'v');   // fails at EXEC time: wrong type
            $tx->get($k);
            $tx->hgetall($k . 'h');
        });
        self::assertTrue($results[0]);
        self::assertSame(15, $results[1]);
        self::assertInstanceOf(RedisError::class, $results[2]);
        self::assertSame('WRONGTYPE', $results[2]->prefix);
        self::assertSame('15', $results[3]);
        self::assertSame([], $results[4]);
        self::assertSame([], $r->transaction(static function (): void {
        }));
    }

    public function testTransactionWithAQueueingErrorIsAbortedAsAWhole(): void
    {
        $r = $this->connect(2);
        $k = $this->key('tx');
        try {
            $r->transaction(function ($tx) use ($k): void {
                $tx->set($k, '1');
                $tx->command('NOSUCHCOMMAND');
            });
            self::fail();
        } catch (RedisError $e) {
            self::assertSame('EXECABORT', $e->prefix);
            self::assertInstanceOf(RedisError::class, $e->getPrevious());
            self::assertStringContainsString('unknown command', $e->getPrevious()->getMessage());
        }
        self::assertNull($r->get($k), 'nothing ran');
        self::assertSame('PONG', $r->ping());
    }

    #[DataProvider('protocols')]
    public function testWatchConflictAbortsTheTransaction(int $protocol): void
    {
        $r = $this->connect($protocol);
        $other = $this->connect($protocol);
        $k = $this->key('balance');
        $r->set($k, '100');

        $r->watch($k);
        self::assertTrue($r->isWatching());
        $balance = (int) $r->get($k);
        $other->set($k, '0');   // someone else changes it
        try {
            $r->transaction(static function ($tx) use ($k, $balance): void {
                $tx->set($k, (string) ($balance - 30));
            });
            self::fail('the transaction must not run');
        } catch (\Weft\Client\Redis\WatchConflict $e) {
            self::assertStringContainsString('watched key', $e->getMessage());
        }
        self::assertFalse($r->isWatching());
        self::assertSame('0', $r->get($k));

        // Without interference the same transaction runs.
        $r->watch($k);
        $balance = (int) $r->get($k);
        $results = $r->transaction(static function ($tx) use ($k, $balance): void {
            $tx->set($k, (string) ($balance + 5));
        });
        self::assertSame([true], $results);
        self::assertSame('5', $r->get($k));
    }

    public function testAnExceptionInTheTransactionClosureSendsNothingAndReleasesWatches(): void
    {
        $r = $this->connect(2);
        $other = $this->connect(2);
        $k = $this->key('w');
        $r->watch($k);
        try {
            $r->transaction(static function ($tx) use ($k): void {
                $tx->set($k, 'never');
                throw new \DomainException('changed my mind');
            });
            self::fail();
        } catch (\DomainException) {
        }
        self::assertFalse($r->isWatching());
        self::assertNull($r->get($k));
        // The WATCH is gone: a change by someone else no longer aborts the next transaction.
        $other->set($k, 'theirs');
        self::assertSame([true], $r->transaction(static function ($tx) use ($k): void {
            $tx->set($k, 'mine');
        }));
    }

    public function testRawSubscribeIsRefused(): void
    {
        $r = $this->connect(3);
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('Subscriber');
        $r->command('subscribe', 'x');
    }

    public function testSyncModeAndCoroutineModeRunTheSameCode(): void
    {
        $script = function (Connection $r, string $k): array {
            $r->set($k, 'a');
            $r->rpush($k . 'l', '1', '2');
            return [
                $r->get($k),
                $r->lrange($k . 'l', 0, -1),
                $r->pipeline(static function ($p) use ($k): void {
                    $p->get($k);
                    $p->llen($k . 'l');
                }),
                $r->transaction(static function ($t) use ($k): void {
                    $t->incr($k . 'n');
                }),
            ];
        };
        self::assertNull(\Weft\current());
        $sync = $script($this->connect(2), $this->key('sync'));
        $async = run(fn () => $script($this->connect(2), $this->key('async')));
        self::assertSame($sync, $async);
        self::assertSame(['a', ['1', '2'], ['a', 2], [1]], $sync);
    }

    public function testConnectionRefusedIsTheSocketLayersConnectException(): void
    {
        $port = self::closedPort();
        foreach ([false, true] as $inCoroutine) {
            $attempt = static fn () => Connection::connect(Config::defaults()->withPort($port)->withConnectTimeout(2.0));
            try {
                $inCoroutine ? run($attempt) : $attempt();
                self::fail('nothing listens there');
            } catch (ConnectException $e) {
                self::assertNotInstanceOf(\Weft\TimeoutException::class, $e);
                self::assertStringContainsString('Cannot connect to Redis at', $e->getMessage());
                self::assertStringContainsString("127.0.0.1:$port", $e->getMessage());
                self::assertStringContainsString('refused', $e->getMessage());
            }
        }
    }

    #[DataProvider('protocols')]
    public function testAConnectionKilledByTheServerIsConnectionLost(int $protocol): void
    {
        $victim = $this->connect($protocol);
        $admin = $this->connect(2);
        $victim->set($this->key('k'), 'v');
        $id = $victim->command('CLIENT', 'ID');
        self::assertSame(1, $admin->command('CLIENT', 'KILL', 'ID', $id));
        try {
            $victim->get($this->key('k'));
            self::fail('the connection is gone');
        } catch (ConnectionLost $e) {
            self::assertInstanceOf(BrokenConnection::class, $e);
            self::assertStringContainsString('closed by the server', $e->getMessage());
        }
        self::assertTrue($victim->isClosed());
        self::assertFalse($victim->isReusable());
        $this->expectException(ConnectionLost::class);
        $victim->ping();
    }

    public function testAConnectionKilledWhileWaitingForAReplyIsNotSafeToRetry(): void
    {
        run(function (): void {
            $victim = $this->connect(2);
            $admin = $this->connect(2);
            $id = $victim->command('CLIENT', 'ID');
            $waiting = \Weft\go(fn () => $victim->blpop($this->key('never'), 10.0));
            \Weft\sleep(0.05);
            $admin->command('CLIENT', 'KILL', 'ID', $id);
            try {
                $waiting->join();
                self::fail();
            } catch (ConnectionLost $e) {
                self::assertFalse($e->isSafeToRetry(), 'the command had been sent');
                self::assertStringContainsString('waiting for a reply', $e->getMessage());
            }
        });
    }

    public function testAReplyTimeoutClosesTheConnection(): void
    {
        $r = $this->connect(self::config()->withTimeout(0.2));
        $started = \hrtime(true);
        try {
            // A raw blocking command is not known to block: the reply timeout applies as it is.
            $r->command('BLPOP', $this->key('never'), 5);
            self::fail();
        } catch (\Weft\Coroutine\Timeout $e) {
            self::assertStringContainsString('timed out', $e->getMessage());
        }
        self::assertLessThan(3.0, (\hrtime(true) - $started) / 1e9);
        self::assertTrue($r->isClosed(), 'the late reply must never be read as the next command\'s');
    }

    public function testACancelledCommandClosesTheConnection(): void
    {
        run(function (): void {
            $r = $this->connect(2);
            try {
                \Weft\timeout(0.1, fn () => $r->blpop($this->key('never'), 5.0));
                self::fail();
            } catch (\Weft\Coroutine\Timeout) {
            }
            self::assertTrue($r->isClosed());
        });
    }

    public function testBlpopSuspendsOnlyItsCoroutine(): void
    {
        [$popped, $ticks, $elapsed] = run(function (): array {
            $consumer = $this->connect(2);
            $producer = $this->connect(2);
            $list = $this->key('queue');
            $started = \hrtime(true);
            $ticks = 0;
            $pop = \Weft\go(static fn () => $consumer->blpop($list, 10.0));
            $ticker = \Weft\go(static function () use (&$ticks, $pop): void {
                while (!$pop->isFinished()) {
                    $ticks++;
                    \Weft\sleep(0.01);
                }
            });
            \Weft\sleep(0.1);
            self::assertFalse($pop->isFinished(), 'still waiting for an element');
            $producer->rpush($list, 'job-1');
            $popped = $pop->join();
            $ticker->join();
            return [$popped, $ticks, (\hrtime(true) - $started) / 1e9];
        });
        self::assertSame([$this->key('queue'), 'job-1'], $popped);
        self::assertGreaterThanOrEqual(3, $ticks, 'other coroutines ran while BLPOP waited');
        self::assertLessThan(5.0, $elapsed, 'woken by the push, not by the timeout');
    }

    public function testASecondCoroutineMidCommandGetsAClearError(): void
    {
        run(function (): void {
            $r = $this->connect(2);
            $producer = $this->connect(2);
            $list = $this->key('busy');
            $first = \Weft\go(static fn () => $r->blpop($list, 10.0));
            $second = \Weft\go(static fn () => $r->get('x'));
            try {
                $second->join();
                self::fail('the second coroutine must be refused');
            } catch (\Weft\Coroutine\ConcurrentUse $e) {
                self::assertInstanceOf(\Error::class, $e);
                self::assertMatchesRegularExpression('/in use by coroutine #\d+; coroutine #\d+ cannot use it/', $e->getMessage());
                self::assertStringContainsString('Pool', $e->getMessage());
            }
            $producer->rpush($list, 'v');
            self::assertSame([$list, 'v'], $first->join(), 'the first command was not disturbed');
            self::assertSame('PONG', $r->ping());
        });
    }

    public function testADroppedConnectionLeavesNoWatchersBehind(): void
    {
        $before = \Weft\Loop\Loop::get()->watcherCount()['total'];
        run(static function (): void {
            $dropped = Connection::connect(self::config());
            self::assertSame('PONG', $dropped->ping());
            self::assertGreaterThan(0, \Weft\Loop\Loop::get()->watcherCount()['total']);
        });
        self::assertSame($before, \Weft\Loop\Loop::get()->watcherCount()['total']);
    }

    private function fillTypes(Connection $r): void
    {
        $r->hset($this->key('h'), ['f' => 'v', 'g' => 'w']);
        $r->sadd($this->key('s'), 'a', 'b');
        $r->zadd($this->key('z'), ['m' => 1.5]);
    }
}
