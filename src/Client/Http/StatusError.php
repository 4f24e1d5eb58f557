<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\FailedRequest;

/** Client::json() got a 4xx or 5xx answer; the response is attached. */
final class StatusError extends \RuntimeException implements RequestFailed
{
    use FailedRequest;

    private ?Response $response = null;

    public static function of(string $method, Response $response): self
    {
        $error = (new self(
            \sprintf('%s %s answered %d %s', $method, $response->url(), $response->status(), $response->reason()),
            $response->status(),
        ))->describing($method, $response->url());
        $error->response = $response;
        return $error;
    }

    public function response(): Response
    {
        return $this->response;
    }
}
