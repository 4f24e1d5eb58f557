<?php

declare(strict_types=1);

namespace Weft\Http\Tls;

use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

/**
 * The application of the --redirect-http listener: every request gets the same URL on the HTTPS port,
 * 301 for GET and HEAD (what browsers and crawlers remember), 308 for other methods (which must keep
 * their method and body, RFC 9110 §15.4.9). The host comes from the request's Host field; a request
 * without a usable one gets a 400, as nothing safe can be named.
 */
final class HttpsRedirect
{
    public function __construct(private readonly int $httpsPort)
    {
    }

    public function __invoke(Request $request): Response
    {
        $host = \strtolower((string) $request->header('host'));
        // A name or IPv4 address, or a bracketed IPv6 one, and an optional port, which is replaced.
        if (\preg_match('/^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(:\d{1,5})?$/', $host, $m) !== 1) {
            return ErrorResponse::badRequest('no usable Host field to redirect to HTTPS')->withHeader('Connection', 'close');
        }
        $target = $request->target();
        if (!\str_starts_with($target, '/')) {
            $target = '/'; // "*" (OPTIONS) or an absolute form: the origin is what is redirected
        }
        $location = 'https://' . $m[1] . ($this->httpsPort === 443 ? '' : ':' . $this->httpsPort) . $target;
        $status = \in_array($request->method(), ['GET', 'HEAD'], true) ? 301 : 308;
        return new Response($status, [
            'Location' => $location,
            'Content-Type' => 'text/plain; charset=utf-8',
            'Connection' => 'close',
        ], "Moved to $location\n");
    }
}
