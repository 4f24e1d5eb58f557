<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

use Weft\Client\Redis\Internal\Link;
use Weft\Client\Redis\Protocol\Push;
use Weft\Client\Redis\Protocol\RespWriter;
use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Timeout;

/**
 * Pub/sub on a connection of its own (a subscribed RESP2 connection can run nothing else). Works with
 * RESP2 (messages are arrays) and RESP3 (messages are pushes) alike.
 *
 * One coroutine receives at a time; another may subscribe() or unsubscribe() meanwhile, and the
 * receiving coroutine then consumes the confirmations. A receive() that times out or is cancelled loses
 * nothing: a message half-read stays buffered for the next call.
 *
 * @implements \IteratorAggregate<int, Message>
 */
final class Subscriber implements \IteratorAggregate
{
    /** @var \SplQueue<Message> */
    private readonly \SplQueue $messages;
    /** @var array<string, true> */
    private array $channels = [];
    /** @var array<string, true> */
    private array $patterns = [];
    /** Confirmations (subscribe/unsubscribe replies) not received yet. */
    private int $awaiting = 0;
    private bool $reading = false;
    private bool $writing = false;
    private ?Coroutine $reader = null;

    private function __construct(private readonly Link $link)
    {
        $this->messages = new \SplQueue();
    }

    /** @throws \Weft\Socket\ConnectException|RedisError */
    public static function connect(Config|string $config): self
    {
        return new self(Link::open(\is_string($config) ? Config::fromUrl($config) : $config));
    }

    public function subscribe(string $channel, string ...$channels): void
    {
        $this->request(['SUBSCRIBE', $channel, ...$channels], 1 + \count($channels));
    }

    public function psubscribe(string $pattern, string ...$patterns): void
    {
        $this->request(['PSUBSCRIBE', $pattern, ...$patterns], 1 + \count($patterns));
    }

    /** Without arguments: from every channel. */
    public function unsubscribe(string ...$channels): void
    {
        $this->request(['UNSUBSCRIBE', ...$channels], $channels === [] ? \max(1, \count($this->channels)) : \count($channels));
    }

    /** Without arguments: from every pattern. */
    public function punsubscribe(string ...$patterns): void
    {
        $this->request(['PUNSUBSCRIBE', ...$patterns], $patterns === [] ? \max(1, \count($this->patterns)) : \count($patterns));
    }

    /**
     * The next message, waiting up to $timeout seconds (null: as long as it takes). Null when the time
     * ran out.
     *
     * @throws ConnectionLost
     * @throws \LogicException when nothing is subscribed, so no message could ever arrive
     */
    public function receive(?float $timeout = null): ?Message
    {
        if (!$this->messages->isEmpty()) {
            return $this->messages->dequeue();
        }
        if (!$this->isSubscribed()) {
            throw new \LogicException('Not subscribed to any channel or pattern: no message can arrive');
        }
        $this->enterReading();
        try {
            $deadline = $timeout === null ? null : \hrtime(true) / 1e9 + $timeout;
            while ($this->messages->isEmpty()) {
                $left = $deadline === null ? null : $deadline - \hrtime(true) / 1e9;
                if ($left !== null && $left <= 0) {
                    return null;
                }
                try {
                    $frame = $this->link->receive($left, true, true);
                } catch (Timeout $e) {
                    // Ours (the read's own limit) carries no token; an enclosing Weft\timeout()'s does
                    // until that call has caught it, and must go on up.
                    if ($e->token !== null) {
                        throw $e;
                    }
                    return null;
                }
                $this->handle($frame);
            }
            return $this->messages->dequeue();
        } finally {
            $this->reading = false;
            $this->reader = null;
        }
    }

    /**
     * Yields messages as they arrive, until nothing is subscribed any more (e.g. the loop's body called
     * unsubscribe()).
     *
     * @return \Generator<int, Message>
     */
    public function getIterator(): \Generator
    {
        while (!$this->messages->isEmpty() || $this->isSubscribed()) {
            $message = $this->receive();
            if ($message !== null) {
                yield $message;
            }
        }
    }

    /** @return list<string> */
    public function channels(): array
    {
        return \array_map('strval', \array_keys($this->channels));
    }

    /** @return list<string> */
    public function patterns(): array
    {
        return \array_map('strval', \array_keys($this->patterns));
    }

    public function isSubscribed(): bool
    {
        return $this->channels !== [] || $this->patterns !== [] || $this->awaiting > 0;
    }

    public function isClosed(): bool
    {
        return $this->link->isClosed();
    }

    public function close(): void
    {
        $this->link->close();
    }

    /** @param list<string> $args */
    private function request(array $args, int $confirmations): void
    {
        if ($this->writing) {
            throw ConcurrentUse::of('The Redis subscriber', 'another coroutine (sending)', \Weft\current(), 'use Weft\\Client\\Redis\\Pool');
        }
        $this->writing = true;
        try {
            $this->link->send(RespWriter::command($args), true);
        } finally {
            $this->writing = false;
        }
        $this->awaiting += $confirmations;
        if ($this->reading) {
            return; // the coroutine in receive() consumes the confirmations
        }
        $this->enterReading();
        try {
            $timeout = $this->link->config->timeout;
            while ($this->awaiting > 0) {
                $this->handle($this->link->receive($timeout, true, true));
            }
        } finally {
            $this->reading = false;
            $this->reader = null;
        }
    }

    private function handle(mixed $frame): void
    {
        if ($frame instanceof Push) {
            $kind = $frame->kind;
            $data = $frame->data;
        } elseif (\is_array($frame) && $frame !== [] && \is_string($frame[0])) {
            $kind = $frame[0];
            $data = \array_slice($frame, 1);
        } elseif ($frame instanceof RedisError) {
            throw $frame;
        } else {
            return;
        }
        switch (\strtolower($kind)) {
            case 'message':
                $this->messages->enqueue(new Message((string) $data[0], (string) $data[1]));
                break;
            case 'pmessage':
                $this->messages->enqueue(new Message((string) $data[1], (string) $data[2], (string) $data[0]));
                break;
            case 'subscribe':
                $this->channels[(string) $data[0]] = true;
                $this->awaiting--;
                break;
            case 'psubscribe':
                $this->patterns[(string) $data[0]] = true;
                $this->awaiting--;
                break;
            case 'unsubscribe':
                if ($data[0] !== null) {
                    unset($this->channels[(string) $data[0]]);
                }
                $this->awaiting--;
                break;
            case 'punsubscribe':
                if ($data[0] !== null) {
                    unset($this->patterns[(string) $data[0]]);
                }
                $this->awaiting--;
                break;
            default:
                // "pong" and pushes of other kinds are not messages.
        }
        if ($this->awaiting < 0) {
            $this->awaiting = 0;
        }
    }

    private function enterReading(): void
    {
        $current = \Weft\current();
        if ($this->reading) {
            throw ConcurrentUse::of('The Redis subscriber', $this->reader, $current, 'use Weft\\Client\\Redis\\Pool');
        }
        $this->reading = true;
        $this->reader = $current;
    }
}
