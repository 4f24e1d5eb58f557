<?php

declare(strict_types=1);

namespace Weft\Http\Psr;

use Nyholm\Psr7\Factory\Psr17Factory;
use Nyholm\Psr7\ServerRequest;
use Nyholm\Psr7\Uri;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Message\StreamInterface;
use Psr\Http\Message\UploadedFileInterface;
use Weft\Http\Message\BadRequest;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ServerVariables;
use Weft\Http\Message\UploadedFile;

/**
 * Converts between Weft's messages and PSR-7 (nyholm/psr7), so PSR-15 handlers run unchanged.
 *
 * Requests: the parsed body is the form for urlencoded and multipart bodies and the decoded JSON
 * (arrays) for application/json and +json types, decoded when the application first asks for it
 * (LazyBodyServerRequest). A broken body of those types throws BadRequest from getParsedBody() or
 * getUploadedFiles(), where a middleware can catch it and answer in its own format; uncaught, the
 * server answers 400. Server params mirror what PHP-FPM would give ($_SERVER-style HTTP_* keys
 * included).
 * Responses: a body of known size up to $bufferLimit becomes a string; anything larger or of
 * unknown size is streamed from the PSR stream. Transfer-Encoding from a PSR response is dropped:
 * a PSR-7 body is the payload, never pre-encoded, and the encoder picks the framing.
 */
final class PsrBridge
{
    public const DEFAULT_BUFFER_LIMIT = 1024 * 1024;
    private const STREAM_CHUNK = 65536;

    private readonly Psr17Factory $factory;

    /**
     * @param array<string, mixed> $serverParams added to every request's server params (SERVER_PORT,
     *        SERVER_SOFTWARE, ...); per-request values win
     */
    public function __construct(
        ?Psr17Factory $factory = null,
        private readonly array $serverParams = [],
        private readonly int $bufferLimit = self::DEFAULT_BUFFER_LIMIT,
    ) {
        $this->factory = $factory ?? new Psr17Factory();
    }

    public function toServerRequest(Request $request): ServerRequestInterface
    {
        $headers = $request->headers();
        // Built with nyholm's constructor rather than the PSR-17 factory plus one withHeader()
        // clone per field: one object instead of a dozen on every request.
        $psr = new ServerRequest(
            $request->method(),
            $this->uri($request),
            $headers,
            $this->factory->createStream($request->body()),
            $request->version(),
            ServerVariables::of($request, $headers, microtime(true)) + $this->serverParams,
        );
        $psr = $psr->withQueryParams($request->query())->withCookieParams($request->cookies());
        foreach ($request->attributes() as $name => $value) {
            $psr = $psr->withAttribute($name, $value);
        }
        return new LazyBodyServerRequest($psr, $request, $this);
    }

    /**
     * The PSR-7 parsed body of a request: the form for urlencoded and multipart bodies, the decoded
     * JSON (when it is an object or array) for application/json and +json types, else null.
     *
     * @throws BadRequest when such a body cannot be decoded
     * @return array<array-key, mixed>|null
     */
    public function parsedBody(Request $request): ?array
    {
        $type = $request->contentType();
        if ($type === 'application/x-www-form-urlencoded' || $type === 'multipart/form-data') {
            return $request->form();
        }
        if ($type === 'application/json' || str_ends_with($type, '+json')) {
            $data = $request->json();
            return \is_array($data) ? $data : null;
        }
        return null;
    }

    /**
     * @throws BadRequest when a multipart body cannot be decoded
     * @return array<array-key, mixed>
     */
    public function uploadedFilesOf(Request $request): array
    {
        return $request->contentType() === 'multipart/form-data' ? $this->uploadedFiles($request->files()) : [];
    }

    public function fromPsrResponse(ResponseInterface $response): Response
    {
        $status = $response->getStatusCode();
        $reason = $response->getReasonPhrase();
        if ($reason === (Response::REASONS[$status] ?? '')) {
            $reason = '';
        }
        $headers = [];
        foreach ($response->getHeaders() as $name => $values) {
            if (strcasecmp((string) $name, 'transfer-encoding') !== 0) {
                $headers[(string) $name] = $values;
            }
        }

        $body = $response->getBody();
        $size = $body->getSize();
        if ($size !== null && $size <= $this->bufferLimit) {
            if ($body->isSeekable()) {
                $body->rewind();
            }
            return new Response($status, $headers, $body->getContents(), $reason);
        }

        $streamed = Response::stream(static function (BodyWriter $writer) use ($body): void {
            self::copy($body, $writer);
        }, $status, $headers);
        if ($size !== null && !$streamed->hasHeader('content-length')) {
            $streamed = $streamed->withHeader('Content-Length', (string) $size);
        }
        return $reason === '' ? $streamed : $streamed->withStatus($status, $reason);
    }

    private static function copy(StreamInterface $body, BodyWriter $writer): void
    {
        try {
            if ($body->isSeekable()) {
                $body->rewind();
            }
            while (!$body->eof()) {
                $chunk = $body->read(self::STREAM_CHUNK);
                if ($chunk === '') {
                    // eof() can lag one read behind on some streams; an empty read means done.
                    break;
                }
                $writer->write($chunk);
            }
        } finally {
            $body->close();
        }
    }

    private function uri(Request $request): Uri
    {
        $target = $request->target();
        if (!str_starts_with($target, '/') && str_contains($target, '://')) {
            try {
                return new Uri($target);
            } catch (\InvalidArgumentException) {
                // fall through to the components
            }
        }
        $host = $request->header('host');
        if ($host !== null && $host !== '' && str_starts_with($target, '/')) {
            try {
                return new Uri($request->scheme() . '://' . $host . $target);
            } catch (\InvalidArgumentException) {
                // an unparsable Host: keep path and query only
            }
        }
        $path = $request->path();
        $uri = new Uri();
        return $uri->withPath($path === '*' ? '' : $path)->withQuery($request->queryString());
    }

    /**
     * @param array<array-key, mixed> $files
     * @return array<array-key, mixed>
     */
    private function uploadedFiles(array $files): array
    {
        $result = [];
        foreach ($files as $key => $file) {
            $result[$key] = $file instanceof UploadedFile ? $this->uploadedFile($file) : $this->uploadedFiles($file);
        }
        return $result;
    }

    private function uploadedFile(UploadedFile $file): UploadedFileInterface
    {
        return $this->factory->createUploadedFile(
            $this->factory->createStream($file->contents),
            $file->size,
            $file->isEmpty() ? UPLOAD_ERR_NO_FILE : UPLOAD_ERR_OK,
            $file->clientFilename,
            $file->clientMediaType,
        );
    }
}
