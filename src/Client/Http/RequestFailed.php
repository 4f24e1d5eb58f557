<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/**
 * Every error of the client: no usable response came back. The message names the method and the URL.
 * An interface, so that each error can also be the one Weft class of its concept: ConnectFailed is a
 * Socket\ConnectException, ConnectTimeout a Socket\ConnectTimeout, ConnectionLost a
 * Socket\ConnectionLost, RequestTimeout a Coroutine\Timeout.
 */
interface RequestFailed extends \Weft\WeftException
{
    public function method(): string;

    /** The URL that failed (after redirects: the last one), without credentials. */
    public function url(): string;
}
