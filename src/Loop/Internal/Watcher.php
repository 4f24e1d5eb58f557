<?php

declare(strict_types=1);

namespace Weft\Loop\Internal;

/** @internal */
final class Watcher
{
    public const READABLE = 0;
    public const WRITABLE = 1;
    public const DELAY = 2;
    public const REPEAT = 3;
    public const SIGNAL = 4;
    public const DEFER = 5;

    public bool $enabled = true;
    public bool $referenced = true;
    /** For timers: absolute expiry; for repeat: the interval lives in $interval. */
    public float $expiration = 0.0;
    public float $interval = 0.0;
    public int $signal = 0;
    /** @var resource|int|null a stream, or a raw descriptor number (DescriptorDriver) */
    public mixed $stream = null;
    public int $streamId = 0;
    /** @internal TimerQueue bookkeeping: the millisecond it is filed under (-1: not queued) and insertion order. */
    public int $due = -1;
    public int $order = 0;
    /** A backend checked once that it can watch this stream (the watcher keeps its stream for life). */
    public bool $probed = false;

    public function __construct(
        public readonly string $id,
        public readonly int $type,
        public readonly \Closure $callback,
    ) {
    }
}
