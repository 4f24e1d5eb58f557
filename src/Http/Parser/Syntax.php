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
     * CRLFCRLF) or not yet ($end = null). Checks run in the same order in both cases, and a partial
     * head only fails once the failure is certain, so feeding bytes one at a time ends in the same
     * error as feeding them at once — while never buffering more than the limits allow.
     *
     * @throws HttpError
     */
    public static function checkHead(string $buffer, int $offset, ?int $end, Limits $limits, bool $isRequest): void
    {
        $length = \strlen($buffer);
        if ($length === $offset) {
            return;
        }
        $lf = strpos($buffer, "\n", $offset);
        if ($lf === false) {
            // Incomplete first line; its final byte may be the CR of its CRLF.
            $lineLength = $length - $offset - ($buffer[$length - 1] === "\r" ? 1 : 0);
            if ($isRequest && $lineLength > $limits->maxTargetBytes) {
                throw HttpError::uriTooLong($limits->maxTargetBytes);
            }
        } else {
            $crlf = $lf > $offset && $buffer[$lf - 1] === "\r";
            if ($isRequest && $lf - $offset - ($crlf ? 1 : 0) > $limits->maxTargetBytes) {
                throw HttpError::uriTooLong($limits->maxTargetBytes);
            }
            if (!$crlf) {
                throw HttpError::badRequest('Lines must end with CRLF, not a bare LF');
            }
        }
        // A partial head of maxHeaderBytes already cannot end within the limit.
        if ($end === null ? $length - $offset >= $limits->maxHeaderBytes : $end + 4 - $offset > $limits->maxHeaderBytes) {
            throw HttpError::headerTooLarge($limits->maxHeaderBytes);
        }
    }

    /**
     * Why field lines (without CRLF) failed the fast pattern.
     *
     * @param list<string> $lines
     */
    public static function diagnoseFields(array $lines, int $maxCount): HttpError
    {
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
            if (str_contains($value, "\n")) {
                return HttpError::badRequest('Lines must end with CRLF, not a bare LF');
            }
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
}
