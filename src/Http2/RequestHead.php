<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\Http\Message\HeaderBlock;
use Weft\Http\Message\HeaderField;
use Weft\Http\Message\Response;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;

/**
 * A stream's request head from its decoded header fields (RFC 9113 §8.3): pure, fields and limits in,
 * the head out, in the form the HTTP/1.1 parser gives it (a HeaderBlock, "host" from ":authority",
 * cookies joined). A malformed head (§8.1.1: a pseudo-header unknown, repeated, missing or after a
 * regular field; an upper-case or connection-specific name; CR, LF or NUL in a value) is null: its
 * stream is reset. One within the protocol but over a limit HTTP/1.1 also has carries the answer
 * HTTP/1.1 gives ($refusal: 414, 431, 413, 501).
 *
 * @internal
 */
final class RequestHead
{
    /** Field names as HTTP/2 sends them: tokens, lower case. */
    public const NAME = '/\A[!#$%&\'*+\-.^_`|~0-9a-z]++\z/';
    /** Fields HTTP/2 forbids (§8.2.2), in requests and in responses. */
    public const CONNECTION_FIELDS = ['connection' => true, 'keep-alive' => true, 'proxy-connection' => true, 'transfer-encoding' => true, 'upgrade' => true];
    /** Request fields parse() looks at: the forbidden ones and those with rules of their own. */
    private const SPECIAL = self::CONNECTION_FIELDS + ['te' => true, 'cookie' => true, 'host' => true, 'content-length' => true];
    /** Response fields not sent as given: the connection-specific ones, and content-length (ours). */
    private const RESPONSE_SKIPPED = self::CONNECTION_FIELDS + ['content-length' => true];
    /** HeaderField's rule on every field line of a response at once ("Name: value\n" each). */
    private const RESPONSE_LINES = '/\A(?:' . HeaderBlock::TOKEN . '++: ' . HeaderField::VALUE . '\n)*+\z/';
    /** Regular fields in HeaderBlock form, all checked by one match. */
    private const BLOCK = '/\A(?:\r\n[!#$%&\'*+\-.^_`|~0-9a-z]++: (?:[^\r\n\0 \t](?:[^\r\n\0]*[^\r\n\0 \t])?)?)*+\z/';

    private function __construct(
        public readonly string $method,
        public readonly string $target,
        /** In HeaderBlock form ("\r\nname: value"...). */
        public readonly string $headerBlock,
        /** The content-length field, which the DATA must match (§8.1.1). */
        public readonly ?int $contentLength,
        public readonly ?Response $refusal,
    ) {
    }

    /** @param list<array{0: string, 1: string}> $fields */
    public static function parse(array $fields, Limits $limits): ?self
    {
        $method = $path = $scheme = $authority = $contentLength = null;
        $block = '';
        $cookies = [];
        $regular = false;
        $count = 0;
        foreach ($fields as [$name, $value]) {
            if ($name !== '' && $name[0] === ':') {
                if ($regular || \strpbrk($value, "\r\n\0") !== false) {
                    return null; // a pseudo-header after a regular field, or a value no field may hold
                }
                switch ($name) {
                    case ':method':
                        if ($method !== null) {
                            return null;
                        }
                        $method = $value;
                        break;
                    case ':path':
                        if ($path !== null) {
                            return null;
                        }
                        $path = $value;
                        break;
                    case ':scheme':
                        if ($scheme !== null) {
                            return null;
                        }
                        $scheme = $value;
                        break;
                    case ':authority':
                        if ($authority !== null) {
                            return null;
                        }
                        $authority = $value;
                        break;
                    default:
                        return null; // unknown, or a response's :status
                }
                continue;
            }
            $regular = true;
            $count++;
            if (isset(self::SPECIAL[$name])) {
                switch ($name) {
                    case 'te':
                        if ($value !== 'trailers') {
                            return null;
                        }
                        break;
                    case 'cookie':
                        $cookies[] = $value; // split by the client for compression; joined again (§8.2.3)
                        continue 2;
                    case 'host':
                        if ($authority !== null) {
                            continue 2; // :authority names it
                        }
                        break;
                    case 'content-length':
                        if (\preg_match('/\A\d{1,18}\z/', $value) !== 1 || ($contentLength !== null && $contentLength !== (int) $value)) {
                            return null;
                        }
                        $contentLength = (int) $value;
                        break;
                    default:
                        return null; // connection-specific (§8.2.2)
                }
            }
            $block .= "\r\n" . $name . ': ' . $value;
        }
        if ($cookies !== []) {
            $block .= "\r\ncookie: " . \implode('; ', $cookies);
        }
        // Every regular field at once: lower-case token names, values without CR, LF, NUL or
        // surrounding white space (§8.2.1). A value holding CR or LF cannot pass: it breaks the pattern.
        if ($block !== '' && \preg_match(self::BLOCK, $block) !== 1) {
            return null;
        }
        if ($method === null || $method === '' || ($method !== 'CONNECT' && ($scheme === null || $path === null || $path === ''))) {
            return null;
        }
        $path ??= '';
        if ($path !== '' && $path[0] !== '/' && !($path === '*' && $method === 'OPTIONS')) {
            return null;
        }
        $refusal = null;
        if ($count > $limits->maxHeaderCount) {
            $refusal = HttpError::tooManyHeaders($limits->maxHeaderCount)->toResponse();
        } elseif ($method === 'CONNECT' || !isset($limits->methodSet[$method])) {
            $refusal = HttpError::notImplemented("Method $method is not supported")->toResponse();
        } elseif (\strlen($path) > $limits->maxTargetBytes) {
            $refusal = HttpError::uriTooLong($limits->maxTargetBytes)->toResponse();
        } elseif ($contentLength !== null && $contentLength > $limits->maxBodyBytes) {
            $refusal = HttpError::bodyTooLarge($limits->maxBodyBytes)->toResponse();
        }
        if ($authority !== null && $authority !== '') {
            $block = "\r\nhost: " . $authority . $block;
        }
        return new self($method, $path, $block, $contentLength, $refusal);
    }

    /**
     * A trailer section (a second HEADERS): no pseudo-header, names as in a head. @return ?string its
     * HeaderBlock, null when malformed
     *
     * @param list<array{0: string, 1: string}> $fields
     */
    public static function trailers(array $fields): ?string
    {
        $block = '';
        foreach ($fields as [$name, $value]) {
            if (isset(self::CONNECTION_FIELDS[$name])) {
                return null;
            }
            $block .= "\r\n" . $name . ': ' . $value;
        }
        return $block === '' || \preg_match(self::BLOCK, $block) === 1 ? $block : null;
    }

    /**
     * The response's header fields for HPACK: lower-case names, the connection-specific ones left out
     * (§8.2.2), Server and Date as on HTTP/1.1, and the length of a string body (a HEAD answer names
     * the length its GET would have, as on HTTP/1.1) unless trailers follow it.
     *
     * @return list<array{0: string, 1: string}>
     * @throws \InvalidArgumentException for a field HeaderField refuses (the same rule as HTTP/1.1)
     */
    public static function responseFields(Response $response, string $date): array
    {
        return self::withStatusAndLength($response, self::headerFields($response), $date);
    }

    /**
     * The response's own fields for HPACK, checked, without :status and what withStatusAndLength()
     * adds: a function of its headerFields() and isStreamed() alone, so a session may keep the last
     * result for the next response with the same header array (a handler's literal array is the same
     * array every time).
     *
     * @return array{0: list<array{0: string, 1: string}>, 1: bool, 2: bool} the fields, whether they name
     *         a Server and a Date
     * @throws \InvalidArgumentException for a field HeaderField refuses (the same rule as HTTP/1.1)
     */
    public static function headerFields(Response $response): array
    {
        $streamed = $response->isStreamed();
        $fields = [];
        $lines = '';
        $count = 0;
        $server = $ownDate = false;
        foreach ($response->headerFields() as $name => $values) {
            $name = (string) $name;
            $lower = \strtolower($name);
            foreach (\is_array($values) ? $values : [$values] as $value) {
                $value = (string) $value;
                // The field as HTTP/1.1 would write it, for HeaderField's rule (one match below).
                $lines .= $name . ': ' . $value . "\n";
                $count++;
                if (isset(self::RESPONSE_SKIPPED[$lower])) {
                    if ($lower !== 'content-length' || !$streamed) {
                        continue; // connection-specific (§8.2.2), or a string body's length, which is its own
                    }
                    if (\preg_match('/\A\d{1,18}\z/', $value) !== 1) {
                        throw new \InvalidArgumentException("Invalid Content-Length \"{$value}\"");
                    }
                }
                $fields[] = [$lower, $value];
            }
            $server = $server || $lower === 'server';
            $ownDate = $ownDate || $lower === 'date';
        }
        // As many lines as fields: a value holding a line feed cannot pass as two fields.
        if ($lines !== '' && (\preg_match(self::RESPONSE_LINES, $lines) !== 1 || \substr_count($lines, "\n") !== $count)) {
            throw new \InvalidArgumentException((string) HeaderField::problem($response->headers()));
        }
        return [$fields, $server, $ownDate];
    }

    /**
     * The whole list from headerFields()' answer for this response: :status first, then its fields,
     * Server and Date unless it has them, and a string body's length.
     *
     * @param array{0: list<array{0: string, 1: string}>, 1: bool, 2: bool} $own
     * @return list<array{0: string, 1: string}>
     */
    public static function withStatusAndLength(Response $response, array $own, string $date): array
    {
        $status = $response->status();
        $fields = [[':status', (string) $status], ...$own[0]];
        if (!$own[1]) {
            $fields[] = ['server', 'weft'];
        }
        if (!$own[2]) {
            $fields[] = ['date', $date];
        }
        if ($status !== 204 && $status !== 304 && !$response->isStreamed() && !$response->hasTrailers()) {
            $fields[] = ['content-length', (string) \strlen($response->body())];
        }
        return $fields;
    }
}
