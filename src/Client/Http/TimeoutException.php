<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** Marks both timeouts: ConnectTimeout (opening a connection) and RequestTimeout (the whole call). */
interface TimeoutException extends \Weft\TimeoutException
{
}
