<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

use Weft\Client\Redis\Internal\Decode;
use Weft\Client\Redis\Protocol\RespWriter;

/**
 * Typed helpers for the common commands, shared by Connection, Pool, Pipeline and Transaction. On a
 * Connection or Pool each runs at once and returns the documented value; on a Pipeline or Transaction
 * it queues the command, returns null, and the decoded value appears in the array that pipeline() or
 * transaction() returns. Anything not covered here goes through command().
 */
trait Commands
{
    /**
     * @internal runs (or queues) $args; $decode names an Internal\Decode conversion; $block is how long
     *           a blocking command may hold the reply (0: indefinitely), added to the reply timeout
     * @param array<int, string|int|float> $args
     */
    abstract public function call(array $args, ?string $decode = null, ?float $block = null): mixed;

    // --- strings and keys -----------------------------------------------------------------------

    /** @return ?string null when the key does not exist */
    public function get(string $key): mixed
    {
        return $this->call(['GET', $key]);
    }

    /**
     * SET with its options. Without $get: true when set, false when NX/XX prevented it. With $get: the
     * old value (or null).
     *
     * @return bool|string|null
     */
    public function set(
        string $key,
        string|int|float $value,
        ?int $ex = null,
        ?int $px = null,
        bool $nx = false,
        bool $xx = false,
        bool $keepTtl = false,
        bool $get = false,
    ): mixed {
        $args = ['SET', $key, $value];
        if ($ex !== null) {
            $args[] = 'EX';
            $args[] = $ex;
        }
        if ($px !== null) {
            $args[] = 'PX';
            $args[] = $px;
        }
        if ($nx) {
            $args[] = 'NX';
        }
        if ($xx) {
            $args[] = 'XX';
        }
        if ($keepTtl) {
            $args[] = 'KEEPTTL';
        }
        if ($get) {
            $args[] = 'GET';
        }
        return $this->call($args, $get ? null : Decode::OK);
    }

    /** @return int the number of keys removed */
    public function del(string $key, string ...$keys): mixed
    {
        return $this->call(['DEL', $key, ...$keys]);
    }

    /** @return int how many of the keys exist (a key named twice counts twice) */
    public function exists(string $key, string ...$keys): mixed
    {
        return $this->call(['EXISTS', $key, ...$keys]);
    }

    /** @return int the new value */
    public function incr(string $key): mixed
    {
        return $this->call(['INCR', $key]);
    }

    /** @return int the new value */
    public function incrBy(string $key, int $by): mixed
    {
        return $this->call(['INCRBY', $key, $by]);
    }

    /** @return int the new value */
    public function decr(string $key): mixed
    {
        return $this->call(['DECR', $key]);
    }

    /** @return int the new value */
    public function decrBy(string $key, int $by): mixed
    {
        return $this->call(['DECRBY', $key, $by]);
    }

    /** @return bool false when the key does not exist */
    public function expire(string $key, int $seconds): mixed
    {
        return $this->call(['EXPIRE', $key, $seconds], Decode::BOOL);
    }

    /** @return int seconds to live; -1 without expiry, -2 when the key does not exist */
    public function ttl(string $key): mixed
    {
        return $this->call(['TTL', $key]);
    }

    /** @return list<?string> in the order of the keys, null for missing ones */
    public function mget(string $key, string ...$keys): mixed
    {
        return $this->call(['MGET', $key, ...$keys]);
    }

    /**
     * @param array<array-key, string|int|float> $values key => value
     * @return bool true
     */
    public function mset(array $values): mixed
    {
        if ($values === []) {
            throw new \InvalidArgumentException('MSET needs at least one key');
        }
        $args = ['MSET'];
        foreach ($values as $key => $value) {
            $args[] = (string) $key;
            $args[] = $value;
        }
        return $this->call($args, Decode::OK);
    }

    /** @return list<string> the keys matching $pattern (O(n): prefer scan() on big databases) */
    public function keys(string $pattern = '*'): mixed
    {
        return $this->call(['KEYS', $pattern]);
    }

    /**
     * One SCAN step. Start with cursor "0"; the scan is complete when the returned cursor is "0".
     *
     * @return array{0: string, 1: list<string>} [next cursor, keys]
     */
    public function scan(string $cursor = '0', ?string $match = null, ?int $count = null, ?string $type = null): mixed
    {
        $args = ['SCAN', $cursor];
        if ($match !== null) {
            $args[] = 'MATCH';
            $args[] = $match;
        }
        if ($count !== null) {
            $args[] = 'COUNT';
            $args[] = $count;
        }
        if ($type !== null) {
            $args[] = 'TYPE';
            $args[] = $type;
        }
        return $this->call($args);
    }

    // --- hashes -----------------------------------------------------------------------------------

    /** @return ?string */
    public function hget(string $key, string $field): mixed
    {
        return $this->call(['HGET', $key, $field]);
    }

    /**
     * hset($key, 'field', 'value') or hset($key, ['field' => 'value', ...]).
     *
     * @param string|array<array-key, string|int|float> $field
     * @return int the number of fields that were added (not updated)
     */
    public function hset(string $key, string|array $field, string|int|float|null $value = null): mixed
    {
        if (\is_string($field)) {
            if ($value === null) {
                throw new \InvalidArgumentException('hset() with a field name needs a value');
            }
            return $this->call(['HSET', $key, $field, $value]);
        }
        if ($field === []) {
            throw new \InvalidArgumentException('HSET needs at least one field');
        }
        $args = ['HSET', $key];
        foreach ($field as $name => $fieldValue) {
            $args[] = (string) $name;
            $args[] = $fieldValue;
        }
        return $this->call($args);
    }

    /** @return array<array-key, string> field => value (empty for a missing key) */
    public function hgetall(string $key): mixed
    {
        return $this->call(['HGETALL', $key], Decode::HASH);
    }

    /** @return int the number of fields removed */
    public function hdel(string $key, string $field, string ...$fields): mixed
    {
        return $this->call(['HDEL', $key, $field, ...$fields]);
    }

    /** @return int the new value */
    public function hincrBy(string $key, string $field, int $by): mixed
    {
        return $this->call(['HINCRBY', $key, $field, $by]);
    }

    /** @return bool */
    public function hexists(string $key, string $field): mixed
    {
        return $this->call(['HEXISTS', $key, $field], Decode::BOOL);
    }

    /** @return int */
    public function hlen(string $key): mixed
    {
        return $this->call(['HLEN', $key]);
    }

    // --- lists ------------------------------------------------------------------------------------

    /** @return int the length after the push */
    public function lpush(string $key, string|int|float $value, string|int|float ...$values): mixed
    {
        return $this->call(['LPUSH', $key, $value, ...$values]);
    }

    /** @return int the length after the push */
    public function rpush(string $key, string|int|float $value, string|int|float ...$values): mixed
    {
        return $this->call(['RPUSH', $key, $value, ...$values]);
    }

    /** @return ?string */
    public function lpop(string $key): mixed
    {
        return $this->call(['LPOP', $key]);
    }

    /** @return ?string */
    public function rpop(string $key): mixed
    {
        return $this->call(['RPOP', $key]);
    }

    /** @return list<string> */
    public function lrange(string $key, int $start, int $stop): mixed
    {
        return $this->call(['LRANGE', $key, $start, $stop]);
    }

    /** @return int */
    public function llen(string $key): mixed
    {
        return $this->call(['LLEN', $key]);
    }

    /**
     * Pops from the first non-empty list, waiting up to $timeout seconds (0: indefinitely). In a
     * coroutine the wait suspends only this coroutine.
     *
     * @param string|list<string> $keys
     * @return ?array{0: string, 1: string} [key, value], or null when the time ran out
     */
    public function blpop(string|array $keys, float $timeout): mixed
    {
        return $this->call(['BLPOP', ...(array) $keys, RespWriter::float($timeout)], null, $timeout);
    }

    /**
     * @param string|list<string> $keys
     * @return ?array{0: string, 1: string}
     */
    public function brpop(string|array $keys, float $timeout): mixed
    {
        return $this->call(['BRPOP', ...(array) $keys, RespWriter::float($timeout)], null, $timeout);
    }

    // --- sets -------------------------------------------------------------------------------------

    /** @return int the number of members added */
    public function sadd(string $key, string|int|float $member, string|int|float ...$members): mixed
    {
        return $this->call(['SADD', $key, $member, ...$members]);
    }

    /** @return int the number of members removed */
    public function srem(string $key, string|int|float $member, string|int|float ...$members): mixed
    {
        return $this->call(['SREM', $key, $member, ...$members]);
    }

    /** @return list<string> in no particular order */
    public function smembers(string $key): mixed
    {
        return $this->call(['SMEMBERS', $key]);
    }

    /** @return bool */
    public function sismember(string $key, string|int|float $member): mixed
    {
        return $this->call(['SISMEMBER', $key, $member], Decode::BOOL);
    }

    /** @return int */
    public function scard(string $key): mixed
    {
        return $this->call(['SCARD', $key]);
    }

    // --- sorted sets ------------------------------------------------------------------------------

    /**
     * @param array<array-key, float|int> $scores member => score
     * @return int the number of members added (not updated)
     */
    public function zadd(string $key, array $scores): mixed
    {
        if ($scores === []) {
            throw new \InvalidArgumentException('ZADD needs at least one member');
        }
        $args = ['ZADD', $key];
        foreach ($scores as $member => $score) {
            $args[] = \is_int($score) ? $score : RespWriter::float($score);
            $args[] = (string) $member;
        }
        return $this->call($args);
    }

    /**
     * Members by rank. With $withScores: member => score (float), in rank order.
     *
     * @return list<string>|array<array-key, float>
     */
    public function zrange(string $key, int $start, int $stop, bool $withScores = false): mixed
    {
        return $withScores
            ? $this->call(['ZRANGE', $key, $start, $stop, 'WITHSCORES'], Decode::SCORES)
            : $this->call(['ZRANGE', $key, $start, $stop]);
    }

    /** @return ?float */
    public function zscore(string $key, string|int|float $member): mixed
    {
        return $this->call(['ZSCORE', $key, $member], Decode::FLOAT);
    }

    /** @return float the new score */
    public function zincrBy(string $key, float|int $by, string|int|float $member): mixed
    {
        return $this->call(['ZINCRBY', $key, \is_int($by) ? $by : RespWriter::float($by), $member], Decode::FLOAT);
    }

    /** @return int the number of members removed */
    public function zrem(string $key, string|int|float $member, string|int|float ...$members): mixed
    {
        return $this->call(['ZREM', $key, $member, ...$members]);
    }

    /** @return int */
    public function zcard(string $key): mixed
    {
        return $this->call(['ZCARD', $key]);
    }

    // --- server and pub/sub -----------------------------------------------------------------------

    /** @return string "PONG", or $message echoed */
    public function ping(?string $message = null): mixed
    {
        return $this->call($message === null ? ['PING'] : ['PING', $message]);
    }

    /** @return bool true */
    public function flushdb(bool $async = false): mixed
    {
        return $this->call($async ? ['FLUSHDB', 'ASYNC'] : ['FLUSHDB'], Decode::OK);
    }

    /** @return int the number of subscribers that received the message */
    public function publish(string $channel, string|int|float $message): mixed
    {
        return $this->call(['PUBLISH', $channel, $message]);
    }
}
