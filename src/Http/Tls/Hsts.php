<?php

declare(strict_types=1);

namespace Weft\Http\Tls;

use Psr\Http\Server\RequestHandlerInterface;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Psr\PsrHandlerAdapter;

/**
 * --hsts: Strict-Transport-Security on every answer to a request that came over HTTPS (RFC 6797 §7.2:
 * never over plain HTTP, where a browser must ignore it). A header the application set itself wins.
 */
final class Hsts
{
    private readonly \Closure $next;
    private readonly string $value;

    public function __construct(callable|RequestHandlerInterface $next, int $maxAge, bool $includeSubdomains = false)
    {
        if ($maxAge < 1) {
            throw new \InvalidArgumentException('The HSTS max-age must be at least 1 second');
        }
        $this->next = $next instanceof RequestHandlerInterface ? (new PsrHandlerAdapter($next))(...) : $next(...);
        $this->value = "max-age=$maxAge" . ($includeSubdomains ? '; includeSubDomains' : '');
    }

    public function __invoke(Request $request): mixed
    {
        $response = ($this->next)($request);
        if ($response instanceof Response && $request->scheme() === 'https' && !$response->hasHeader('strict-transport-security')) {
            return $response->withHeader('Strict-Transport-Security', $this->value);
        }
        return $response;
    }
}
