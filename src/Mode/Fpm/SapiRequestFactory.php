<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

use Weft\Http\Message\HeaderBlock;
use Weft\Http\Message\Request;

/**
 * Builds the same Request the Weft server would have parsed, from what php-fpm was given: the CGI
 * variables nginx sends ($_SERVER) and the body (php://input).
 */
final class SapiRequestFactory
{
    /**
     * @param array<string, mixed> $server $_SERVER: REQUEST_METHOD, REQUEST_URI, SERVER_PROTOCOL,
     *        HTTP_* headers, CONTENT_TYPE, CONTENT_LENGTH, REMOTE_ADDR
     * @param string $body the request body as read from php://input
     */
    public static function fromGlobals(array $server, string $body = ''): Request
    {
        $method = (string) ($server['REQUEST_METHOD'] ?? 'GET');
        $version = (string) ($server['SERVER_PROTOCOL'] ?? 'HTTP/1.1');
        if (\str_starts_with($version, 'HTTP/')) {
            $version = \substr($version, 5);
        }
        $remote = (string) ($server['REMOTE_ADDR'] ?? '');
        return new Request(
            $method === '' ? 'GET' : $method,
            self::target($server),
            self::headerBlock($server),
            $body,
            $version,
            $remote === '' ? null : $remote,
        );
    }

    /** @param array<string, mixed> $server */
    private static function target(array $server): string
    {
        $uri = (string) ($server['REQUEST_URI'] ?? '');
        if ($uri !== '') {
            return $uri;
        }
        // Not from nginx (which always sends REQUEST_URI): rebuild it the CGI way.
        $path = (string) ($server['SCRIPT_NAME'] ?? '') . (string) ($server['PATH_INFO'] ?? '');
        $query = (string) ($server['QUERY_STRING'] ?? '');
        return ($path === '' ? '/' : $path) . ($query === '' ? '' : '?' . $query);
    }

    /** @param array<string, mixed> $server */
    private static function headerBlock(array $server): string
    {
        $block = '';
        foreach ($server as $key => $value) {
            $key = (string) $key;
            if (\str_starts_with($key, 'HTTP_')) {
                $name = \substr($key, 5);
                // nginx sends these twice, as CGI variables and as HTTP_*; the CGI ones count.
                if (($name === 'CONTENT_TYPE' || $name === 'CONTENT_LENGTH') && ($server[$name] ?? '') !== '') {
                    continue;
                }
            } elseif ($key === 'CONTENT_TYPE' || $key === 'CONTENT_LENGTH') {
                // CGI moves these two out of HTTP_*; nginx sends them empty when the request had none.
                if ($value === '' || $value === null) {
                    continue;
                }
                $name = $key;
            } else {
                continue;
            }
            if (!\is_scalar($value)) {
                continue;
            }
            $name = \ucwords(\strtolower(\str_replace('_', '-', $name)), '-');
            try {
                $block .= HeaderBlock::fromArray([$name => (string) $value]);
            } catch (\InvalidArgumentException) {
                // A field that could not have come off the wire (a control byte): dropped, like a
                // server drops a field it cannot parse, rather than failing the whole request.
            }
        }
        return $block;
    }
}
