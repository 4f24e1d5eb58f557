<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** Client::json() got a 4xx or 5xx answer; the response is attached. */
final class StatusError extends RequestFailed
{
    private ?Response $response = null;

    public static function of(string $method, Response $response): self
    {
        $error = new self(
            \sprintf('%s %s answered %d %s', $method, $response->url(), $response->status(), $response->reason()),
            $method,
            $response->url(),
            null,
            $response->status(),
        );
        $error->response = $response;
        return $error;
    }

    public function response(): Response
    {
        return $this->response;
    }
}
