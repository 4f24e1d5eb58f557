<?php

declare(strict_types=1);

namespace Weft\Pool;

/**
 * Implemented by a client's exceptions that mean "this connection is unusable". Pool::use() discards the
 * connection when its task throws one, and may run the task again on a fresh connection.
 */
interface BrokenConnection extends \Throwable
{
    /**
     * True only if nothing was sent that could have had an effect (e.g. the connection was found dead
     * before or while writing the request and the server cannot have acted on it), and the connection
     * was not inside a transaction. Running the task again must then be harmless.
     */
    public function isSafeToRetry(): bool;
}
