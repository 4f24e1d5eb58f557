<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * A request as PHP's $_SERVER would describe it under a web server (the CGI meta-variables and one
 * HTTP_* entry per header field): what the PSR-7 server parameters and HttpFoundation's server bag are
 * built from.
 */
final class ServerVariables
{
    /**
     * @param array<string, list<string>> $headers the fields to describe (lower-case names), the
     *        request's own or fewer
     * @return array<string, string|int|float>
     */
    public static function of(Request $request, array $headers, float $now): array
    {
        $server = [
            'REQUEST_METHOD' => $request->method(),
            'REQUEST_URI' => $request->target(),
            'QUERY_STRING' => $request->queryString(),
            'SERVER_PROTOCOL' => 'HTTP/' . $request->version(),
            'REQUEST_TIME' => (int) $now,
            'REQUEST_TIME_FLOAT' => $now,
        ];
        if ($request->remoteAddress() !== null) {
            $server['REMOTE_ADDR'] = $request->remoteAddress(); // the client's, behind a trusted proxy
        }
        if ($request->scheme() === 'https') {
            $server['HTTPS'] = 'on';
        }
        foreach ($headers as $name => $values) {
            $key = \strtoupper(\str_replace('-', '_', $name));
            $value = \implode(', ', $values);
            if ($key === 'CONTENT_TYPE' || $key === 'CONTENT_LENGTH') {
                $server[$key] = $value;
            } else {
                $server['HTTP_' . $key] = $value;
            }
        }
        return $server;
    }
}
