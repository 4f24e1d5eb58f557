<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

use Closure;
use Weft\Client\Redis\Internal\Decode;
use Weft\Client\Redis\Internal\Link;
use Weft\Client\Redis\Internal\ScanAll;
use Weft\Client\Redis\Protocol\Push;
use Weft\Client\Redis\Protocol\RespWriter;
use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Coroutine;

/**
 * One connection to Redis. In a coroutine every wait suspends only that coroutine; outside of any, the
 * same calls block (sync mode).
 *
 * A connection serves one coroutine at a time: a second coroutine calling it while a command is in
 * flight gets Weft\Coroutine\ConcurrentUse (an \Error) instead of a corrupted stream. Share
 * connections through Pool.
 *
 * Failures: error replies throw RedisError (the connection stays usable); a dead connection throws
 * ConnectionLost (closed for good); a reply timeout (Config::$timeout) or a cancel while waiting throws
 * that exception and closes the connection, since the reply would otherwise arrive for the next command.
 */
final class Connection
{
    use Commands;
    use ScanAll;

    /** Commands whose replies are pushes or streams of replies: they need a Subscriber. */
    private const SUBSCRIBER_COMMANDS = [
        'SUBSCRIBE' => true, 'PSUBSCRIBE' => true, 'SSUBSCRIBE' => true, 'UNSUBSCRIBE' => true,
        'PUNSUBSCRIBE' => true, 'SUNSUBSCRIBE' => true, 'MONITOR' => true,
    ];

    private bool $busy = false;
    /** Who is mid-command (for the ConcurrentUse message): a coroutine, or null for the main program. */
    private ?Coroutine $owner = null;
    private bool $watching = false;
    private int $protocol;
    /** @var null|Closure(Push): void */
    private ?Closure $pushHandler = null;
    /** @var array<array-key, mixed> */
    private array $attributes = [];

    private function __construct(private readonly Link $link)
    {
        $this->protocol = $link->config->protocol;
    }

    /**
     * @throws \Weft\Socket\ConnectException when the server cannot be reached (ConnectTimeout: not in time)
     * @throws RedisError when it refuses the handshake (e.g. "WRONGPASS", "NOPROTO")
     */
    public static function connect(Config|string $config): self
    {
        return new self(Link::open(\is_string($config) ? Config::fromUrl($config) : $config));
    }

    /**
     * Runs any command: `command('SET', 'k', 'v', 'EX', 10)`. Ints and floats are sent as their decimal
     * text. Returns the decoded reply (see Protocol\RespReader); an error reply throws RedisError.
     */
    public function command(string|int|float ...$args): mixed
    {
        if ($args === []) {
            throw new \ArgumentCountError('command() needs at least the command name');
        }
        $name = \strtoupper((string) $args[0]);
        if (isset(self::SUBSCRIBER_COMMANDS[$name])) {
            throw new \Error("$name turns the connection into a stream of pushes: use Weft\\Client\\Redis\\Subscriber");
        }
        return $this->call(\array_values($args));
    }

    /** @internal see Commands::call() */
    public function call(array $args, ?string $decode = null, ?float $block = null): mixed
    {
        $this->enter();
        $pushes = [];
        try {
            $this->link->send(RespWriter::command($args), !$this->watching);
            $reply = $this->link->receive($this->replyTimeout($block), false, false, $pushes);
        } finally {
            $this->busy = false;
            $this->owner = null;
        }
        $this->afterReply($pushes);
        if ($reply instanceof RedisError) {
            throw $reply;
        }
        return $decode === null ? $reply : Decode::apply($decode, $reply, $this->protocol);
    }

    /**
     * Queues the commands $fn issues on the Pipeline it is given, sends them all in one write and reads
     * all replies: one round trip. Returns the replies in order, decoded like the helpers' return values;
     * an error reply is a RedisError object in its place (not thrown, so one failing command does not
     * hide the others' results).
     *
     * @param Closure(Pipeline): mixed $fn
     * @return list<mixed>
     */
    public function pipeline(Closure $fn): array
    {
        $pipeline = new Pipeline();
        $fn($pipeline);
        $queued = $pipeline->takeQueued();
        if ($queued === []) {
            return [];
        }
        $payload = '';
        foreach ($queued as [$args]) {
            $payload .= RespWriter::command($args);
        }
        $this->enter();
        $replies = [];
        $pushes = [];
        try {
            $this->link->send($payload, \count($queued) === 1 && !$this->watching);
            foreach ($queued as [, , $block]) {
                $replies[] = $this->link->receive($this->replyTimeout($block), false, false, $pushes);
            }
        } finally {
            $this->busy = false;
            $this->owner = null;
        }
        $this->afterReply($pushes);
        foreach ($queued as $i => [, $decode]) {
            if ($decode !== null && !$replies[$i] instanceof RedisError) {
                $replies[$i] = Decode::apply($decode, $replies[$i], $this->protocol);
            }
        }
        return $replies;
    }

    /**
     * MULTI, the commands $fn queues on the Transaction it is given, EXEC: sent in one write. Returns the
     * decoded results in order (a command that failed at run time is a RedisError object in its place).
     *
     * If $fn throws, nothing has been sent (MULTI included), so there is nothing to DISCARD; WATCHed keys
     * are released with UNWATCH and the exception propagates.
     *
     * @param Closure(Transaction): mixed $fn
     * @return list<mixed>
     * @throws WatchConflict when a key passed to watch() changed meanwhile (nothing was executed)
     * @throws RedisError "EXECABORT" when a command was rejected while queueing (its error is the previous)
     */
    public function transaction(Closure $fn): array
    {
        $transaction = new Transaction();
        try {
            $fn($transaction);
        } catch (\Throwable $e) {
            if ($this->watching) {
                try {
                    $this->unwatch();
                } catch (\Throwable) {
                    // The transaction's own failure is the one worth reporting.
                }
            }
            throw $e;
        }
        $queued = $transaction->takeQueued();
        $payload = RespWriter::command(['MULTI']);
        foreach ($queued as [$args]) {
            $payload .= RespWriter::command($args);
        }
        $payload .= RespWriter::command(['EXEC']);

        $this->enter();
        $queueErrors = [];
        $pushes = [];
        try {
            // A partial MULTI..EXEC is never executed, so a failed write is safe to retry (unless WATCH
            // state is lost with the connection).
            $this->link->send($payload, !$this->watching);
            $timeout = $this->replyTimeout(null);
            $multi = $this->link->receive($timeout, false, false, $pushes);
            foreach ($queued as $i => $_) {
                $queuedReply = $this->link->receive($timeout, false, false, $pushes);
                if ($queuedReply instanceof RedisError) {
                    $queueErrors[$i] = $queuedReply;
                }
            }
            $exec = $this->link->receive($timeout, false, false, $pushes);
        } finally {
            $this->watching = false;
            $this->busy = false;
            $this->owner = null;
        }
        $this->afterReply($pushes);
        if ($multi instanceof RedisError) {
            throw $multi;
        }
        if ($exec instanceof RedisError) {
            throw RedisError::fromReply($exec->getMessage(), $queueErrors === [] ? null : \reset($queueErrors));
        }
        if ($exec === null) {
            throw WatchConflict::aborted();
        }
        foreach ($queued as $i => [, $decode]) {
            if ($decode !== null && !$exec[$i] instanceof RedisError) {
                $exec[$i] = Decode::apply($decode, $exec[$i], $this->protocol);
            }
        }
        return $exec;
    }

    /** WATCH: the next transaction() fails with WatchConflict if any of these keys changes before it. */
    public function watch(string $key, string ...$keys): void
    {
        $this->call(['WATCH', $key, ...$keys]);
        $this->watching = true;
    }

    public function unwatch(): void
    {
        $this->call(['UNWATCH']);
        $this->watching = false;
    }

    public function isWatching(): bool
    {
        return $this->watching;
    }

    /** Switches this connection to database $database. (A pool's connections all use the Config's.) */
    public function select(int $database): void
    {
        $this->call(['SELECT', $database]);
    }

    /** 2 or 3: the RESP version this connection speaks. */
    public function protocol(): int
    {
        return $this->protocol;
    }

    /** @return array<array-key, mixed> the server's HELLO reply (RESP3; empty for RESP2) */
    public function serverInfo(): array
    {
        return $this->link->hello();
    }

    /**
     * RESP3 attributes that came with the last reply (auxiliary data the server may attach), merged.
     *
     * @return array<array-key, mixed>
     */
    public function lastAttributes(): array
    {
        return $this->attributes;
    }

    /**
     * RESP3 pushes that arrive on this connection between replies (e.g. CLIENT TRACKING invalidations)
     * go to $handler once the reply they came with has been read. Without a handler they are dropped.
     *
     * @param null|Closure(Push): void $handler
     */
    public function onPush(?Closure $handler): void
    {
        $this->pushHandler = $handler;
    }

    public function config(): Config
    {
        return $this->link->config;
    }

    public function isClosed(): bool
    {
        return $this->link->isClosed();
    }

    /** Whether a pool may hand this connection to someone else: open, idle, and not holding WATCHes. */
    public function isReusable(): bool
    {
        return !$this->busy && !$this->watching && !$this->link->isClosed();
    }

    public function close(): void
    {
        $this->link->close();
    }

    private function enter(): void
    {
        $current = \Weft\current();
        if ($this->busy) {
            throw ConcurrentUse::of('The Redis connection', $this->owner, $current, 'use Weft\\Client\\Redis\\Pool');
        }
        $this->busy = true;
        $this->owner = $current;
    }

    /** @param list<Push> $pushes */
    private function afterReply(array $pushes): void
    {
        if ($this->protocol === 3) {
            $this->attributes = $this->link->takeAttributes();
            if ($pushes !== [] && $this->pushHandler !== null) {
                foreach ($pushes as $push) {
                    ($this->pushHandler)($push);
                }
            }
        }
    }

    private function replyTimeout(?float $block): ?float
    {
        $timeout = $this->link->config->timeout;
        if ($block === null || $timeout === null) {
            return $timeout;
        }
        return $block <= 0 ? null : $timeout + $block;
    }
}
