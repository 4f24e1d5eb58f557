<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

use Weft\Http\Message\HeaderBlock;

/**
 * The HTTP/1.1 grammar shared by RequestParser, ResponseParser and ChunkedDecoder: head size
 * rules, the header-field pattern, precise diagnosis of a head that failed the fast pattern, and
 * message framing (Content-Length, Transfer-Encoding). One implementation of each, so requests,
 * responses and trailers cannot drift apart.
 *
 * @internal
 */
final class Syntax
{

    /**
     * PCRE source for up to $max field lines in HeaderBlock form, possessive so a failure is fast.
     * The caller must also reject a NUL in the matched block (see HeaderBlock::FIELD).
     */
    public static function fields(int $max): string
    {
        return '(?:' . HeaderBlock::FIELD . '){0,' . $max . '}+';
    }

    /**
     * Size and line-ending rules for a head starting at $offset, complete ($end = position of its
     * CRLFCRLF) or not yet ($end = null). A partial head only fails once the failure is certain,
     * and checks rank the same in both cases (414, then a bare LF within the size limit, then 431,
     * then the grammar), so feeding bytes one at a time ends in the same status as feeding them at
     * once, while never buffering more than the limits allow. On the hot path (complete, small
     * head) this costs a few integer comparisons: a bare LF in a small complete head is found by
     * the caller's diagnosis after its pattern fails.
     *
     * @throws HttpError
     */
    public static function checkHead(string $buffer, int $offset, ?int $end, Limits $limits, bool $isRequest): void
    {
        $length = \strlen($buffer);
        $size = $end === null ? $length - $offset : $end + 4 - $offset;
        if ($size === 0) {
            return;
        }
        // A partial head of maxHeaderBytes can no longer end within the limit.
        $tooLarge = $end === null ? $size >= $limits->maxHeaderBytes : $size > $limits->maxHeaderBytes;
        if ($isRequest && ($tooLarge || $size > $limits->maxTargetBytes)) {
            $lf = strpos($buffer, "\n", $offset);
            // Without its LF yet, the line's last byte may still be the CR of its CRLF.
            $lineLength = $lf === false
                ? $length - $offset - ($buffer[$length - 1] === "\r" ? 1 : 0)
                : $lf - $offset - ($lf > $offset && $buffer[$lf - 1] === "\r" ? 1 : 0);
            if ($lineLength > $limits->maxTargetBytes) {
                throw HttpError::uriTooLong($limits->maxTargetBytes);
            }
            if ($lf === false) {
                // The line may still outgrow maxTargetBytes, and 414 outranks 431: wait (at most
                // maxTargetBytes + 1 bytes) until the line ends or is too long.
                return;
            }
        }
        if ($end === null || $tooLarge) {
            if (self::hasBareLf($buffer, $offset, min($size, $limits->maxHeaderBytes))) {
                throw self::bareLf();
            }
            if ($tooLarge) {
                throw HttpError::headerTooLarge($limits->maxHeaderBytes);
            }
        }
    }

    /** Whether $length bytes from $offset hold an LF that does not end a CRLF. */
    public static function hasBareLf(string $buffer, int $offset, int $length): bool
    {
        return substr_count($buffer, "\n", $offset, $length) !== substr_count($buffer, "\r\n", $offset, $length);
    }

    public static function bareLf(): HttpError
    {
        return HttpError::badRequest('Lines must end with CRLF, not a bare LF');
    }

    /**
     * Why field lines (without CRLF) failed the fast pattern.
     *
     * @param list<string> $lines
     */
    public static function diagnoseFields(array $lines, int $maxCount): HttpError
    {
        foreach ($lines as $line) {
            if (str_contains($line, "\n")) {
                return self::bareLf();
            }
        }
        if (\count($lines) > $maxCount) {
            return HttpError::tooManyHeaders($maxCount);
        }
        foreach ($lines as $line) {
            if ($line === '') {
                return HttpError::badRequest('Empty header line');
            }
            if ($line[0] === ' ' || $line[0] === "\t") {
                return HttpError::badRequest('Obsolete line folding is not accepted');
            }
            $colon = strpos($line, ':');
            if ($colon === false) {
                return HttpError::badRequest('Header line without a colon');
            }
            $name = substr($line, 0, $colon);
            if ($name !== rtrim($name, " \t")) {
                return HttpError::badRequest('Whitespace between header name and colon');
            }
            if (preg_match('/\A' . HeaderBlock::TOKEN . '++\z/', $name) !== 1) {
                return HttpError::badRequest('Invalid header name');
            }
            $value = substr($line, $colon + 1);
            if (str_contains($value, "\r")) {
                return HttpError::badRequest('Bare CR in header value');
            }
            if (str_contains($value, "\0")) {
                return HttpError::badRequest('NUL in header value');
            }
        }
        return HttpError::badRequest('Malformed header section');
    }

    /**
     * The body length from every Content-Length value. Repeated identical values ("5, 5" or two
     * fields) are one length, as RFC 9112 allows; anything else is a framing error.
     *
     * @param non-empty-list<string> $values
     * @return int PHP_INT_MAX for lengths beyond any limit
     * @throws HttpError
     */
    public static function contentLength(array $values): int
    {
        $length = null;
        foreach ($values as $value) {
            foreach (str_contains($value, ',') ? explode(',', $value) : [$value] as $item) {
                $item = trim($item, " \t");
                if ($item === '' || !ctype_digit($item)) {
                    throw HttpError::badRequest('Invalid Content-Length');
                }
                if ($length !== null && $item !== $length && ltrim($item, '0') !== ltrim($length, '0')) {
                    throw HttpError::badRequest('Conflicting Content-Length values');
                }
                $length = $item;
            }
        }
        $digits = ltrim((string) $length, '0');
        return \strlen($digits) > 18 ? PHP_INT_MAX : (int) $digits;
    }

    /**
     * Transfer codings, lowercased, in order.
     *
     * @param non-empty-list<string> $values
     * @return list<string>
     */
    public static function codings(array $values): array
    {
        $codings = [];
        foreach ($values as $value) {
            foreach (explode(',', strtolower($value)) as $item) {
                // Parameters (";q=...") do not change which coding it is.
                $semicolon = strpos($item, ';');
                $item = trim($semicolon === false ? $item : substr($item, 0, $semicolon), " \t");
                if ($item !== '') {
                    $codings[] = $item;
                }
            }
        }
        return $codings;
    }

    /**
     * A request may only be "chunked": other codings are not implemented (501), and chunked that is
     * not the final, single coding leaves the length unknowable (400, RFC 9112 §6.3).
     *
     * @param non-empty-list<string> $values
     * @throws HttpError
     */
    public static function requireChunked(array $values): void
    {
        $codings = self::codings($values);
        if ($codings === ['chunked']) {
            return;
        }
        $chunked = array_keys($codings, 'chunked', true);
        if ($codings === [] || \count($chunked) > 1 || ($chunked !== [] && end($chunked) !== \count($codings) - 1)) {
            throw HttpError::badRequest('Invalid Transfer-Encoding');
        }
        throw HttpError::unsupportedTransferEncoding();
    }

    /**
     * The values of every $name field, as sent: untrimmed, so that framing fields can be held to the
     * strictest reading (a tab around "chunked" is not the same field to every server on the path).
     *
     * @return list<string>
     */
    public static function rawValues(string $block, string $name): array
    {
        $needle = "\r\n" . $name . ':';
        $values = [];
        $pos = 0;
        while (($pos = stripos($block, $needle, $pos)) !== false) {
            $start = $pos + \strlen($needle);
            $end = strpos($block, "\r\n", $start);
            $end = $end === false ? \strlen($block) : $end;
            $values[] = substr($block, $start, $end - $start);
            $pos = $end;
        }
        return $values;
    }

    /**
     * A request's Content-Length, as strictly as nginx and llhttp read it: one field, digits only (spaces
     * around them allowed). "5, 5", two fields, tabs or signs are framing errors: a front end that reads
     * them another way would see a different body, and then a different next request.
     *
     * @param non-empty-list<string> $raw untrimmed values
     * @throws HttpError
     */
    public static function requestContentLength(array $raw): int
    {
        if (\count($raw) !== 1) {
            throw HttpError::badRequest('More than one Content-Length field');
        }
        $value = trim($raw[0], ' ');
        if ($value === '' || !ctype_digit($value)) {
            throw HttpError::badRequest('Invalid Content-Length');
        }
        $digits = ltrim($value, '0');
        return \strlen($digits) > 18 ? PHP_INT_MAX : (int) $digits;
    }

    /**
     * A request's Transfer-Encoding must be exactly one field "chunked" (any case, spaces around it).
     * A second field (even empty), an empty list element (",chunked", "chunked,"), parameters
     * ("chunked;", "chunked;q=1") or a tab leave the framing open to interpretation: 400, like nginx.
     * A well-formed list whose last coding is chunked once but holds others ("gzip, chunked"): 501, we
     * decode no other coding; chunked anywhere but last: 400 (RFC 9112 §6.3).
     *
     * @param non-empty-list<string> $raw untrimmed values
     * @throws HttpError
     */
    public static function requireRequestChunked(array $raw): void
    {
        if (\count($raw) === 1 && strcasecmp(trim($raw[0], ' '), 'chunked') === 0) {
            return;
        }
        if (\count($raw) !== 1) {
            throw HttpError::badRequest('More than one Transfer-Encoding field');
        }
        $codings = [];
        foreach (explode(',', strtolower($raw[0])) as $item) {
            $item = trim($item, ' ');
            if (preg_match('/\A' . HeaderBlock::TOKEN . '++\z/', $item) !== 1) {
                throw HttpError::badRequest('Invalid Transfer-Encoding');
            }
            $codings[] = $item;
        }
        $chunked = array_keys($codings, 'chunked', true);
        if (\count($chunked) > 1 || ($chunked !== [] && end($chunked) !== \count($codings) - 1)) {
            throw HttpError::badRequest('Invalid Transfer-Encoding');
        }
        throw HttpError::unsupportedTransferEncoding();
    }

    /**
     * Why a request target is refused once the method is known to be served, or null. The target's bytes
     * are already valid (no controls, SP or DEL). Decided with nginx's answers as the default:
     * - CONNECT (any target): 400. Weft is not a forward proxy; nginx answers the authority-form with 400
     *   (and the origin-form, which no proxy client sends, with 405).
     * - The asterisk-form ("OPTIONS *", RFC 9112 §3.2.4): 400, as nginx. Nothing in an application can
     *   answer for the whole server; a handler would only see a path that is not one.
     * - Userinfo in an absolute-form target ("http://user:pass@host/"): 400, as nginx. RFC 9110 §4.2.4
     *   deprecates it; it only ever serves to deceive a reader about the host.
     * - A path whose dot-segments climb above the root ("/../x", "/a/../../x", also written with %2e and
     *   %2f): 400, as nginx, so no application or file lookup ever sees one. Inside the root ("/a/../b")
     *   the target reaches the application as sent (nginx also leaves $request_uri so).
     * Each names its reason; the native head parser refuses the same targets (ext/weft_http.c).
     */
    public static function targetError(string $method, string $target): ?HttpError
    {
        if ($method === 'CONNECT') {
            return HttpError::badRequest('CONNECT is not supported');
        }
        if ($target[0] === '/') {
            $path = $target;
        } elseif (preg_match('/\A[A-Za-z][A-Za-z0-9+.\-]*+:\/\/([^\/?#]++)/', $target, $m) === 1) {
            if (str_contains($m[1], '@')) {
                return HttpError::badRequest('Userinfo in the request target');
            }
            $path = substr($target, \strlen($m[0]));
        } elseif ($target === '*' && $method === 'OPTIONS') {
            return HttpError::badRequest('The asterisk-form (OPTIONS *) is not supported');
        } else {
            return HttpError::badRequest('Invalid request target');
        }
        // The common target has no dot-segment and no percent-encoding: two scans, then done.
        if ((str_contains($path, '/.') || str_contains($path, '%')) && self::climbsAboveRoot($path)) {
            return HttpError::badRequest('The request target climbs above the root');
        }
        return null;
    }

    /**
     * Whether the path (up to "?" or "#") has more ".." segments than segments before them, reading
     * "%2e" as "." and "%2f" as "/" like nginx; empty and "." segments do not count.
     */
    public static function climbsAboveRoot(string $path): bool
    {
        $path = substr($path, 0, strcspn($path, '?#'));
        if (!str_contains($path, '.') && stripos($path, '%2e') === false) {
            return false;
        }
        $depth = 0;
        foreach (explode('/', str_ireplace(['%2e', '%2f'], ['.', '/'], $path)) as $segment) {
            if ($segment === '..') {
                if (--$depth < 0) {
                    return true;
                }
            } elseif ($segment !== '' && $segment !== '.') {
                $depth++;
            }
        }
        return false;
    }

    /**
     * The checks on one request field whose line just ended, in the order of the lines: so that a head
     * fails at its first offending line, whether it arrived at once or a line at a time (HeadScanner
     * runs them as each line ends; RequestParser, on a complete head, names the same first error).
     *
     * @param array{hosts: int, length: bool, coding: bool} $seen what earlier lines of this head held
     */
    public static function fieldError(string $name, string $value, string $version, array &$seen, Limits $limits): ?HttpError
    {
        try {
            switch ($name) {
                case 'host':
                    if (++$seen['hosts'] > 1) {
                        return HttpError::badRequest('More than one Host header');
                    }
                    return preg_match(self::HOST_VALUE, $value) === 1 ? null : HttpError::badRequest('Invalid Host header');
                case 'content-length':
                    if ($seen['coding']) {
                        return HttpError::badRequest('Both Content-Length and Transfer-Encoding');
                    }
                    if ($seen['length']) {
                        return HttpError::badRequest('More than one Content-Length field');
                    }
                    $seen['length'] = true;
                    return self::requestContentLength([$value]) > $limits->maxBodyBytes ? HttpError::bodyTooLarge($limits->maxBodyBytes) : null;
                case 'transfer-encoding':
                    if ($seen['length']) {
                        return HttpError::badRequest('Both Content-Length and Transfer-Encoding');
                    }
                    if ($version === '1.0') {
                        return HttpError::badRequest('Transfer-Encoding in an HTTP/1.0 request');
                    }
                    if ($seen['coding']) {
                        return HttpError::badRequest('More than one Transfer-Encoding field');
                    }
                    $seen['coding'] = true;
                    self::requireRequestChunked([$value]);
                    return null;
                default:
                    return null;
            }
        } catch (HttpError $e) {
            return $e;
        }
    }

    /**
     * RFC 9112 §3.2 and RFC 3986: a Host value is uri-host [ ":" port ] (an IPv6 literal in brackets or
     * reg-name characters), with OWS around it; no whitespace inside, no "/", "," (nginx refuses it too),
     * userinfo or empty value. Matched in place in a header block, from just after "host:", up to the
     * CR that ends the field (one JIT-compiled pattern: the hot path pays about 0.1 µs for it).
     */
    public const HOST_VALUE = '/\G[ \t]*+(?:[A-Za-z0-9\-._~!$&\'()*+;=%]++|\[[0-9A-Fa-f:.]++\])(?::[0-9]*+)?[ \t]*+(?:\r|\z)/';
}
