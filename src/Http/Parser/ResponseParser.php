<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

use Weft\Http\Message\HeaderBlock;

/**
 * Incremental HTTP/1.x response parser for Weft's HTTP client; same shape as RequestParser.
 *
 * The caller tells next() which request method the response answers (HEAD and CONNECT change the
 * framing) and calls finish() when the server closed the connection, which completes a body
 * delimited by the close. Interim 1xx responses are returned like any other: skip them with
 * ParsedResponse::isInformational() and call next() again. After a 101 the bytes that follow
 * are another protocol's; this parser is done with the connection.
 * Errors carry status 400 (malformed), 413 (body over the limit) or 431 (head over the limit);
 * for a client they all mean "bad gateway".
 */
final class ResponseParser
{
    private const BODY_NONE = 0;
    private const BODY_LENGTH = 1;
    private const BODY_CHUNKED = 2;
    private const BODY_UNTIL_CLOSE = 3;

    private readonly Limits $limits;
    private readonly string $headPattern;

    private string $buffer = '';
    private int $offset = 0;
    private int $scanFrom = 0;

    /** @var array{0: int, 1: string, 2: string, 3: string}|null status, reason, version, header block */
    private ?array $pending = null;
    private int $mode = self::BODY_NONE;
    private int $bodyLength = 0;
    private ?ChunkedDecoder $chunked = null;
    private bool $finished = false;
    private ?HttpError $error = null;

    public function __construct(?Limits $limits = null)
    {
        $this->limits = $limits ?? new Limits();
        $this->headPattern = '/\GHTTP\/(1\.[01]) ([1-5][0-9][0-9])(?: ([^\r\n]*+))?('
            . Syntax::fields($this->limits->maxHeaderCount) . ')\r\n\r\n/';
    }

    public function push(string $bytes): void
    {
        if ($this->finished) {
            throw new \LogicException('push() after finish()');
        }
        if ($this->error !== null) {
            return;
        }
        if ($this->offset === 0) {
            $this->buffer .= $bytes;
            return;
        }
        $this->buffer = substr($this->buffer, $this->offset) . $bytes;
        $this->scanFrom = max(0, $this->scanFrom - $this->offset);
        $this->offset = 0;
    }

    /**
     * The next complete response, or null when more bytes (or finish()) are needed.
     *
     * @param string $requestMethod the method of the request this response answers
     * @throws HttpError
     */
    public function next(string $requestMethod = 'GET'): ?ParsedResponse
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        try {
            if ($this->pending === null && !$this->readHead($requestMethod)) {
                return null;
            }
            return $this->readBody(false);
        } catch (HttpError $e) {
            $this->fail($e);
        }
    }

    /**
     * The peer closed the connection. Completes a response whose body runs until the close;
     * returns null when nothing was in progress.
     *
     * @throws HttpError when the close cut a message short
     */
    public function finish(): ?ParsedResponse
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        $this->finished = true;
        try {
            if ($this->pending !== null) {
                $response = $this->readBody(true);
                if ($response === null) {
                    throw HttpError::truncated();
                }
                return $response;
            }
            if (\strlen($this->buffer) > $this->offset) {
                throw HttpError::truncated();
            }
            return null;
        } catch (HttpError $e) {
            $this->fail($e);
        }
    }

    public function hasPartial(): bool
    {
        return $this->pending !== null || \strlen($this->buffer) > $this->offset;
    }

    public function bufferedBytes(): int
    {
        return \strlen($this->buffer) - $this->offset + ($this->chunked?->bodyBytes() ?? 0);
    }

    private function readHead(string $requestMethod): bool
    {
        $buffer = $this->buffer;
        $offset = $this->offset;
        $end = strpos($buffer, "\r\n\r\n", $this->scanFrom);
        if ($end === false) {
            Syntax::checkHead($buffer, $offset, null, $this->limits, false);
            $this->scanFrom = max($offset, \strlen($buffer) - 3);
            return false;
        }
        Syntax::checkHead($buffer, $offset, $end, $this->limits, false);
        if (preg_match($this->headPattern, $buffer, $m, 0, $offset) !== 1 || str_contains($m[0], "\0")) {
            throw $this->diagnose(substr($buffer, $offset, $end - $offset));
        }
        $status = (int) $m[2];
        $block = $m[4];
        $this->pending = [$status, $m[3], $m[1], $block];
        $this->offset = $end + 4;
        $this->scanFrom = $this->offset;

        // RFC 9112 §6.3, in its order.
        if ($requestMethod === 'HEAD' || $status < 200 || $status === 204 || $status === 304
            || ($requestMethod === 'CONNECT' && $status < 300)) {
            $this->mode = self::BODY_NONE;
            return true;
        }
        $codings = HeaderBlock::values($block, 'transfer-encoding');
        if ($codings !== []) {
            $all = Syntax::codings($codings);
            if ($all !== [] && end($all) === 'chunked') {
                $this->mode = self::BODY_CHUNKED;
                $this->chunked = new ChunkedDecoder($this->limits);
            } else {
                $this->mode = self::BODY_UNTIL_CLOSE;
            }
            return true;
        }
        $lengths = HeaderBlock::values($block, 'content-length');
        if ($lengths !== []) {
            $this->bodyLength = Syntax::contentLength($lengths);
            if ($this->bodyLength > $this->limits->maxBodyBytes) {
                throw HttpError::bodyTooLarge($this->limits->maxBodyBytes);
            }
            $this->mode = self::BODY_LENGTH;
            return true;
        }
        $this->mode = self::BODY_UNTIL_CLOSE;
        return true;
    }

    private function readBody(bool $closed): ?ParsedResponse
    {
        $trailers = '';
        switch ($this->mode) {
            case self::BODY_NONE:
                $body = '';
                break;
            case self::BODY_LENGTH:
                if (\strlen($this->buffer) - $this->offset < $this->bodyLength) {
                    return null;
                }
                $body = substr($this->buffer, $this->offset, $this->bodyLength);
                $this->offset += $this->bodyLength;
                break;
            case self::BODY_CHUNKED:
                $offset = $this->offset;
                $done = $this->chunked->decode($this->buffer, $offset);
                $this->offset = $offset;
                if (!$done) {
                    return null;
                }
                $body = $this->chunked->body();
                $trailers = $this->chunked->trailerBlock();
                $this->chunked = null;
                break;
            default:
                if (\strlen($this->buffer) - $this->offset > $this->limits->maxBodyBytes) {
                    throw HttpError::bodyTooLarge($this->limits->maxBodyBytes);
                }
                if (!$closed) {
                    return null;
                }
                $body = (string) substr($this->buffer, $this->offset);
                $this->offset = \strlen($this->buffer);
        }
        [$status, $reason, $version, $block] = $this->pending;
        $this->pending = null;
        if ($this->offset === \strlen($this->buffer)) {
            $this->buffer = '';
            $this->offset = 0;
        }
        $this->scanFrom = $this->offset;
        return new ParsedResponse($status, $reason, $version, $block, $body, $trailers);
    }

    private function diagnose(string $head): HttpError
    {
        if (Syntax::hasBareLf($head, 0, \strlen($head))) {
            return Syntax::bareLf();
        }
        $lines = explode("\r\n", $head);
        $statusLine = array_shift($lines);
        if (preg_match('/\AHTTP\/[0-9]\.[0-9] /', $statusLine) === 1 && !str_starts_with($statusLine, 'HTTP/1.')) {
            return HttpError::versionNotSupported();
        }
        if (preg_match('/\AHTTP\/1\.[01] [1-5][0-9][0-9](?: [^\r\n\x00]*+)?\z/', $statusLine) !== 1) {
            return HttpError::badRequest('Malformed status line');
        }
        return Syntax::diagnoseFields($lines, $this->limits->maxHeaderCount);
    }

    private function fail(HttpError $e): never
    {
        $this->error = $e;
        $this->buffer = '';
        $this->offset = 0;
        $this->pending = null;
        $this->chunked = null;
        throw $e;
    }
}
