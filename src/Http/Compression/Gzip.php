<?php

declare(strict_types=1);

namespace Weft\Http\Compression;

use Psr\Http\Server\RequestHandlerInterface;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Psr\PsrHandlerAdapter;

/**
 * gzip content coding for the responses of a handler it wraps (a handler itself), or for any
 * response through compress().
 *
 * A response is compressible when its status carries a body (not 1xx, 204, 206 or 304), it has no
 * Content-Encoding, Content-Range or Transfer-Encoding of its own, no "Cache-Control: no-transform",
 * its media type matches the type list and is not an already-compressed type, and its length (when
 * known) reaches the threshold. Every compressible response says "Vary: Accept-Encoding", whether or
 * not this client gets gzip, because a cache must not hand the other variant to the next client; so
 * does a 206 of such a response (sent as identity bytes, never compressed).
 *
 * Only then is Accept-Encoding consulted (gzip or x-gzip, else "*", by q-value; q=0 refuses). The
 * compressed variant loses Content-Length (the encoder counts a string body; a stream goes chunked)
 * and its ETag becomes weak: the bytes differ from the identity variant's, so a strong validator
 * would lie to range requests, while If-None-Match (weak comparison) still matches the file's tag.
 * A streamed body is compressed as it is produced: each write() is deflated with ZLIB_SYNC_FLUSH, so
 * what the producer wrote is decodable by the client at once (server-sent events stay live). A HEAD
 * gets the head a GET would get: with the compressed length when the application gave it the body,
 * without a length for a file's head or a stream.
 */
final class Gzip
{
    /** @var \Closure(Request): mixed */
    private readonly \Closure $next;
    /** @var array<string, bool> Content-Type value => compress it */
    private array $typeVerdicts = [];

    /** @param (callable(Request): mixed)|RequestHandlerInterface $next */
    public function __construct(callable|RequestHandlerInterface $next, private readonly GzipOptions $options = new GzipOptions())
    {
        $this->next = $next instanceof RequestHandlerInterface ? (new PsrHandlerAdapter($next))(...) : $next(...);
    }

    public function __invoke(Request $request): mixed
    {
        $response = ($this->next)($request);
        return $response instanceof Response ? $this->compress($request, $response) : $response;
    }

    public function compress(Request $request, Response $response): Response
    {
        if ($response->status() === 304) {
            return self::revalidated($request, $response);
        }
        if ($response->status() === 206) {
            // A range is never compressed, but it is a range of a representation that varies: a cache
            // must not combine it with parts of the other variant.
            return $this->rangeOfCompressible($response) ? self::withVary($response) : $response;
        }
        if (!$this->compressible($response)) {
            return $response;
        }
        $response = self::withVary($response);
        $acceptEncoding = $request->header('accept-encoding');
        if ($acceptEncoding === null || !self::acceptsGzip($acceptEncoding)) {
            return $response;
        }
        // Ranges address the identity bytes: the gzip variant does not offer them (a Range request
        // gets a 206 of identity bytes from the layer below, which is never compressed).
        $declared = $response->header('content-length');
        $response = $response->withoutHeader('Content-Length')->withoutHeader('Accept-Ranges')->withHeader('Content-Encoding', 'gzip');
        $etag = $response->header('etag');
        if ($etag !== null && !\str_starts_with($etag, 'W/')) {
            $response = $response->withHeader('ETag', 'W/' . $etag);
        }
        if (!$response->isStreamed() && $response->body() !== '') {
            // A HEAD too (an application's answer carries the body a GET would get): its head then
            // says the Content-Length the GET's compressed body has.
            return $response->withBody($this->encode($response->body()));
        }
        if ($request->method() === 'HEAD') {
            // No bytes to measure (a file's head, a stream): a head without a length, as a GET's
            // streamed answer has none either.
            return self::streamed($response, static function (): void {
            });
        }
        if (!$response->isStreamed()) {
            return $response->withBody($this->encode($response->body()));
        }
        $producer = $response->producer();
        $level = $this->options->level;
        $length = $declared === null ? null : (int) $declared;
        return self::streamed($response, static function ($out) use ($producer, $level, $length): void {
            $writer = new GzipBodyWriter($out, $level, $length);
            $producer($writer);
            $writer->finish();
        });
    }

    /** A large body in slices that let the loop run between them (GzipBodyWriter::encode()), a small one in one call. */
    private function encode(string $body): string
    {
        return \strlen($body) > GzipBodyWriter::SLICE
            ? GzipBodyWriter::encode($body, $this->options->level)
            : (string) \gzencode($body, $this->options->level);
    }

    /**
     * Whether an Accept-Encoding value lets us send gzip: the q-value of gzip (or x-gzip), else that
     * of "*", must be above zero. Malformed q-values count as 0.
     */
    public static function acceptsGzip(string $acceptEncoding): bool
    {
        return self::quality($acceptEncoding, 'gzip') > 0.0;
    }

    /**
     * The q-value an Accept-Encoding value gives a content coding ("gzip" also matches "x-gzip"), else
     * the value of "*", else 0. Malformed q-values count as 0.
     */
    public static function quality(string $acceptEncoding, string $wanted): float
    {
        $exact = null;
        $any = null;
        foreach (\explode(',', $acceptEncoding) as $item) {
            $parameters = \explode(';', $item);
            $coding = \strtolower(\trim(\array_shift($parameters)));
            if ($coding === '') {
                continue;
            }
            $q = 1.0;
            foreach ($parameters as $parameter) {
                // Spaces around "=" are outside the grammar but sent by some clients: "gzip; q = 0"
                // still refuses gzip, rather than counting as an unweighted (q=1) "gzip".
                $pair = \explode('=', $parameter, 2);
                if (\count($pair) === 2 && \strcasecmp(\trim($pair[0]), 'q') === 0) {
                    $value = \trim($pair[1]);
                    $q = \preg_match('/\A(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\z/', $value) === 1 ? (float) $value : 0.0;
                }
            }
            if ($coding === $wanted || ($wanted === 'gzip' && $coding === 'x-gzip')) {
                $exact = \max($exact ?? 0.0, $q);
            } elseif ($coding === '*') {
                $any = $q;
            }
        }
        return $exact ?? $any ?? 0.0;
    }

    /**
     * On the path of every response, so it is one pass: a string body below the threshold (most
     * small API answers) is decided by its length alone, the headers are read in one loop, and the
     * verdict for a media type is remembered.
     */
    private function compressible(Response $response): bool
    {
        $status = $response->status();
        if ($status < 200 || $status === 204 || $status === 206 || $status === 304) {
            return false;
        }
        $streamed = $response->isStreamed();
        $length = $streamed ? 0 : \strlen($response->body());
        if ($length !== 0 && $length < $this->options->minLength) {
            return false;
        }
        $type = null;
        $declared = null;
        foreach ($response->headerFields() as $name => $value) {
            switch (\strtolower((string) $name)) {
                case 'content-type':
                    $type = \is_array($value) ? (string) ($value[0] ?? '') : (string) $value;
                    break;
                case 'content-length':
                    $declared = \is_array($value) ? (string) ($value[0] ?? '') : (string) $value;
                    break;
                case 'cache-control':
                    if (\stripos(\is_array($value) ? \implode(',', $value) : (string) $value, 'no-transform') !== false) {
                        return false;
                    }
                    break;
                case 'content-encoding':
                case 'content-range':
                case 'transfer-encoding':
                    return false;
            }
        }
        if ($type === null || !$this->compressibleType($type)) {
            return false;
        }
        if ($streamed || $length === 0) {
            // A stream, or the head of a HEAD answer: only a declared length says how big.
            if ($declared === null) {
                return $streamed;
            }
            // A length that is not a number is the encoder's to refuse (a logged 500), not ours to drop.
            return \ctype_digit($declared) && (int) $declared >= $this->options->minLength;
        }
        return true;
    }

    /**
     * Whether a 206 is a part of what would be compressed whole: its type qualifies and the complete
     * length its Content-Range names reaches the threshold. (A multipart/byteranges answer names its
     * type per part: StaticFiles, which builds those, says Vary itself.)
     */
    private function rangeOfCompressible(Response $response): bool
    {
        $type = $response->header('content-type');
        $range = $response->header('content-range');
        if ($type === null || $range === null || $response->header('content-encoding') !== null
            || \stripos((string) $response->header('cache-control'), 'no-transform') !== false
            || !$this->compressibleType($type)) {
            return false;
        }
        if (\preg_match('#/(\d+)\s*\z#', $range, $m) === 1) {
            return (int) $m[1] >= $this->options->minLength;
        }
        return true;    // "bytes 0-99/*": the length is unknown, as a stream's is
    }

    private function compressibleType(string $contentType): bool
    {
        if (isset($this->typeVerdicts[$contentType])) {
            return $this->typeVerdicts[$contentType];
        }
        $verdict = $this->options->compresses($contentType);
        if (\count($this->typeVerdicts) >= 256) {
            $this->typeVerdicts = [];   // a bound, against applications that put ids in their types
        }
        return $this->typeVerdicts[$contentType] = $verdict;
    }

    /**
     * A 304 answers the variant the client holds. When it revalidated the gzip variant (its
     * If-None-Match has W/"x" where the layer below says "x"), the 304 carries the tag as the
     * client knows it, so a cache updates the entry it has instead of seeing a different validator.
     */
    private static function revalidated(Request $request, Response $response): Response
    {
        $etag = $response->header('etag');
        $ifNoneMatch = $request->header('if-none-match');
        if ($etag === null || $ifNoneMatch === null || \str_starts_with($etag, 'W/') || !\str_contains($ifNoneMatch, 'W/' . $etag)) {
            return $response;
        }
        return self::withVary($response->withHeader('ETag', 'W/' . $etag));
    }

    private static function withVary(Response $response): Response
    {
        $vary = $response->header('vary');
        if ($vary === null) {
            return $response->withHeader('Vary', 'Accept-Encoding');
        }
        foreach (\explode(',', $vary) as $field) {
            $field = \trim($field);
            if ($field === '*' || \strcasecmp($field, 'accept-encoding') === 0) {
                return $response;
            }
        }
        return $response->withHeader('Vary', $vary . ', Accept-Encoding');
    }

    private static function streamed(Response $response, \Closure $producer): Response
    {
        // Trailers follow the compressed body: the server writes them once the producer (and with it
        // GzipBodyWriter::finish()) has returned.
        $streamed = Response::stream($producer, $response->status(), $response->headers())->withTrailers($response->trailers() ?? []);
        return $response->hasCustomReason() ? $streamed->withStatus($response->status(), $response->reason()) : $streamed;
    }
}
