<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * A channel between coroutines. Capacity 0 is unbuffered: send() waits until a receiver takes the value.
 * With capacity N, send() waits only while N values are buffered. close() wakes every waiter: senders get
 * ChannelClosed at once; receivers first take what is buffered, then get ChannelClosed.
 * Called outside of any coroutine, a wait drives the loop until it is done.
 */
final class Channel implements \Countable
{
    /** @var \SplQueue<mixed> */
    private \SplQueue $buffer;
    private readonly WaitQueue $receivers;
    /** Senders waiting with their value as payload. */
    private readonly WaitQueue $senders;
    private bool $closed = false;

    public function __construct(private readonly int $capacity = 0)
    {
        if ($capacity < 0) {
            throw new \InvalidArgumentException('A channel capacity cannot be negative');
        }
        $this->buffer = new \SplQueue();
        $this->receivers = new WaitQueue();
        $this->senders = new WaitQueue();
    }

    public function send(mixed $value, ?float $timeout = null): void
    {
        if ($this->closed) {
            throw new ChannelClosed('Cannot send on a closed channel');
        }
        $receiver = $this->receivers->shift();
        if ($receiver !== null) {
            Scheduler::get()->resume($receiver[0], $value);
            return;
        }
        if ($this->buffer->count() < $this->capacity) {
            $this->buffer->enqueue($value);
            return;
        }
        $this->senders->wait($timeout, 'Channel send', $value);
    }

    public function receive(?float $timeout = null): mixed
    {
        if (!$this->buffer->isEmpty()) {
            $value = $this->buffer->dequeue();
            $sender = $this->senders->shift();
            if ($sender !== null) {
                // A slot opened: the longest-waiting sender's value moves into the buffer.
                $this->buffer->enqueue($sender[1]);
                Scheduler::get()->resume($sender[0]);
            }
            return $value;
        }
        $sender = $this->senders->shift();
        if ($sender !== null) {
            Scheduler::get()->resume($sender[0]);
            return $sender[1];
        }
        if ($this->closed) {
            throw new ChannelClosed('The channel is closed and empty');
        }
        return $this->receivers->wait($timeout, 'Channel receive');
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $scheduler = Scheduler::get();
        foreach ($this->receivers->takeAll() as [$receiver]) {
            $scheduler->throw($receiver, new ChannelClosed('The channel was closed while waiting to receive'));
        }
        foreach ($this->senders->takeAll() as [$sender]) {
            $scheduler->throw($sender, new ChannelClosed('The channel was closed while waiting to send'));
        }
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
}
