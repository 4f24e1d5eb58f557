<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * Where a streamed response's producer writes its body. The server's implementation frames each
 * chunk (chunked encoding, or raw bytes) and applies backpressure, so write() may suspend the
 * calling coroutine.
 */
interface BodyWriter
{
    public function write(string $chunk): void;
}
