<?php

declare(strict_types=1);

namespace Weft\Client\Http\Internal;

/**
 * What every RequestFailed carries: the method and the URL.
 *
 * @internal
 */
trait FailedRequest
{
    private string $method = '';
    private string $url = '';

    public function method(): string
    {
        return $this->method;
    }

    public function url(): string
    {
        return $this->url;
    }

    private function describing(string $method, string $url): static
    {
        $this->method = $method;
        $this->url = $url;
        return $this;
    }
}
