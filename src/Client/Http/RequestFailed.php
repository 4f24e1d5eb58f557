<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** Base of the client's errors: no usable response came back. The message names the method and the URL. */
abstract class RequestFailed extends \RuntimeException implements \Weft\WeftException
{
    final protected function __construct(
        string $message,
        private readonly string $method,
        private readonly string $url,
        ?\Throwable $previous = null,
        int $code = 0,
    ) {
        parent::__construct($message, $code, $previous);
    }

    public function method(): string
    {
        return $this->method;
    }

    /** The URL that failed (after redirects: the last one), without credentials. */
    public function url(): string
    {
        return $this->url;
    }
}
