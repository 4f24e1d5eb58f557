<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Psr\Log\LoggerInterface;
use Weft\Client\Redis\Config;
use Weft\Client\Redis\Connection;
use Weft\Client\Redis\ConnectionLost;
use Weft\Client\Redis\Message as RedisMessage;
use Weft\Client\Redis\Pipeline;
use Weft\Client\Redis\Pool;
use Weft\Client\Redis\RedisError;
use Weft\Client\Redis\Subscriber;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\Timeout;
use Weft\Pool\PoolClosed;
use Weft\Pool\PoolExhausted;
use Weft\Pool\PoolOptions;
use Weft\Socket\ConnectException;

use function Weft\go;
use function Weft\sleep;

/**
 * A Hub backend over Redis pub/sub, through Weft's own Redis client, for rooms that span workers and
 * instances (the pattern of Socket.IO's Redis adapter).
 *
 * Messages: every worker subscribes to one channel, `{prefix}messages`, on a connection of its own; a
 * message carries its room, so each worker hands it to its own members of that room (every worker
 * receives every room's traffic: simple and robust across reconnects, at the price of traffic to workers
 * with no member of the room). A message carries the id of the worker that published it (its origin),
 * which ignores it: it delivered it itself, once. Publishes go through one connection, so that one
 * worker's messages reach the others in the order it published them.
 *
 * Losses are reported, never silent. Each origin numbers its publishes; a publish that cannot reach
 * Redis is returned as Published(sent: false), counted (stats(): unsent, uncertain) and logged, and
 * still takes its number, so the other workers see the gap. A subscription that breaks (Redis restarted,
 * CLIENT KILL, network) reconnects with a back-off of 0.1 s doubling to 5 s while local delivery goes on;
 * meanwhile the other workers' messages are missed, and once subscribed again each gap in an origin's
 * numbers is counted (stats(): missed) and logged. Every worker publishes a heartbeat carrying its last
 * number each $heartbeat seconds, so a gap shows even if that worker publishes nothing more, and a
 * subscription that hears not even its own heartbeat for $ttl seconds is taken for dead and reopened.
 *
 * Presence: a hash per room, `{prefix}room:{room}`, holds each worker's member count; a key per worker,
 * `{prefix}alive:{origin}`, expires $ttl seconds after its last heartbeat. presence() adds up the counts
 * of workers that are alive and removes the others. It is approximate: a worker that died without
 * closing its connections is counted until its key expires (up to $ttl seconds), and a count written
 * while Redis was unreachable is written at the next heartbeat after it is back.
 */
final class RedisBackend implements HubBackend
{
    public const DEFAULT_PREFIX = 'weft:hub:';
    public const DEFAULT_HEARTBEAT = 5.0;
    public const RECONNECT_MIN = 0.1;
    public const RECONNECT_MAX = 5.0;

    /** "W1", kind, origin (16 hex), number (16 hex), room length (2 hex), then room and data. */
    private const MAGIC = 'W1';
    private const HEADER = 37;
    private const TEXT = 't';
    private const BINARY = 'b';
    private const BEAT = 'h';

    public readonly Config $config;
    private readonly Pool $pool;
    private readonly float $ttl;
    private ?string $origin = null;
    private int $seq = 0;
    /** @var \Closure(string, string, bool): int */
    private \Closure $deliver;
    private ?Subscriber $subscriber = null;
    private ?string $beatTimer = null;
    private bool $beating = false;
    private bool $closed = false;
    private bool $subscribed = false;
    private ?float $downSince = null;
    /** @var array<string, int> this worker's member count per room */
    private array $local = [];
    /** @var array<string, true> rooms whose count Redis may not have yet */
    private array $dirty = [];
    /** @var array<string, array{int, float}> origin => [last number seen, when] */
    private array $seen = [];
    private int $published = 0;
    private int $received = 0;
    private int $unsent = 0;
    private int $uncertain = 0;
    private int $unsentInOutage = 0;
    private int $missed = 0;
    private int $malformed = 0;
    private int $reconnects = 0;

    public function __construct(
        Config|string $redis,
        public readonly string $prefix = self::DEFAULT_PREFIX,
        public readonly float $heartbeat = self::DEFAULT_HEARTBEAT,
        ?float $ttl = null,
        private ?LoggerInterface $logger = null,
    ) {
        $this->config = \is_string($redis) ? Config::fromUrl($redis) : $redis;
        if ($heartbeat <= 0) {
            throw new \InvalidArgumentException('The heartbeat interval must be above 0 seconds');
        }
        $this->ttl = $ttl ?? 3 * $heartbeat;
        if ($this->ttl <= $heartbeat) {
            throw new \InvalidArgumentException('The TTL must be longer than the heartbeat interval');
        }
        $this->pool = new Pool($this->config, PoolOptions::defaults()->withMax(1));
    }

    public function attach(\Closure $deliver): void
    {
        if ($this->origin !== null) {
            throw new \LogicException('A RedisBackend serves one Hub');
        }
        $this->deliver = $deliver;
        // Made here, in the worker, never in a process that forks afterwards.
        $this->origin = \bin2hex(\random_bytes(8));
        $driver = Scheduler::get()->driver;
        // From the loop, not from the caller's coroutine: these outlive the request that first used the
        // hub and must not inherit its context or its cancellation.
        $driver->defer(function (): void {
            go($this->listen(...));
            go($this->beat(...));
        });
        $this->beatTimer = $driver->repeat($this->heartbeat, function (): void {
            if (!$this->beating && !$this->closed) {
                go($this->beat(...));
            }
        });
        $driver->unreference($this->beatTimer);
    }

    public function publish(string $room, string $data, bool $binary, int $local): Published
    {
        $kind = $binary ? self::BINARY : self::TEXT;
        $seq = null;
        try {
            if ($this->downSince !== null) {
                // Known down: say so at once rather than hold the sender up to the connect timeout.
                throw HubUnavailable::down($this->downSince);
            }
            // Numbered while the one publishing connection is held, so numbers reach Redis in order.
            $receivers = (int) $this->pool->use(function (Connection $connection) use (&$seq, $kind, $room, $data): mixed {
                $seq ??= ++$this->seq;
                return $connection->publish($this->channel(), $this->encode($kind, $seq, $room, $data));
            });
        } catch (HubUnavailable|ConnectionLost|ConnectException|RedisError|PoolExhausted|PoolClosed|Timeout $e) {
            if ($e instanceof Timeout && $e->token !== null) {
                throw $e; // an enclosing Weft\timeout()'s
            }
            // Its number is taken all the same: the other workers see the gap and count it.
            $seq ??= ++$this->seq;
            $uncertain = ($e instanceof ConnectionLost && !$e->isSafeToRetry()) || $e instanceof Timeout;
            $uncertain ? $this->uncertain++ : $this->unsent++;
            if ($this->unsentInOutage++ === 0) {
                $this->logger()->warning('Hub: a message to room {room} did not reach Redis, so no other worker got it{maybe}: {error} (further failures are counted until Redis answers again)', [
                    'room' => $room, 'error' => $e->getMessage(), 'maybe' => $uncertain ? ' (or may not have)' : '',
                ]);
            }
            return new Published($local, false, null, $e, $uncertain);
        }
        $this->published++;
        if ($this->unsentInOutage > 0) {
            $this->logger()->warning('Hub: Redis takes publishes again; {n} message(s) published meanwhile did not reach the other workers', ['n' => $this->unsentInOutage]);
            $this->unsentInOutage = 0;
        }
        return new Published($local, true, $receivers);
    }

    public function membersChanged(string $room, int $local): void
    {
        if ($local > 0) {
            $this->local[$room] = $local;
        } else {
            unset($this->local[$room]);
        }
        $this->dirty[$room] = true;
        if ($this->downSince !== null) {
            return; // the first heartbeat that reaches Redis writes it
        }
        try {
            $this->writeCounts([$room]);
        } catch (ConnectionLost|ConnectException|RedisError|PoolExhausted|PoolClosed|Timeout $e) {
            if ($e instanceof Timeout && $e->token !== null) {
                throw $e; // an enclosing Weft\timeout()'s
            }
            // Stays dirty: the next heartbeat that reaches Redis writes it.
        }
    }

    public function presence(string $room, int $local): int
    {
        if ($this->downSince !== null) {
            throw HubUnavailable::presence($room, HubUnavailable::down($this->downSince));
        }
        $key = $this->roomKey($room);
        try {
            $counts = $this->pool->hgetall($key);
            $counts = \is_array($counts) ? self::pairs($counts) : [];
            unset($counts[(string) $this->origin]);
            if ($counts === []) {
                return $local;
            }
            $origins = \array_map('strval', \array_keys($counts));
            $alive = $this->pool->mget(...\array_map($this->aliveKey(...), $origins));
            $total = $local;
            $dead = [];
            foreach ($origins as $i => $origin) {
                if (\is_array($alive) && ($alive[$i] ?? null) !== null) {
                    $total += (int) $counts[$origin];
                } else {
                    $dead[] = $origin;
                }
            }
            if ($dead !== []) {
                $this->pool->hdel($key, ...$dead);
            }
            return $total;
        } catch (ConnectionLost|ConnectException|RedisError|PoolExhausted|PoolClosed|Timeout $e) {
            if ($e instanceof Timeout && $e->token !== null) {
                throw $e;
            }
            throw HubUnavailable::presence($room, $e);
        }
    }

    public function stats(): array
    {
        return [
            'backend' => 'redis',
            'origin' => $this->origin,
            'subscribed' => $this->subscribed,
            'published' => $this->published,
            'received' => $this->received,
            'unsent' => $this->unsent,
            'uncertain' => $this->uncertain,
            'missed' => $this->missed,
            'malformed' => $this->malformed,
            'reconnects' => $this->reconnects,
        ];
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        if ($this->beatTimer !== null) {
            Scheduler::get()->driver->cancel($this->beatTimer);
        }
        $this->subscriber?->close();
        if ($this->origin !== null) {
            $rooms = \array_keys($this->local);
            $this->local = [];
            try {
                $this->writeCounts(\array_map('strval', $rooms), true);
            } catch (ConnectionLost|ConnectException|RedisError|PoolExhausted|PoolClosed|Timeout $e) {
                // The counts expire with this worker's alive key.
            }
        }
        $this->pool->close();
    }

    /** The subscription, for the worker's life: reconnects with a back-off whenever it breaks. */
    private function listen(): void
    {
        $delay = self::RECONNECT_MIN;
        while (!$this->closed) {
            try {
                $this->subscriber = Subscriber::connect($this->config);
                if ($this->closed) {
                    $this->subscriber->close();
                    return;
                }
                $this->subscriber->subscribe($this->channel());
                $this->subscribed = true;
                $delay = self::RECONNECT_MIN;
                if ($this->downSince !== null) {
                    $this->reconnects++;
                    $this->logger()->warning('Hub: subscribed to Redis again after {s} s; local delivery went on meanwhile, and messages of other workers missed meanwhile are counted as their heartbeats arrive', [
                        's' => \round(\microtime(true) - $this->downSince, 3),
                    ]);
                    $this->downSince = null;
                }
                while (!$this->closed) {
                    $message = $this->subscriber->receive($this->ttl);
                    if ($message === null) {
                        // Not even our own heartbeat came: a connection that died without a word.
                        throw ConnectionLost::whileReading($this->config->socketPath ?? "{$this->config->host}:{$this->config->port}", new \RuntimeException("nothing received for {$this->ttl} s, not even this worker's heartbeat"));
                    }
                    $this->handle($message);
                }
            } catch (\Exception $e) {
                // Whatever broke the subscription, it is reopened: a worker that stopped listening
                // would miss every message from now on without a word.
                $this->subscribed = false;
                $this->subscriber?->close();
                if ($this->closed) {
                    return;
                }
                if ($this->downSince === null) {
                    $this->downSince = \microtime(true);
                    $this->logger()->warning('Hub: the Redis subscription is lost ({error}); reconnecting, local delivery goes on', ['error' => $e->getMessage()]);
                }
                sleep($delay);
                $delay = \min(self::RECONNECT_MAX, $delay * 2);
            }
        }
    }

    private function handle(RedisMessage $message): void
    {
        $payload = $message->payload;
        $roomLength = \strlen($payload) >= self::HEADER && \str_starts_with($payload, self::MAGIC) ? \hexdec(\substr($payload, 35, 2)) : -1;
        $kind = $payload[2] ?? '';
        if ($roomLength < 0 || \strlen($payload) < self::HEADER + $roomLength
            || ($kind !== self::TEXT && $kind !== self::BINARY && $kind !== self::BEAT)
            || !\ctype_xdigit(\substr($payload, 3, 34))) {
            if ($this->malformed++ === 0) {
                $this->logger()->warning('Hub: ignored a message on {channel} that no hub published (another application using the same prefix?)', ['channel' => $message->channel]);
            }
            return;
        }
        $origin = \substr($payload, 3, 16);
        if ($origin === $this->origin) {
            return; // delivered by the publishing call itself
        }
        $seq = (int) \hexdec(\substr($payload, 19, 16));
        $last = $this->seen[$origin][0] ?? null;
        $this->seen[$origin] = [\max($seq, $last ?? 0), \microtime(true)];
        // A message takes the next number; a heartbeat repeats the last one taken.
        $expected = $kind === self::BEAT ? $seq : $seq - 1;
        if ($last !== null && $expected > $last) {
            $gap = $expected - $last;
            $this->missed += $gap;
            $this->logger()->warning('Hub: {n} message(s) of worker {origin} never reached this worker (published while Redis or this subscription was unreachable)', ['n' => $gap, 'origin' => $origin]);
        }
        if ($kind === self::BEAT) {
            return;
        }
        $this->received++;
        ($this->deliver)(\substr($payload, self::HEADER, $roomLength), \substr($payload, self::HEADER + $roomLength), $kind === self::BINARY);
    }

    /** Refreshes this worker's alive key and room counts and tells the others its last number. */
    private function beat(): void
    {
        if ($this->beating || $this->closed) {
            return;
        }
        $this->beating = true;
        try {
            $rooms = \array_map('strval', \array_keys($this->local + $this->dirty));
            $this->writeCounts($rooms, false, true);
        } catch (ConnectionLost|ConnectException|RedisError|PoolExhausted|PoolClosed|Timeout) {
            // Retried at the next beat; the subscription's own loop reports the outage.
        } finally {
            $this->beating = false;
        }
        $forget = \microtime(true) - 2 * $this->ttl;
        foreach ($this->seen as $origin => [, $when]) {
            if ($when < $forget) {
                unset($this->seen[$origin]);
            }
        }
    }

    /** @param list<string> $rooms */
    private function writeCounts(array $rooms, bool $dying = false, bool $beat = false): void
    {
        $origin = (string) $this->origin;
        $written = $rooms;
        $this->pool->pipeline(function (Pipeline $p) use ($rooms, $origin, $dying, $beat): void {
            if ($dying) {
                $p->del($this->aliveKey($origin));
            } else {
                $p->set($this->aliveKey($origin), '1', ex: (int) \ceil($this->ttl));
            }
            foreach ($rooms as $room) {
                $count = $this->local[$room] ?? 0;
                if ($count > 0) {
                    $p->hset($this->roomKey($room), $origin, $count);
                    $p->expire($this->roomKey($room), (int) \ceil($this->ttl));
                } else {
                    $p->hdel($this->roomKey($room), $origin);
                }
            }
            if ($beat) {
                $p->publish($this->channel(), $this->encode(self::BEAT, $this->seq, '', ''));
            }
        });
        foreach ($written as $room) {
            unset($this->dirty[$room]);
        }
    }

    private function encode(string $kind, int $seq, string $room, string $data): string
    {
        return self::MAGIC . $kind . $this->origin . \sprintf('%016x%02x', $seq, \strlen($room)) . $room . $data;
    }

    private function channel(): string
    {
        return $this->prefix . 'messages';
    }

    private function roomKey(string $room): string
    {
        return $this->prefix . 'room:' . $room;
    }

    private function aliveKey(string $origin): string
    {
        return $this->prefix . 'alive:' . $origin;
    }

    /**
     * HGETALL's reply as field => value, whether RESP2 gave a flat list or RESP3 a map.
     *
     * @param array<array-key, mixed> $reply
     * @return array<string, string>
     */
    private static function pairs(array $reply): array
    {
        if (\array_is_list($reply)) {
            $pairs = [];
            for ($i = 0; $i + 1 < \count($reply); $i += 2) {
                $pairs[(string) $reply[$i]] = (string) $reply[$i + 1];
            }
            return $pairs;
        }
        return \array_map('strval', $reply);
    }

    private function logger(): LoggerInterface
    {
        return $this->logger ??= \Weft\logger();
    }
}
