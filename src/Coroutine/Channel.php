<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * A channel between coroutines. Capacity 0 is unbuffered: send() waits until a receiver takes the value.
 * With capacity N, send() waits only while N values are buffered. close() wakes every waiter: senders get
 * ChannelClosed at once; receivers first drain what is buffered, then get ChannelClosed.
 * Called outside of any coroutine, a wait drives the loop until it is done.
 */
final class Channel implements \Countable
{
    /** @var \SplQueue<mixed> */
    private \SplQueue $buffer;
    /** @var array<int, Coroutine> */
    private array $receivers = [];
    /** @var array<int, array{Coroutine, mixed}> */
    private array $senders = [];
    private int $nextKey = 0;
    private bool $closed = false;

    public function __construct(private readonly int $capacity = 0)
    {
        if ($capacity < 0) {
            throw new \InvalidArgumentException('A channel capacity cannot be negative');
        }
        $this->buffer = new \SplQueue();
    }

    public function send(mixed $value, ?float $timeout = null): void
    {
        if ($this->closed) {
            throw new ChannelClosed('Cannot send on a closed channel');
        }
        if ($this->receivers !== []) {
            $key = \array_key_first($this->receivers);
            $receiver = $this->receivers[$key];
            unset($this->receivers[$key]);
            Scheduler::get()->resume($receiver, $value);
            return;
        }
        if ($this->buffer->count() < $this->capacity) {
            $this->buffer->enqueue($value);
            return;
        }
        $this->wait(function () use ($value): void {
            $scheduler = Scheduler::get();
            $key = $this->nextKey++;
            $this->senders[$key] = [$scheduler->current, $value];
            $scheduler->await(function () use ($key): void {
                unset($this->senders[$key]);
            });
        }, $timeout, 'Channel send');
    }

    public function receive(?float $timeout = null): mixed
    {
        if (!$this->buffer->isEmpty()) {
            $value = $this->buffer->dequeue();
            if ($this->senders !== []) {
                // A slot opened: the longest-waiting sender's value moves into the buffer.
                [$sender, $pending] = $this->takeSender();
                $this->buffer->enqueue($pending);
                Scheduler::get()->resume($sender);
            }
            return $value;
        }
        if ($this->senders !== []) {
            [$sender, $value] = $this->takeSender();
            Scheduler::get()->resume($sender);
            return $value;
        }
        if ($this->closed) {
            throw new ChannelClosed('The channel is closed and empty');
        }
        return $this->wait(function (): mixed {
            $scheduler = Scheduler::get();
            $key = $this->nextKey++;
            $this->receivers[$key] = $scheduler->current;
            return $scheduler->await(function () use ($key): void {
                unset($this->receivers[$key]);
            });
        }, $timeout, 'Channel receive');
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $scheduler = Scheduler::get();
        foreach ($this->receivers as $receiver) {
            $scheduler->throw($receiver, new ChannelClosed('The channel was closed while waiting to receive'));
        }
        foreach ($this->senders as [$sender]) {
            $scheduler->throw($sender, new ChannelClosed('The channel was closed while waiting to send'));
        }
        $this->receivers = $this->senders = [];
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** Values buffered now. */
    public function count(): int
    {
        return $this->buffer->count();
    }

    public function capacity(): int
    {
        return $this->capacity;
    }

    /** @return array{Coroutine, mixed} */
    private function takeSender(): array
    {
        $key = \array_key_first($this->senders);
        $entry = $this->senders[$key];
        unset($this->senders[$key]);
        return $entry;
    }

    private function wait(\Closure $wait, ?float $timeout, string $what): mixed
    {
        if ($timeout !== null) {
            $inner = $wait;
            $wait = static fn (): mixed => \Weft\timeout($timeout, $inner, $what);
        }
        return Scheduler::get()->current === null ? Blocking::run($wait) : $wait();
    }
}
