<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Coroutine\TooManyCoroutines;
use Weft\Http\Message\BodyFraming;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\HeaderField;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\RequestParser;
use Weft\Server\Abandonable;
use Weft\Server\CodeDeadline;
use Weft\Server\Connection;
use Weft\Server\Dispatcher;
use Weft\Server\ReceiveBudget;
use Weft\Server\Session;
use Weft\Socket\ConnectionClosed;

/**
 * One HTTP/1.1 connection: keep-alive, pipelining (answers in order: one request in the application at
 * a time per connection), 100-continue. Parsing is pure (RequestParser), encoding too (ResponseEncoder);
 * reading, writing and timers belong to the Connection.
 *
 * The shape: read what has arrived, parse every complete request, answer each into the connection's
 * output, write that once. A request whose handler suspends holds the connection's later requests until
 * it is answered.
 *
 * @internal
 */
final class HttpSession implements Session, Abandonable
{
    /** While a request runs, at most this much of the requests behind it is read ahead. */
    private const READ_AHEAD = 65536;
    /** A string body beyond this is queued as a piece of its own rather than copied behind its head. */
    private const SEPARATE_BODY = 65536;
    /** abandon()'s 503, whole: what the extension writes when PHP cannot (no Date: optional on a 5xx). */
    private const LAST_WORDS_HEAD = "HTTP/1.1 503 Service Unavailable\r\nServer: weft\r\nContent-Type: text/plain; charset=utf-8\r\n"
        . "Retry-After: 1\r\nContent-Length: 62\r\nConnection: close\r\n\r\n";
    private const LAST_WORDS = self::LAST_WORDS_HEAD . "Service unavailable: the worker failed while this request ran\n";
    /** How an HTTP/2 client with prior knowledge opens a cleartext connection (RFC 9113 §3.3). */
    private const HTTP2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    /*
     * busy, fresh, status, sent, complete, answering and parsed are written for every request: untyped, their
     * types in @var (see the note in Weft\Coroutine\Coroutine on what a typed property costs per assignment
     * under the JIT).
     */
    /** @var bool a request of this connection is with the application (dispatched, not yet answered) */
    private $busy = false;
    /** @var bool no request was dispatched yet: the header timeout counts from the connection's opening */
    private $fresh = true;
    /** The peer closed its sending side. */
    private bool $ended = false;
    /** No further request is taken on this connection. */
    private bool $done = false;
    /** @var int the response being sent, for the access log: its status, body bytes queued, and whether all went out */
    private $status = 0;
    /** @var int */
    private $sent = 0;
    /** @var bool */
    private $complete = true;
    /** Whether the peer is a trusted proxy (--trusted-proxies), asked at its first request. */
    private ?bool $trustedPeer = null;
    /** What this connection counts in the worker's body budget: bytes in its parser, and the body of its running request. */
    private int $held = 0;
    private int $runningBody = 0;
    /** @var bool the running request's answer has started to go out (its head is queued) */
    private $answering = false;
    /** @var ?Request a request the extension framed from a read (received()), which pump() takes before asking the parser */
    private $parsed = null;
    /** The connection's descriptor, once asked for (CodeDeadline::track()); false: not yet. */
    private int|null|false $descriptor = false;
    /** The first bytes of a fresh connection, while they may still be the HTTP/2 preface. */
    private string $early = '';

    private readonly Dispatcher $dispatcher;
    /**
     * Made when bytes must be parsed in PHP (parser()). With the extension framing requests (HttpProtocol::open())
     * the usual request comes built with its read and never needs one, and a parser left empty after a
     * request is dropped again: an idle connection holds none (it was a fifth of an idle connection's memory).
     */
    private ?RequestParser $parser = null;

    /**
     * @param string|null $host the peer's IP, stamped on every request the parser builds
     * @param bool $framed whether the extension frames this connection's usual requests: then a parser
     *        emptied by a request is dropped; otherwise (every request parsed in PHP) it is kept
     */
    public function __construct(
        private readonly HttpProtocol $protocol,
        private readonly Connection $connection,
        private readonly ?string $host,
        private readonly bool $framed = false,
    ) {
        $this->dispatcher = $connection->dispatcher;
    }

    private function parser(): RequestParser
    {
        return $this->parser ??= new RequestParser($this->protocol->options->limits, $this->host);
    }

    /**
     * @param Request|null $parsed the request $bytes are, framed by the extension (Weft\Ext\Conn::frameRequests(), asked by HttpProtocol::open()):
     *        taken as the parser would return it when the parser holds nothing, no request runs, no output
     *        waits and the bytes are too few for the body budget to refuse them; otherwise the bytes are
     *        parsed as always
     */
    public function received(string $bytes, ?Request $parsed = null): void
    {
        if ($this->fresh && $this->protocol->http2 !== null && !$this->parser?->hasPartial()) {
            if ($this->early !== '') {
                $parsed = null; // the start of a preface came before: what C parsed was not the whole head
            }
            $bytes = $this->sniffHttp2($bytes);
            if ($bytes === null) {
                return;
            }
        }
        // Then pump() takes it at once (no output waits, so there is room), exactly where next() would have.
        if ($parsed !== null && !$this->busy && !$this->done && \strlen($bytes) < ReceiveBudget::REFUSE_FROM
            && !$this->parser?->hasPartial() && $this->connection->unsent() === 0) {
            $this->parsed = $parsed;
            $this->pump();
            $this->connection->flush();
            return;
        }
        $this->parser()->push($bytes);
        if ($this->protocol->options->bodyMemory > 0 && $this->overBodyBudget()) {
            $this->refuseBody();
            return;
        }
        if ($this->busy) {
            $this->connection->update(); // read ahead only so far behind a running request
            return;
        }
        $this->pump();
        $this->connection->flush();
    }

    /**
     * A fresh connection that opens with the HTTP/2 preface is handed to HTTP/2 (h2c with prior
     * knowledge), bytes and all; any other is HTTP/1.1's. An "Upgrade: h2c" request is answered as
     * HTTP/1.1 (RFC 9113 deprecates that upgrade). @return ?string the bytes to parse; null: none now
     */
    private function sniffHttp2(string $bytes): ?string
    {
        $seen = $this->early . $bytes;
        $length = \min(\strlen($seen), 24);
        if (\strncmp($seen, self::HTTP2_PREFACE, $length) !== 0) {
            $this->early = '';
            return $seen;
        }
        if ($length < 24) {
            $this->early = $seen; // the preface may come in pieces
            return null;
        }
        $this->early = '';
        $this->done = true;
        $http2 = $this->protocol->http2;
        $this->connection->upgrade($session = $http2->open($this->connection), $http2->timeouts());
        $session->received($seen);
        return null;
    }

    public function ended(): void
    {
        $this->ended = true;
        if (!$this->busy) {
            $this->pump();
            $this->connection->flush();
        }
    }

    public function phase(): int
    {
        if ($this->busy || $this->done) {
            return self::BUSY;
        }
        if ($this->parser?->inBody()) {
            return self::BODY;
        }
        if ($this->parser?->hasPartial()) {
            return self::HEAD;
        }
        // A fresh connection owes its first head within the header timeout; once the worker drains, it
        // is idle like any other (closed after the short drain wait, not the whole header timeout).
        return $this->fresh && !$this->connection->isDraining() ? self::HEAD : self::IDLE;
    }

    public function wantsInput(): bool
    {
        return !$this->done && (!$this->busy || ($this->parser?->bufferedBytes() ?? 0) < self::READ_AHEAD);
    }

    public function timedOut(): ?string
    {
        if (!$this->parser?->hasPartial()) {
            return null; // a connection that never sent anything is closed quietly
        }
        $this->done = true;
        $timeout = HttpError::requestTimeout($this->parser->inBody())->toResponse();
        $this->protocol->accessLog?->record(HttpProtocol::host($this->connection->remoteAddress()), $this->parser->pendingLine()[0] ?? null, $this->parser->pendingLine()[1] ?? null, $this->parser->pendingLine()[2] ?? '1.1', 408, \strlen($timeout->body()), 0.0);
        return $this->protocol->encoder->encode($timeout, '1.1', false, false, $this->protocol->date());
    }

    public function resume(): void
    {
        if (!$this->busy) {
            $this->pump();
            $this->connection->flush();
        }
    }

    public function closed(): void
    {
        $this->done = true;
        $this->release();
    }

    /** @param Request $request */
    public function abandon(mixed $request, bool $failed): void
    {
        $connection = $this->connection;
        if ($connection->isClosed()) {
            return;
        }
        if (!$this->answering) {
            $response = $failed
                ? $this->protocol->call->error()
                : ErrorResponse::unavailable('the worker failed while this request ran');
            $connection->write($this->protocol->encoder->encode($response, $request->version(), false, $request->method() === 'HEAD', $this->protocol->date()));
        }
        // A body already under way is cut: the client sees it incomplete, never as whole.
        $this->done = true;
        $connection->closeAfterFlush();
        $connection->flush();
    }

    public function describe(mixed $request): string
    {
        return $request->method() . ' ' . $request->target();
    }

    /**
     * Takes complete requests from the parser and dispatches them, one at a time, until one waits (its
     * dispatch() returns false: the Dispatcher calls resume() once it is answered), the input runs out or
     * the output is over its bound (roomFreed() calls resume()). The answers are queued, not written:
     * every caller flushes once after this, so a pipelined batch goes out in one write. Only loop
     * callbacks and resume() call this, never serve(): it is never re-entered.
     *
     * The same loop shape as LineSession::pump(), kept apart on purpose: the steps differ (parse errors,
     * 100-continue, body budget, refusals) and a shared skeleton would add an indirect call per request here.
     */
    private function pump(): void
    {
        $connection = $this->connection;
        while (!$this->busy && !$this->done) {
            if ($connection->outOfRoom()) {
                return;
            }
            try {
                if ($this->parsed !== null) {
                    $request = $this->parsed;
                    $this->parsed = null;
                } else {
                    $request = $this->parser?->next();
                }
            } catch (HttpError $e) {
                $this->done = true;
                $refusal = $e->toResponse();
                $connection->write($this->protocol->encoder->encode($refusal, '1.1', false, false, $this->protocol->date()));
                $this->protocol->accessLog?->record(HttpProtocol::host($connection->remoteAddress()), $this->parser->failedLine()[0] ?? null, $this->parser->failedLine()[1] ?? null, $this->parser->failedLine()[2] ?? '1.1', $refusal->status(), \strlen($refusal->body()), 0.0);
                $connection->closeAfterFlush();
                return;
            }
            if ($request === null) {
                if ($this->framed && $this->parser?->isEmpty()) {
                    $this->parser = null; // the next usual request comes framed by the extension
                }
                if ($this->parser?->needsContinue()) {
                    $connection->write(ResponseEncoder::CONTINUE);
                } elseif ($this->ended) {
                    $this->done = true;
                    $connection->closeAfterFlush();
                }
                return;
            }
            if ($connection->tls !== null && $request->scheme() !== 'https') {
                // (One the extension framed from a TLS read says "https" already: no copy of it.)
                $request = $request->overTls();
            }
            if ($this->protocol->proxies !== null
                && ($this->trustedPeer ??= $this->protocol->proxies->trusts((string) $request->remoteAddress()))) {
                // Before anything sees the request (the application, the access log, a refusal's line).
                $request = $this->protocol->proxies->resolveFromTrustedPeer($request);
            }
            $this->fresh = false;
            $this->busy = true;
            if ($this->protocol->options->bodyMemory > 0) {
                $this->runningBody = \strlen($request->body());
                $this->account();
            }
            try {
                if (!$this->dispatcher->dispatch($this, $request)) {
                    return; // it waits: resume() when it is answered
                }
            } catch (TooManyCoroutines $e) {
                $this->protocol->logger->error('{method} {target}: refused: {message}', [
                    'method' => $request->method(), 'target' => $request->target(), 'message' => $e->getMessage(),
                ]);
                $this->busy = false;
                $this->done = true;
                $unavailable = ErrorResponse::unavailable('too many requests in flight');
                $connection->write($this->protocol->encoder->encode($unavailable, $request->version(), false, $request->method() === 'HEAD', $this->protocol->date()));
                $this->protocol->accessLog?->record($request->remoteAddress(), $request->method(), $request->target(), $request->version(), 503, $request->method() === 'HEAD' ? 0 : \strlen($unavailable->body()), 0.0, $request->header('referer'), $request->header('user-agent'));
                $connection->closeAfterFlush();
            }
        }
    }

    /** Runs in the request's own coroutine. @param Request $request */
    public function serve(mixed $request): void
    {
        $connection = $this->connection;
        $started = $this->protocol->observed ? \hrtime(true) : 0;
        // While the application has it: what the native extension answers if the worker must go and
        // PHP cannot (stuck in a long C call, see CodeDeadline). Left when the application returns.
        $isHead = $request->method() === 'HEAD';
        CodeDeadline::track(
            $this->descriptor !== false ? $this->descriptor : ($this->descriptor = $connection->descriptor()),
            $isHead ? self::LAST_WORDS_HEAD : self::LAST_WORDS,
        );
        $response = $this->protocol->call->respond($request);
        $encoder = $this->protocol->encoder;
        // The common response is encoded by the extension, into what encode() would return (null: not
        // common). It has no Connection field, is not streamed, switches no protocol and has a final
        // status, so the request alone decides keep-alive and none of the checks below applies to it.
        $bytes = $encoder->native
            ? \Weft\Ext\encodeResponse($response, $request->version(), $keepAlive = !$this->done && !$connection->isDraining() && $request->keepAlive(), $isHead, $this->protocol->date(), $encoder->serverField, self::SEPARATE_BODY)
            : null;
        if ($bytes === null) {
            $upgrade = $response->upgrade();
            if ($upgrade !== null && ($invalid = HeaderField::problem($response->headers()) ?? ($upgrade instanceof ProtocolSwitch ? null : 'no connection can be handed to ' . $upgrade::class . ', which is no ProtocolSwitch')) !== null) {
                // A field the 101 cannot carry is the application's error, as on any other response: a
                // 500 with the reason logged, not a switch with the field left out.
                $this->protocol->call->log($request, new \InvalidArgumentException($invalid), '{method} {target}: the upgrade could not be answered: {message}');
                $response = $this->protocol->call->error();
                $upgrade = null;
            }
            if ($upgrade !== null) {
                $cost = $upgrade->cost();
                if ($this->protocol->upgraded->fits($cost)) {
                    if ($started !== 0) {
                        $this->finished($request, $response->status(), 0, $started);
                    }
                    $this->switchProtocols($response, $cost);
                    return;
                }
                $response = $this->refuseUpgrade($request);
            }
            if ($response->status() < 200) {
                // 1xx are interim answers (100 Continue is the server's own): as the final answer the
                // client would wait on for the real one. (fpm mode's emitter refuses them the same way.)
                $this->protocol->call->log($request, new \UnexpectedValueException("Status {$response->status()} is an interim response, not a final one"));
                $response = $this->protocol->call->error();
            }
            if ($response->hasTrailers()) {
                // (Never one the extension encoded: it leaves a response with trailers to PHP.)
                $response = HttpBodyWriter::forTrailers($response, $request, $this->protocol->call);
            }
        }
        $this->answering = true;
        $this->sent = 0;
        $this->complete = true;
        try {
            if ($bytes !== null) {
                if ($started !== 0) {
                    $this->status = $response->status();
                    $this->sent = \strlen($response->body());
                }
                $connection->write($bytes);
            } else {
                $keepAlive = !$this->done && !$connection->isDraining() && $encoder->keepAlive($request, $response);
                $keepAlive = $response->isStreamed()
                    ? $this->stream($request, $response, $keepAlive, $isHead)
                    : $this->send($request, $response, $keepAlive, $isHead);
            }
        } catch (ConnectionClosed) {
            $keepAlive = false;
            $this->complete = false;
            if (!$response->isStreamed()) {
                $this->sent = 0;
            }
        }
        if ($started !== 0) {
            $this->finished($request, $this->status, $this->sent, $started, $this->complete && !$connection->isClosed());
        }
        if (!$keepAlive) {
            $this->done = true;
            $connection->closeAfterFlush();
        }
        $this->busy = false;
        $this->answering = false;
        if ($this->runningBody !== 0) {
            $this->runningBody = 0;
            $this->account();
        }
        // Nothing more here: the Dispatcher tells pump() or resume() how to go on (dispatch()'s answer).
    }

    /**
     * Brings this connection's share of the worker's budget of request bytes up to date; true when the
     * worker now holds more than the budget and this connection is receiving a request, its head or
     * its body (the one to refuse: a request already in the application is never cut for it). Heads
     * count too: ten thousand connections each trickling a head just under --max-header would
     * otherwise hold as much as a few large bodies.
     */
    private function overBodyBudget(): bool
    {
        return $this->account() && !$this->busy && !$this->done && $this->parser?->hasPartial();
    }

    /** @return bool whether the worker is over its budget with this connection holding enough to refuse */
    private function account(): bool
    {
        $held = ($this->parser?->bufferedBytes() ?? 0) + $this->runningBody;
        $over = $this->protocol->budget->update($this->held, $held);
        $this->held = $held;
        return $over;
    }

    private function release(): void
    {
        $this->protocol->budget->update($this->held, 0);
        $this->held = 0;
        $this->runningBody = 0;
    }

    /** The worker holds too many request bytes: this request is refused before it takes it past its memory limit. */
    private function refuseBody(): void
    {
        $this->done = true;
        $line = $this->parser->pendingLine() ?? $this->parser->partialLine();
        $budget = $this->protocol->budget;
        $held = $budget->held;
        $this->parser->takeBuffered();
        $this->release();
        $count = $budget->refused();
        if ($count !== null) {
            $this->protocol->logger->warning('{method} {target}: refused: the worker holds {held} bytes of requests being received, over its budget of {budget} (half of --memory-limit); {count} refused since the last such line', [
                'method' => $line[0] ?? '-', 'target' => $line[1] ?? '-',
                'held' => $held, 'budget' => $budget->limit, 'count' => $count,
            ]);
        }
        $unavailable = ErrorResponse::unavailable('too many requests in transit');
        $this->connection->write($this->protocol->encoder->encode($unavailable, '1.1', false, false, $this->protocol->date()));
        $this->protocol->accessLog?->record(HttpProtocol::host($this->connection->remoteAddress()), $line[0] ?? null, $line[1] ?? null, $line[2] ?? '1.1', 503, \strlen($unavailable->body()), 0.0);
        $this->connection->closeAfterFlush();
        $this->connection->flush();
    }

    /**
     * The one point where a request the application answered is complete (its last byte queued, or the
     * connection gone): the /metrics figures and the access log line are recorded here, and only here.
     *
     * @param int $started hrtime() at the start of the request's handling
     */
    private function finished(Request $request, int $status, int $bytes, int $started, bool $complete = true): void
    {
        $seconds = (\hrtime(true) - $started) / 1e9;
        $this->protocol->metrics?->record($status, $seconds);
        $this->protocol->accessLog?->record(
            // The peer's IP, stamped by the parser; the client's when a trusted proxy named it.
            $request->remoteAddress(),
            $request->method(),
            $request->target(),
            $request->version(),
            $status,
            $bytes,
            $seconds,
            $request->header('referer'),
            $request->header('user-agent'),
            $complete,
        );
    }

    /**
     * A 101 from the application (WebSocket::upgrade()): this session takes no further request; the
     * connection, with the bytes read after the request, belongs to the new protocol from here on.
     */
    private function switchProtocols(Response $response, int $cost): void
    {
        $this->done = true;
        $this->busy = false;
        $this->release();
        $upgraded = $this->protocol->upgraded;
        $upgraded->charge($cost);
        $response->upgrade()->switchProtocols($this->connection, $response, $this->parser?->takeBuffered() ?? '', $this->protocol->options->upgrades + ['budget' => $this->protocol->budget, 'upgraded' => $upgraded]);
        if ($this->ended && !$this->connection->isClosed()) {
            // The client ended its side while the application answered; the core, which read that end
            // already, will not report it again: the new protocol hears it now, rather than holding the
            // connection (and its share of the budget) until its idle timeout.
            $this->connection->session->ended();
        }
    }

    /**
     * The worker's upgraded connections hold their whole budget: this one is answered 503 (and closed)
     * rather than switched, so a crowd of idle WebSockets cannot take the worker to its memory limit.
     */
    private function refuseUpgrade(Request $request): Response
    {
        $this->done = true;
        $budget = $this->protocol->upgraded;
        $count = $budget->refused();
        if ($count !== null) {
            $this->protocol->logger->warning('{method} {target}: upgrade refused (503): the worker\'s {open} WebSockets hold {held} bytes of their budget of {budget} (--ws-memory); {count} refused since the last such line', [
                'method' => $request->method(), 'target' => $request->target(),
                'open' => $budget->count, 'held' => $budget->charged, 'budget' => $budget->limit, 'count' => $count,
            ]);
        }
        return ErrorResponse::unavailable('this server holds all the WebSocket connections it can');
    }

    /**
     * @param Request $request
     * @param Response $response untyped both: this runs for every request on the pure-PHP path, where a
     *        class-typed argument is checked through zend_check_user_type_slow each call
     */
    private function send($request, $response, bool $keepAlive, bool $isHead): bool
    {
        $encoder = $this->protocol->encoder;
        $version = $request->version();
        try {
            $body = $response->body();
            $this->status = $response->status();
            // What the encoder sends of it: no body for HEAD, 204 and 304.
            $this->sent = $isHead || $this->status === 204 || $this->status === 304 ? 0 : \strlen($body);
            if (\strlen($body) > self::SEPARATE_BODY && $encoder->framing($response, $version, $isHead) === BodyFraming::ContentLength) {
                $this->connection->write($encoder->encodeHead($response, $version, $keepAlive, $isHead, $this->protocol->date()));
                $this->connection->write($body);
            } else {
                // serve() asked the extension already (it encodes the common response): PHP's encoder alone.
                $this->connection->write($encoder->encodeInPhp($response, $version, $keepAlive, $isHead, $this->protocol->date()));
            }
        } catch (\InvalidArgumentException $e) {
            // A header that would break the head (CR/LF injection): never send it.
            $this->protocol->call->log($request, $e, '{method} {target}: the response cannot be sent: {message}');
            $error = $this->protocol->call->error();
            $this->status = 500;
            $this->sent = $isHead ? 0 : \strlen($error->body());
            $this->connection->write($encoder->encode($error, $version, $keepAlive, $isHead, $this->protocol->date()));
        }
        return $keepAlive;
    }

    private function stream(Request $request, Response $response, bool $keepAlive, bool $isHead): bool
    {
        $encoder = $this->protocol->encoder;
        $connection = $this->connection;
        $version = $request->version();
        $framing = $encoder->framing($response, $version, $isHead);
        if ($framing === BodyFraming::CloseDelimited) {
            $keepAlive = false;
        }
        $this->status = $response->status();
        try {
            $head = $encoder->encodeHead($response, $version, $keepAlive, $isHead, $this->protocol->date());
        } catch (\InvalidArgumentException $e) {
            // Nothing is out yet: a bad header field or Content-Length is still an honest 500.
            $this->protocol->call->log($request, $e, '{method} {target}: the response cannot be sent: {message}');
            $error = $this->protocol->call->error();
            $this->status = 500;
            $this->sent = $isHead ? 0 : \strlen($error->body());
            $connection->write($encoder->encode($error, $version, $keepAlive, $isHead, $this->protocol->date()));
            return $keepAlive;
        }
        $connection->write($head);
        if ($framing === BodyFraming::None) {
            return $keepAlive; // HEAD, 204, 304: no body, whatever the producer would write
        }
        $length = $framing === BodyFraming::ContentLength ? (int) $response->header('content-length') : null;
        $writer = new HttpBodyWriter($connection, $framing === BodyFraming::Chunked ? $encoder : null, $length);
        $connection->flush();
        try {
            // Nothing of the body is made (a file chunk read, the application's first write) while the
            // connection or the worker has no room for it.
            $connection->waitForRoom();
            ($response->producer())($writer);
            if (!$writer->isComplete()) {
                throw BodyLengthMismatch::tooShort((int) $length, $writer->written());
            }
            $writer->end($response);
        } catch (ConnectionClosed $e) {
            $this->sent = $writer->written();
            $this->complete = false;
            return false;
        } catch (\Throwable $e) {
            // The head is out: the only honest signal left is to end the connection.
            $this->protocol->call->log($request, $e, '{method} {target}: the streamed response failed, closing the connection: {message}');
            $this->sent = $writer->written();
            $this->complete = false;
            return false;
        }
        $this->sent = $writer->written();
        $connection->flush();
        return $keepAlive;
    }
}
