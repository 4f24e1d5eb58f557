<?php

declare(strict_types=1);

namespace Weft\Http\Static;

use Psr\Http\Server\RequestHandlerInterface;
use Weft\Http\Compression\Gzip;
use Weft\Http\Compression\GzipOptions;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\HeaderBlock;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Psr\PsrHandlerAdapter;

/**
 * Serves files from a document root in front of an application handler: a handler itself
 * (callable(Request): Response), so an app can wrap its own handler and the serve command can wrap
 * any app the same way.
 *
 * What it answers, and what it leaves to the application (the "next" handler):
 * - Only GET and HEAD look at the file system, and not a WebSocket handshake (a GET with
 *   Upgrade: websocket), which always goes to the application when there is one. Every other method goes to the application; without
 *   one, a path that names a file gets 405 (Allow: GET, HEAD) and anything else 404.
 * - A path that does not name a servable file goes to the application (404 without one). That
 *   includes every path this class refuses to map: a "." or ".." segment, a segment whose decoding
 *   contains "/", "\" or NUL (%2f, %5c, %00), a dotfile (unless allowed), a PHP source (.php, .phtml,
 *   .phar, .inc: a front controller's or a script's code), anything whose real path
 *   leaves the root (unless symlinks are allowed), directories without an index, devices and sockets.
 *   The path is percent-decoded exactly once, segment by segment, so "%252e%252e" is the file
 *   named "%2e%2e", never "..".
 * - A directory with an index file: "/docs/" serves "/docs/index.html"; "/docs" is redirected (301)
 *   to "/docs/" so that relative links in the page resolve. No directory listings.
 * - Conditional requests (RFC 9110 section 13): If-Match and If-Unmodified-Since (412),
 *   If-None-Match (weak comparison) and If-Modified-Since (304). The ETag is strong, "mtime-size" in hex.
 * - Range (GET only): one range gets 206 with Content-Range; suffix ranges ("bytes=-500") and open
 *   ones ("bytes=100-") included; when none of the ranges is satisfiable, 416 with
 *   "Content-Range: bytes *\/size". Several satisfiable ranges get one 206 multipart/byteranges body
 *   in the order asked, unless they are more than ByteRange::MAX_RANGES or together ask for more than
 *   the file (overlaps): then, as for a malformed header or a stale If-Range, the whole file (200).
 * - Files up to bufferLimit are read in one call; larger ones are streamed chunkSize bytes at a time
 *   behind a declared Content-Length, so a transfer holds a few chunks however big the file is
 *   (chunks shrink when many are in flight: a share of streamBudget). The next chunk is read only once
 *   the writer has room for it (the connection's bound and the worker's output budget). A file that
 *   shrinks while it is sent cuts the connection (the length is already promised).
 * - Precompressed siblings, when the gzip layer is in front ($gzip): "app.js.br" or "app.js.gz" next
 *   to "app.js", no older than it, is sent instead to a client whose Accept-Encoding takes br or gzip
 *   (the higher q-value; br on a tie), as nginx's gzip_static does: Content-Encoding, the sibling's
 *   own length, Last-Modified and a strong ETag of its own (never the identity one: "mtime-size-gz"),
 *   the original's Content-Type. Nothing is compressed, so no brotli library is needed for .br. A Range
 *   request is answered from the identity bytes (206), as for on-the-fly gzip, and the compressed
 *   variant does not say Accept-Ranges (nginx answers such a request with the whole .gz, 200). Every
 *   answer for a file that has such a sibling, or whose type and size the gzip layer compresses, says
 *   "Vary: Accept-Encoding" (206 and 304 included).
 */
final class StaticFiles
{
    private readonly StaticOptions $options;
    private readonly MimeTypes $mimeTypes;
    /** @var (\Closure(Request): mixed)|null */
    private readonly ?\Closure $next;
    /** Streamed transfers in flight in this worker, shared by their producers (see StaticOptions::$streamBudget). */
    private readonly Transfers $transfers;

    /** Sibling suffix => Content-Encoding, most preferred first when the client weighs them alike. */
    private const PRECOMPRESSED = ['br' => 'br', 'gz' => 'gzip'];

    /**
     * @param (callable(Request): mixed)|RequestHandlerInterface|null $next the application; null: 404/405
     * @param ?GzipOptions $gzip the options of the gzip layer in front of these files (null: none): turns on
     *        precompressed siblings and Vary (see the class comment)
     */
    public function __construct(
        StaticOptions|string $options,
        callable|RequestHandlerInterface|null $next = null,
        private readonly ?GzipOptions $gzip = null,
    ) {
        $this->options = \is_string($options) ? new StaticOptions($options) : $options;
        $this->mimeTypes = new MimeTypes($this->options->mimeTypes);
        $this->transfers = new Transfers();
        $this->next = match (true) {
            $next === null => null,
            $next instanceof RequestHandlerInterface => (new PsrHandlerAdapter($next))(...),
            default => $next(...),
        };
    }

    public function __invoke(Request $request): mixed
    {
        $method = $request->method();
        // A WebSocket handshake is never a file request, even on a path a file answers ("/" with an
        // index.html and the chat page's `new WebSocket('ws://' + location.host + '/')`): it is the
        // application's to upgrade.
        if ($method === 'HEAD' || ($method === 'GET' && ($this->next === null || !self::isWebSocketHandshake($request)))) {
            $response = $this->serve($request);
            if ($response !== null) {
                return $response;
            }
        }
        if ($this->next !== null) {
            return ($this->next)($request);
        }
        if ($method !== 'GET' && $method !== 'HEAD' && $this->resolve($request->path()) !== null) {
            return ErrorResponse::methodNotAllowed(['GET', 'HEAD']);
        }
        return ErrorResponse::notFound();
    }

    /** The response for a GET or HEAD of a file under the root, or null when no file answers it. */
    public function serve(Request $request): ?Response
    {
        $resolved = $this->resolve($request->path());
        if ($resolved === null) {
            return null;
        }
        if ($resolved[1] !== null) {
            $query = $request->queryString();
            return new Response(301, [
                'Location' => $resolved[1] . ($query === '' ? '' : '?' . $query),
                'Content-Type' => 'text/plain; charset=utf-8',
            ], "Moved Permanently\n");
        }
        $file = $resolved[0];
        $handle = @\fopen($file, 'rb');
        if ($handle === false) {
            return null;
        }
        $stat = \fstat($handle);
        if ($stat === false) {
            \fclose($handle);
            return null;
        }
        if ($this->gzip === null) {
            return $this->respond($request, $file, $handle, $stat['size'], $stat['mtime']);
        }
        $type = $this->mimeTypes->forPath($file);
        $siblings = $this->siblings($file, $stat['mtime']);
        $vary = $siblings !== [] || ($stat['size'] >= $this->gzip->minLength && $this->gzip->compresses($type));
        $acceptEncoding = $request->header('accept-encoding');
        if ($siblings !== [] && $acceptEncoding !== null && $request->header('range') === null) {
            $chosen = self::choose($siblings, $acceptEncoding);
            if ($chosen !== null) {
                [$encoding, $path] = $chosen;
                $compressed = @\fopen($path, 'rb');
                $compressedStat = $compressed === false ? false : \fstat($compressed);
                if ($compressedStat !== false) {
                    \fclose($handle);
                    return $this->respond($request, $file, $compressed, $compressedStat['size'], $compressedStat['mtime'], $encoding, true);
                }
                if ($compressed !== false) {
                    \fclose($compressed);
                }
            }
        }
        return $this->respond($request, $file, $handle, $stat['size'], $stat['mtime'], null, $vary);
    }

    /**
     * The precompressed siblings of a file that may be served for it: regular files no older than it,
     * under the same rules as the file itself (inside the root unless symlinks may leave it, no dotfile).
     *
     * @return array<string, string> Content-Encoding => real path
     */
    private function siblings(string $file, int $mtime): array
    {
        $found = [];
        foreach (self::PRECOMPRESSED as $suffix => $encoding) {
            $stat = @\stat("$file.$suffix");
            if ($stat === false || ($stat['mode'] & 0170000) !== 0100000 || $stat['mtime'] < $mtime) {
                continue;
            }
            $real = \realpath("$file.$suffix");
            if ($real !== false && $this->inside($real) && !$this->hidden($real)) {
                $found[$encoding] = $real;
            }
        }
        return $found;
    }

    /**
     * The sibling the client takes with the highest q-value (br first on a tie), or null.
     *
     * @param array<string, string> $siblings Content-Encoding => path
     * @return array{0: string, 1: string}|null [Content-Encoding, path]
     */
    private static function choose(array $siblings, string $acceptEncoding): ?array
    {
        $best = null;
        $bestQ = 0.0;
        foreach ($siblings as $encoding => $path) {
            $q = Gzip::quality($acceptEncoding, $encoding);
            if ($q > $bestQ) {
                $best = [$encoding, $path];
                $bestQ = $q;
            }
        }
        return $best;
    }

    /**
     * A PHP application's public/ folder holds its front controller (index.php) and at times other
     * scripts, which a web server hands to PHP, never to the client as text: their source (and what
     * it may hold, a password in a config.php) is not served, the request goes to the application.
     */
    private static function isPhpSource(string $path): bool
    {
        return \preg_match('/\.(php\d?|phtml|phar|phps|inc)$/i', $path) === 1;
    }

    /**
     * Maps a request path (raw, still percent-encoded) to a real file path under the root.
     *
     * @return array{0: string, 1: ?string}|null [real file path, redirect target or null], or null
     */
    public function resolve(string $path): ?array
    {
        if ($path === '' || $path[0] !== '/') {
            return null;
        }
        $segments = [];
        $rawSegments = [];
        foreach (\explode('/', \substr($path, 1)) as $raw) {
            if ($raw === '') {
                continue;   // "//" and the trailing "/": merged, as the file system would
            }
            $segment = \rawurldecode($raw);
            if ($segment === '.' || $segment === '..' || \strpbrk($segment, "/\\\0") !== false
                || ($segment[0] === '.' && !$this->options->dotfiles)) {
                return null;
            }
            $segments[] = $segment;
            $rawSegments[] = $raw;
        }
        $root = $this->options->root;
        $real = $segments === [] ? $root : \realpath($root . '/' . \implode('/', $segments));
        if ($real === false || !$this->inside($real)) {
            return null;
        }
        if (\is_dir($real)) {
            if ($this->options->index === null) {
                return null;
            }
            $index = \realpath($real . '/' . $this->options->index);
            if ($index === false || !\is_file($index) || !$this->inside($index) || self::isPhpSource($index) || $this->hidden($index)) {
                return null;
            }
            if (!\str_ends_with($path, '/')) {
                // Built from the kept segments, so "//evil.example" can never become a
                // protocol-relative Location.
                return [$index, '/' . \implode('/', $rawSegments) . '/'];
            }
            return [$index, null];
        }
        if (self::isPhpSource($real) || $this->hidden($real)) {
            return null;
        }
        // "/file.txt/" names a directory that is not there (ENOTDIR), as the file system would say.
        return \is_file($real) && !\str_ends_with($path, '/') ? [$real, null] : null;
    }

    /**
     * @param resource $handle the file to send: $file itself, or its precompressed sibling ($encoding)
     * @param bool $vary whether the answer depends on Accept-Encoding (see the class comment)
     */
    private function respond(Request $request, string $file, mixed $handle, int $size, int $mtime, ?string $encoding = null, bool $vary = false): Response
    {
        $etag = '"' . \dechex($mtime) . '-' . \dechex($size) . ($encoding === null ? '' : '-' . \array_search($encoding, self::PRECOMPRESSED, true)) . '"';
        $lastModified = ResponseEncoder::httpDate($mtime);
        $headers = [
            'Content-Type' => $this->mimeTypes->forPath($file),
            'Last-Modified' => $lastModified,
            'ETag' => $etag,
        ];
        // The compressed variant is sent whole: its ranges would address bytes no other answer uses.
        if ($encoding === null) {
            $headers['Accept-Ranges'] = 'bytes';
        } else {
            $headers['Content-Encoding'] = $encoding;
        }
        $varyHeader = $vary ? ['Vary' => 'Accept-Encoding'] : [];
        $headers += $varyHeader;

        $precondition = $this->preconditions($request, $etag, $mtime);
        if ($precondition !== 200) {
            \fclose($handle);
            if ($precondition === 304) {
                return new Response(304, ['Last-Modified' => $lastModified, 'ETag' => $etag] + $varyHeader);
            }
            return ErrorResponse::preconditionFailed();
        }

        $isHead = $request->method() === 'HEAD';
        $status = 200;
        // What is sent: [bytes written before, file offset, length] per piece, then $tail.
        $pieces = [['', 0, $size]];
        $tail = '';
        $range = $isHead || $encoding !== null ? null : $request->header('range');
        if ($range !== null && $this->ifRangeHolds($request, $etag, $lastModified)) {
            $ranges = ByteRange::parseSet($range, $size);
            if ($ranges === false) {
                \fclose($handle);
                $refused = ErrorResponse::rangeNotSatisfiable($size);
                return new Response(416, $refused->headers() + \array_diff_key($headers, ['Content-Type' => 1]), $refused->body());
            }
            if ($ranges !== null && \count($ranges) === 1) {
                [$offset, $length] = $ranges[0];
                $status = 206;
                $headers['Content-Range'] = 'bytes ' . $offset . '-' . ($offset + $length - 1) . '/' . $size;
                $pieces = [['', $offset, $length]];
            } elseif ($ranges !== null) {
                // Several satisfiable ranges: one multipart/byteranges body (RFC 9110 section 14.6),
                // each part with its own Content-Type and Content-Range, in the order asked.
                $status = 206;
                $boundary = \bin2hex(\random_bytes(12));
                $pieces = [];
                foreach ($ranges as $i => [$offset, $length]) {
                    $pieces[] = [
                        ($i === 0 ? '' : "\r\n") . "--$boundary\r\nContent-Type: {$headers['Content-Type']}\r\n"
                            . 'Content-Range: bytes ' . $offset . '-' . ($offset + $length - 1) . '/' . $size . "\r\n\r\n",
                        $offset,
                        $length,
                    ];
                }
                $tail = "\r\n--$boundary--\r\n";
                $headers['Content-Type'] = 'multipart/byteranges; boundary=' . $boundary;
            }
        }
        $total = \strlen($tail);
        foreach ($pieces as [$before, , $length]) {
            $total += \strlen($before) + $length;
        }

        if ($isHead) {
            \fclose($handle);
            // A string response with a declared length: the head says what a GET would send.
            return new Response($status, $headers + ['Content-Length' => (string) $total]);
        }
        if ($total <= $this->options->bufferLimit) {
            $body = '';
            foreach ($pieces as [$before, $offset, $length]) {
                $bytes = $length === 0 ? '' : \stream_get_contents($handle, $length, $offset);
                if ($bytes === false || \strlen($bytes) !== $length) {
                    \fclose($handle);
                    throw new \RuntimeException("Static file '$file' could not be read whole");
                }
                $body .= $before . $bytes;
            }
            \fclose($handle);
            return new Response($status, $headers, $body . $tail);
        }
        $transfers = $this->transfers;
        $options = $this->options;
        return Response::stream(static function ($out) use ($handle, $pieces, $tail, $file, $transfers, $options): void {
            $transfers->inFlight++;
            try {
                foreach ($pieces as [$before, $offset, $left]) {
                    if ($before !== '') {
                        $out->write($before);
                    }
                    if (\fseek($handle, $offset) !== 0) {
                        throw new \RuntimeException("Static file '$file': cannot seek to $offset");
                    }
                    while ($left > 0) {
                        // Asked for every chunk: transfers that start or end meanwhile change the share.
                        $chunk = \fread($handle, \min($transfers->chunkSize($options), $left));
                        if ($chunk === false || $chunk === '') {
                            // The head promised the length: the file shrank. Throwing cuts the
                            // connection, the only honest signal left.
                            throw new \RuntimeException("Static file '$file' ended $left bytes early (changed while being sent)");
                        }
                        $left -= \strlen($chunk);
                        // Handed over, not kept: while write() waits for room, the only reference is
                        // the connection's queue (see HttpBodyWriter::write()).
                        $out->write(self::handOver($chunk));
                    }
                }
                if ($tail !== '') {
                    $out->write($tail);
                }
            } finally {
                $transfers->inFlight--;
                \fclose($handle);
            }
        }, $status, $headers + ['Content-Length' => (string) $total]);
    }

    /** The string in $bytes, which is left empty: passed on as a temporary, its callee holds the only reference. */
    private static function handOver(string &$bytes): string
    {
        $taken = $bytes;
        $bytes = '';
        return $taken;
    }

    /** 200 (go on), 304 or 412, in the order of RFC 9110 section 13.2.2. */
    private function preconditions(Request $request, string $etag, int $mtime): int
    {
        $ifMatch = $request->header('if-match');
        if ($ifMatch !== null) {
            if (!self::etagListMatches($ifMatch, $etag, weak: false)) {
                return 412;
            }
        } else {
            $ifUnmodifiedSince = $request->header('if-unmodified-since');
            $since = $ifUnmodifiedSince === null ? null : HttpDate::parse($ifUnmodifiedSince);
            if ($since !== null && $mtime > $since) {
                return 412;
            }
        }
        $ifNoneMatch = $request->header('if-none-match');
        if ($ifNoneMatch !== null) {
            return self::etagListMatches($ifNoneMatch, $etag, weak: true) ? 304 : 200;
        }
        $ifModifiedSince = $request->header('if-modified-since');
        $since = $ifModifiedSince === null ? null : HttpDate::parse($ifModifiedSince);
        return $since !== null && $mtime <= $since ? 304 : 200;
    }

    /** If-Range: a strong ETag that matches, or exactly the Last-Modified date; otherwise the whole file. */
    private function ifRangeHolds(Request $request, string $etag, string $lastModified): bool
    {
        $ifRange = $request->header('if-range');
        if ($ifRange === null) {
            return true;
        }
        $ifRange = \trim($ifRange);
        if (\str_starts_with($ifRange, '"') || \str_starts_with($ifRange, 'W/')) {
            return $ifRange === $etag;
        }
        return HttpDate::parse($ifRange) === HttpDate::parse($lastModified);
    }

    private static function etagListMatches(string $list, string $etag, bool $weak): bool
    {
        $list = \trim($list);
        if ($list === '*') {
            return true;
        }
        // Entity tags may contain commas inside their quotes: take them by pattern, not by splitting.
        \preg_match_all('#(W/)?("[^"]*")#', $list, $matches, \PREG_SET_ORDER);
        foreach ($matches as $match) {
            if ($match[1] !== '' && !$weak) {
                continue;   // a weak tag never matches strongly
            }
            if ($match[2] === $etag) {
                return true;
            }
        }
        return false;
    }

    private static function isWebSocketHandshake(Request $request): bool
    {
        $upgrade = $request->header('upgrade');
        return $upgrade !== null && HeaderBlock::listHas($upgrade, 'websocket');
    }

    /**
     * Whether a resolved path is a dotfile or lies in a dot directory: a symlink with a plain name
     * ("link-to-dotenv -> .env", "assets -> .git") must not serve what the name itself may not. The
     * segments below the root are checked (the root itself may well sit under a dot directory); a path
     * outside it (--static-symlinks) is checked whole.
     */
    private function hidden(string $real): bool
    {
        if ($this->options->dotfiles) {
            return false;
        }
        $root = $this->options->root;
        $prefix = $root === '/' ? '/' : $root . '/';
        $below = \str_starts_with($real, $prefix) ? \substr($real, \strlen($prefix)) : $real;
        return \str_starts_with($below, '.') || \str_contains($below, '/.');
    }

    private function inside(string $real): bool
    {
        if ($this->options->followSymlinks) {
            return true;
        }
        $root = $this->options->root;
        return $real === $root || \str_starts_with($real, $root === '/' ? '/' : $root . '/');
    }
}
