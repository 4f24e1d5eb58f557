<?php

declare(strict_types=1);

namespace Weft\Client\Http\Internal;

/**
 * A connection died before any byte of the response arrived: the usual fate of a kept-alive connection
 * the server closed while we were about to use it. Client retries such a request once when that is
 * harmless.
 *
 * @internal
 */
final class Dropped extends \RuntimeException implements \Weft\WeftException
{
    /** @param bool $sent whether the whole request may have reached the server */
    public function __construct(string $message, public readonly bool $sent, ?\Throwable $previous = null)
    {
        parent::__construct($message, 0, $previous);
    }
}
