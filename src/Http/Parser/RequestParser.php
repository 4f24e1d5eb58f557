<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

use Weft\Http\Message\HeaderBlock;
use Weft\Http\Message\Request;

/**
 * Incremental HTTP/1.0 and HTTP/1.1 request parser: bytes in, Requests out. No I/O, no clock.
 *
 * One per connection. push() what the socket gave, then call next() until it returns null
 * (pipelined requests come out one by one). A request split at any byte boundary parses exactly
 * as if it had arrived at once, including which error it fails with.
 *
 * Hot path (a complete head without body): one strpos for the end of the head, one anchored
 * regex that validates the request line and every field line and captures the raw header block,
 * a few stripos for the framing fields, and a Request that keeps that block raw.
 *
 * Decisions: lines must end with CRLF (a bare LF is a 400, like RFC 9112 permits: it removes a
 * request-smuggling ambiguity between servers that differ on it); obs-fold is a 400; empty lines
 * before a request line are skipped (RFC 9112 §2.2); an HTTP/1.1 request needs exactly one Host;
 * Transfer-Encoding must be exactly "chunked" and is refused in HTTP/1.0 requests; CONNECT, the
 * asterisk-form, userinfo in the target and dot-segments above the root are 400 (Syntax::targetError).
 * A head fails at its first offending line: a bad request line, or a duplicate or invalid Host,
 * Content-Length or Transfer-Encoding, is refused as soon as that line is complete (HeadScanner).
 *
 * Native fast path: with the weft extension loaded, a complete head is first offered to
 * Weft\Ext\parseHead() (ext/weft_http.c), which accepts exactly the heads this class accepts and returns
 * the same parts, or false; on false the PHP code below runs as if the native path did not exist, so every
 * error is named here. WEFT_NATIVE_HTTP=0 in the environment (or useNativeHead(false)) turns it off.
 */
final class RequestParser
{
    private readonly Limits $limits;
    private readonly string $headPattern;

    private string $buffer = '';
    /** Start of the unconsumed bytes in $buffer; push() drops the consumed prefix. */
    private int $offset = 0;
    /** Where the search for the end of the head resumes, so no byte is scanned twice. */
    private int $scanFrom = 0;

    /** @var array{0: string, 1: string, 2: string, 3: string}|null method, target, header block, version of a request whose body is incomplete */
    private ?array $pending = null;
    private int $bodyLength = 0;
    private ?ChunkedDecoder $chunked = null;
    private bool $continueDue = false;
    private ?HttpError $error = null;
    /** @var array{0: string, 1: string, 2: string}|null method, target, version of the request that failed, if its line was read */
    private ?array $failedLine = null;
    /**
     * Judges an incomplete head byte by byte, so that it fails at its first invalid byte. Made when a head
     * is first judged incomplete and dropped when that head is consumed: the usual head, complete in one
     * read, never needs one, and an idle connection holds none.
     */
    private ?HeadScanner $scanner = null;
    /** How much of a head the scanner judges early: below every size limit, so that it never outranks one. */
    private readonly int $earlyBytes;
    /** Whether the scanner holds state for the current head (dropped only then: the hot path never uses it). */
    private bool $scanning = false;
    /** @var array<int, string> the head pattern per header count limit: one string for all parsers, not one each */
    private static array $headPatterns = [];
    /** A request line alone (sameFields()). */
    private const LINE = '/\G(' . HeaderBlock::TOKEN . '++) ([^\x00-\x20\x7f]++) HTTP\/(1\.[01])\r\n/';
    /**
     * The field lines of the last head this worker's PHP parser accepted whole (valid fields, one valid
     * Host, no framing field: a request without a body, in either version), and the header count limit
     * they were checked under (-1: none yet). A client sends the same field lines again and again on its
     * connection, as a crowd of the same clients does on theirs: such a head needs only its request line
     * checked (see sameFields()).
     */
    private static string $acceptedFields = '';
    private static int $acceptedUnder = -1;
    /** Whether this parser offers complete heads to Weft\Ext\parseHead() first. */
    private readonly bool $native;
    /** Whether it offers them to Weft\Ext\parseRequest(), which answers the usual one with its Request. */
    private readonly bool $nativeBuilds;
    /** Whether new parsers use the native fast path; null until first asked (then: from the environment). */
    private static ?bool $nativeHead = null;
    /**
     * Whether the native path answers the usual request with a ready Request (Weft\Ext\parseRequest(),
     * after Weft\Ext\checkRequestLayout() accepted the class); null until first asked.
     */
    private static ?bool $nativeRequest = null;

    /**
     * @param string|null $remoteAddress the peer's IP, stamped on every request of this connection
     * @param bool|null $native whether to use the extension's head parser (null: nativeHead(); true is
     *        ignored without the extension)
     */
    public function __construct(?Limits $limits = null, private readonly ?string $remoteAddress = null, ?bool $native = null)
    {
        $this->limits = $limits ?? new Limits();
        $this->earlyBytes = min($this->limits->maxHeaderBytes, $this->limits->maxTargetBytes);
        $this->native = $native === null ? self::nativeHead() : $native && \function_exists('Weft\Ext\parseHead');
        $this->nativeBuilds = $this->native && self::nativeRequest();
        $this->headPattern = self::$headPatterns[$this->limits->maxHeaderCount] ??= '/\G(' . HeaderBlock::TOKEN
            . '++) ([^\x00-\x20\x7f]++) HTTP\/(1\.[01])(' . Syntax::fields($this->limits->maxHeaderCount) . ')\r\n\r\n/';
    }

    /**
     * Whether parsers created from now on use the extension's head parser: by default when the extension
     * is loaded and WEFT_NATIVE_HTTP is not "0". Tests and benchmarks switch it to run both paths in one
     * process; asking for it without the extension leaves it off.
     */
    public static function useNativeHead(bool $on): void
    {
        self::$nativeHead = $on && \function_exists('Weft\Ext\parseHead');
    }

    public static function nativeHead(): bool
    {
        return self::$nativeHead ??= \function_exists('Weft\Ext\parseHead') && getenv('WEFT_NATIVE_HTTP') !== '0';
    }

    /**
     * Whether new parsers' usual requests can be built by the extension (Weft\Ext\Conn::frameRequests()
     * then frames them as they are read: the native head parser on, and the layout check passed).
     */
    public static function buildsRequests(): bool
    {
        return self::nativeHead() && self::nativeRequest();
    }

    /**
     * Whether the extension builds the Request of a usual head itself: asked once per process, when the
     * extension checks the layout of Request it relies on. A failed check is said in the log (stderr, which
     * the master logs) and the parser builds every Request in PHP.
     */
    private static function nativeRequest(): bool
    {
        if (self::$nativeRequest === null) {
            self::$nativeRequest = false;
            if (\function_exists('Weft\Ext\checkRequestLayout')) {
                $problem = \Weft\Ext\checkRequestLayout(Request::class);
                if ($problem !== null) {
                    \error_log("weft: the extension does not build requests itself ({$problem}); PHP builds them");
                }
                self::$nativeRequest = $problem === null;
            }
        }
        return self::$nativeRequest;
    }

    public function push(string $bytes): void
    {
        if ($this->error !== null) {
            return; // the connection is being closed; keep nothing
        }
        if ($this->offset === 0) {
            $this->buffer .= $bytes;
            return;
        }
        // Copy only the unconsumed tail, once per push: a body that is still arriving sits at
        // offset 0 afterwards and grows by appending.
        $this->buffer = substr($this->buffer, $this->offset) . $bytes;
        $this->scanFrom = max(0, $this->scanFrom - $this->offset);
        $this->offset = 0;
    }

    /**
     * The next complete request, or null when more bytes are needed. No declared return type (nor on
     * nextHead()): a class type is checked on every return through zend_check_user_type_slow, twice a
     * request on the pure-PHP path.
     *
     * @return ?Request
     * @throws HttpError on invalid input; the same error again on every later call
     */
    public function next()
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        if ($this->pending === null && $this->offset === \strlen($this->buffer)) {
            return null; // nothing buffered: the usual call after a batch's last request
        }
        try {
            return $this->pending === null ? $this->nextHead() : $this->nextBody();
        } catch (HttpError $e) {
            $this->error = $e;
            $this->failedLine = $this->pendingLine() ?? self::requestLine($this->buffer, $this->offset);
            $this->buffer = '';
            $this->offset = 0;
            $this->pending = null;
            $this->chunked = null;
            throw $e;
        }
    }

    /**
     * The request line of the request that failed (an access log's "GET /x HTTP/1.1" for a 400 or 413),
     * when it was read; null when the bytes never made one.
     *
     * @return array{0: string, 1: string, 2: string}|null method, target, version
     */
    public function failedLine(): ?array
    {
        return $this->failedLine;
    }

    /** @return array{0: string, 1: string, 2: string}|null the line of a request whose body is still arriving */
    public function pendingLine(): ?array
    {
        return $this->pending === null ? null : [$this->pending[0], $this->pending[1], $this->pending[3]];
    }

    /** The request line at the start of a head still arriving, when it is complete and well-formed. */
    public function partialLine(): ?array
    {
        return self::requestLine($this->buffer, $this->offset);
    }

    /** Only on the error path: a well-formed request line at the start of what was not consumed, if any. */
    private static function requestLine(string $buffer, int $offset): ?array
    {
        if (\preg_match('/\G(?:\r\n)*([!#$%&\'*+.^_`|~0-9A-Za-z-]{1,32}) ([^\x00-\x20\x7f]{1,8192}) HTTP\/(1\.[01])\r?\n/', $buffer, $m, 0, $offset) === 1) {
            return [$m[1], $m[2], $m[3]];
        }
        return null;
    }

    /**
     * True once per request whose head carried "Expect: 100-continue" (HTTP/1.1) while its body is
     * still incomplete: the server should then write ResponseEncoder::CONTINUE. Ask after next()
     * returned null. A body over the limit fails in next() first (413), so the client is never
     * invited to send it.
     */
    public function needsContinue(): bool
    {
        if ($this->continueDue) {
            $this->continueDue = false;
            return true;
        }
        return false;
    }

    /** Bytes of an unfinished request are held: the server's header/body timeout applies, not the idle one. */
    public function hasPartial(): bool
    {
        return $this->pending !== null || \strlen($this->buffer) > $this->offset;
    }

    /**
     * Whether this parser holds nothing at all: no byte, no request under way, no error and no interim
     * answer owed. Such a parser is interchangeable with a new one (HttpSession drops it while idle).
     */
    public function isEmpty(): bool
    {
        return $this->offset === \strlen($this->buffer) && $this->pending === null && $this->error === null
            && !$this->continueDue && !$this->scanning;
    }

    /**
     * The current request's head is complete and its body is still arriving: a body only has to keep
     * moving (idle timeout), where a head must be complete within the header timeout.
     */
    public function inBody(): bool
    {
        return $this->pending !== null;
    }

    /** Unconsumed raw bytes plus the decoded part of a chunked body in progress. */
    public function bufferedBytes(): int
    {
        return \strlen($this->buffer) - $this->offset + ($this->chunked?->bodyBytes() ?? 0);
    }

    /** Hands over the unconsumed bytes (what follows a protocol upgrade's request) and forgets them. */
    public function takeBuffered(): string
    {
        $rest = (string) substr($this->buffer, $this->offset);
        $this->buffer = '';
        $this->offset = 0;
        $this->scanFrom = 0;
        return $rest;
    }

    /** @return ?Request */
    private function nextHead()
    {
        $buffer = $this->buffer;
        $offset = $this->offset;
        if ($offset === \strlen($buffer)) {
            // Nothing buffered: the usual call after a batch's last request (consumedTo() emptied it).
            return null;
        }
        if (isset($buffer[$offset]) && $buffer[$offset] === "\r") {
            while (substr($buffer, $offset, 2) === "\r\n") {
                $offset += 2;
            }
            $this->consumedTo($offset);
            if ($this->buffer === '') {
                return null;
            }
        }

        if ($this->native) {
            $limits = $this->limits;
            if ($this->nativeBuilds) {
                $head = \Weft\Ext\parseRequest($buffer, $offset, $this->scanFrom, $limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet, $this->remoteAddress);
                if ($head instanceof Request) {
                    // The head was the whole rest of the buffer (consumedTo() its end).
                    if ($this->scanning) {
                        $this->scanner = null;
                        $this->scanning = false;
                    }
                    $this->buffer = '';
                    $this->offset = 0;
                    $this->scanFrom = 0;
                    return $head;
                }
            } else {
                $head = \Weft\Ext\parseHead($buffer, $offset, $this->scanFrom, $limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet);
            }
            if ($head !== false) {
                [$method, $target, $version, $block, $next, $framing] = $head;
                if ($framing) {
                    try {
                        return $this->startBody($method, $target, $block, $version, $next);
                    } catch (HttpError $e) {
                        throw $this->firstError($buffer, $offset, $next) ?? $e;
                    }
                }
                $this->consumedTo($next);
                return new Request($method, $target, $block, '', $version, $this->remoteAddress);
            }
            // Incomplete or refused: the reference path below finds the same end and names the error.
        }

        $end = strpos($buffer, "\r\n\r\n", $this->scanFrom);
        $length = \strlen($buffer);
        if ($end === false) {
            // A lone CR may be the start of an empty line before the request line: wait for its LF.
            if ($offset < $length && !($buffer[$offset] === "\r" && $offset + 1 === $length)) {
                // The first invalid byte within the limits fails the head now; no size error can be
                // certain that early, so the order of errors is the same however the bytes are split.
                $this->scanning = true;
                $error = ($this->scanner ??= new HeadScanner($this->limits))->scan($buffer, $offset, min($length, $offset + $this->earlyBytes));
                if ($error !== null) {
                    throw $error;
                }
            }
            Syntax::checkHead($buffer, $offset, null, $this->limits, true);
            $this->scanFrom = max($offset, $length - 3);
            return null;
        }
        // A complete head within both size limits passes checkHead() untouched: asked only beyond them.
        if ($end + 4 - $offset > $this->earlyBytes) {
            try {
                Syntax::checkHead($buffer, $offset, $end, $this->limits, true);
            } catch (HttpError $tooLarge) {
                // As above: an invalid byte within the first bytes outranks a size limit.
                $this->scanning = true;
                throw ($this->scanner ??= new HeadScanner($this->limits))->scan($buffer, $offset, min($end + 4, $offset + $this->earlyBytes)) ?? $tooLarge;
            }
        }
        if (self::$acceptedUnder === $this->limits->maxHeaderCount && ($request = $this->sameFields($buffer, $offset, $end)) !== null) {
            return $request;
        }
        if (preg_match($this->headPattern, $buffer, $m, 0, $offset) !== 1 || str_contains($m[4], "\0")) {
            throw $this->diagnose(substr($buffer, $offset, $end + 4 - $offset));
        }
        [, $method, $target, $version, $block] = $m;
        if (!isset($this->limits->methodSet[$method])) {
            throw HeadScanner::unknownMethod($method);
        }
        if (($target[0] !== '/' || $method === 'CONNECT' || str_contains($target, '/.') || str_contains($target, '%'))
            && ($error = Syntax::targetError($method, $target)) !== null) {
            throw $error;
        }
        $next = $end + 4;
        try {
            // Host (RFC 9112 §3.2): exactly one in HTTP/1.1, at most one in HTTP/1.0, and a valid one.
            $host = stripos($block, "\r\nhost:");
            if ($host === false) {
                if ($version === '1.1') {
                    throw HttpError::badRequest('An HTTP/1.1 request needs exactly one Host header');
                }
            } elseif (stripos($block, "\r\nhost:", $host + 7) !== false) {
                throw HttpError::badRequest('More than one Host header');
            } elseif (preg_match(Syntax::HOST_VALUE, $block, $unused, 0, $host + 7) !== 1) {
                throw HttpError::badRequest('Invalid Host header');
            }
            if ($block !== '' && (stripos($block, "\r\ncontent-length:") !== false || stripos($block, "\r\ntransfer-encoding:") !== false)) {
                return $this->startBody($method, $target, $block, $version, $next);
            }
        } catch (HttpError $e) {
            throw $this->firstError($buffer, $offset, $next) ?? $e;
        }
        if ($host !== false) {
            self::$acceptedFields = $block;
            self::$acceptedUnder = $this->limits->maxHeaderCount;
        }
        $this->consumedTo($next);
        return new Request($method, $target, $block, '', $version, $this->remoteAddress);
    }

    /**
     * The request of a complete head (its end at $end, its sizes checked) whose field lines are the same
     * bytes as the last accepted ones ($acceptedFields, checked under the same header count limit): its
     * request line is checked as the head pattern would, and nothing else can differ from what was
     * accepted then (the fields, their Host, that no body follows). Null when the line or the fields
     * differ: then the head is parsed as always, errors and all. For the usual request this replaces the
     * whole head's pattern, the Host pattern and four stripos() (~1,500 instructions, callgrind).
     */
    private function sameFields(string $buffer, int $offset, int $end): ?Request
    {
        $fields = self::$acceptedFields;
        $length = \strlen($fields);
        if (preg_match(self::LINE, $buffer, $m, 0, $offset) !== 1) {
            return null;
        }
        $start = $offset + \strlen($m[0]) - 2; // the request line's CRLF opens the field lines
        if ($end - $start !== $length || substr_compare($buffer, $fields, $start, $length) !== 0) {
            return null;
        }
        [, $method, $target, $version] = $m;
        if (!isset($this->limits->methodSet[$method])
            || (($target[0] !== '/' || $method === 'CONNECT' || str_contains($target, '/.') || str_contains($target, '%'))
                && Syntax::targetError($method, $target) !== null)) {
            return null; // the usual path names the error
        }
        $this->consumedTo($end + 4);
        return new Request($method, $target, $fields, '', $version, $this->remoteAddress);
    }

    private function startBody(string $method, string $target, string $block, string $version, int $bodyStart): ?Request
    {
        $codings = Syntax::rawValues($block, 'transfer-encoding');
        $lengths = Syntax::rawValues($block, 'content-length');
        if ($codings !== []) {
            // Both present is the classic request-smuggling vector: refuse rather than pick one.
            if ($lengths !== []) {
                throw HttpError::badRequest('Both Content-Length and Transfer-Encoding');
            }
            if ($version === '1.0') {
                throw HttpError::badRequest('Transfer-Encoding in an HTTP/1.0 request');
            }
            Syntax::requireRequestChunked($codings);
            $this->chunked = new ChunkedDecoder($this->limits);
        } else {
            $this->bodyLength = Syntax::requestContentLength($lengths);
            if ($this->bodyLength > $this->limits->maxBodyBytes) {
                throw HttpError::bodyTooLarge($this->limits->maxBodyBytes);
            }
        }
        $this->pending = [$method, $target, $block, $version];
        $this->offset = $bodyStart;
        $this->scanFrom = $bodyStart;
        $request = $this->nextBody();
        if ($request === null && $version === '1.1') {
            $expect = HeaderBlock::get($block, 'expect');
            $this->continueDue = $expect !== null && strtolower($expect) === '100-continue';
        }
        return $request;
    }

    private function nextBody(): ?Request
    {
        if ($this->chunked !== null) {
            $offset = $this->offset;
            $done = $this->chunked->decode($this->buffer, $offset);
            $this->offset = $offset;
            if (!$done) {
                return null;
            }
            $body = $this->chunked->body();
            $trailers = $this->chunked->trailerBlock();
            $this->chunked = null;
        } else {
            if (\strlen($this->buffer) - $this->offset < $this->bodyLength) {
                return null;
            }
            $body = $this->bodyLength === 0 ? '' : substr($this->buffer, $this->offset, $this->bodyLength);
            $this->offset += $this->bodyLength;
            $trailers = '';
        }
        [$method, $target, $block, $version] = $this->pending;
        $this->pending = null;
        $this->continueDue = false;
        $this->consumedTo($this->offset);
        return new Request($method, $target, $block, $body, $version, $this->remoteAddress, $trailers);
    }

    private function consumedTo(int $offset): void
    {
        if ($this->scanning) {
            $this->scanner = null;
            $this->scanning = false;
        }
        if ($offset === \strlen($this->buffer)) {
            $this->buffer = '';
            $offset = 0;
        }
        $this->offset = $offset;
        $this->scanFrom = $offset;
    }

    /**
     * A complete head that failed a check made on the whole head (Host, framing): the error of its first
     * offending line, as HeadScanner names it when the head arrives a line at a time, so both ways end
     * alike. Null when no line is at fault (a missing Host, an error in the body).
     */
    private function firstError(string $buffer, int $offset, int $next): ?HttpError
    {
        return (new HeadScanner($this->limits))->scan($buffer, $offset, $next);
    }

    /** The precise error for a complete head (with its CRLFCRLF) that failed the fast pattern. */
    private function diagnose(string $head): HttpError
    {
        // The first invalid byte, as the bytes would have been judged arriving one by one.
        $scanner = new HeadScanner($this->limits);
        $error = $scanner->scan($head, 0, \strlen($head));
        if ($error !== null) {
            return $error;
        }
        $head = substr($head, 0, -4);
        if (Syntax::hasBareLf($head, 0, \strlen($head))) {
            return Syntax::bareLf();
        }
        $lines = explode("\r\n", $head);
        $requestLine = array_shift($lines);
        $parts = explode(' ', $requestLine);
        if (\count($parts) !== 3) {
            return HttpError::badRequest('Malformed request line');
        }
        [$method, $target, $version] = $parts;
        if (preg_match('/\A' . HeaderBlock::TOKEN . '++\z/', $method) !== 1) {
            return HttpError::badRequest('Invalid method');
        }
        if (preg_match('/\A[^\x00-\x20\x7f]++\z/', $target) !== 1) {
            return HttpError::badRequest('Invalid request target');
        }
        if (preg_match('/\AHTTP\/[0-9]\.[0-9]\z/', $version) === 1) {
            if ($version !== 'HTTP/1.0' && $version !== 'HTTP/1.1') {
                return HttpError::versionNotSupported();
            }
        } else {
            return HttpError::badRequest('Malformed HTTP version');
        }
        return Syntax::diagnoseFields($lines, $this->limits->maxHeaderCount);
    }
}
