<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\Coroutine\Cancelled;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\TooManyCoroutines;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Parser\HttpError;
use Weft\Http\Server\BodyLengthMismatch;
use Weft\Http\Server\HttpProtocol;
use Weft\Http2\Hpack\CompressionError;
use Weft\Http2\Hpack\Decoder;
use Weft\Http2\Hpack\HeaderListTooLarge;
use Weft\Loop\Loop;
use Weft\Server\Abandonable;
use Weft\Server\Connection;
use Weft\Server\Session;
use Weft\Socket\ConnectionClosed;

/**
 * One HTTP/2 connection (RFC 9113): frames in, streams out. Each stream's request, once complete, is
 * dispatched like an HTTP/1.1 request (Dispatcher::dispatch(), serve() in its own coroutine, the same
 * ApplicationCall, access log and metrics); any number run at once, up to the advertised
 * SETTINGS_MAX_CONCURRENT_STREAMS.
 *
 * The shape is HttpSession's: a read's frames are all handled, every answer and control frame is queued
 * on the connection, and the connection writes once. Frames are string slices of the read buffer, never
 * objects. What a client repeats is not redone: the decoder returns its kept fields for a header block
 * that changes nothing (h2load's, a poller's), and the head parsed from them is kept here with them; a
 * response's checked fields are kept for its header array; a small answer is one write (Http2Output::respond()). This class reads frames and keeps the streams' lifecycle; what goes out is Http2Output's:
 * DATA as far as both flow-control windows (the connection's and the stream's) admit, the rest waiting
 * in its stream until a WINDOW_UPDATE, a streamed producer with it. FloodGuard counts the floods.
 *
 * Request bodies are read whole before the application runs, as on HTTP/1.1 (--max-body), with a
 * WINDOW_UPDATE for what is consumed. A response's trailers (Response::withTrailers()) are a HEADERS
 * frame with END_STREAM after its last DATA.
 *
 * @internal
 */
final class Http2Session implements Session, Abandonable
{
    /** DATA received is given back (WINDOW_UPDATE) once this much has been consumed. */
    private const WINDOW_REFILL = 32768;
    /** The connection's receive window we open at the start (the stream windows stay at the default). */
    private const CONNECTION_WINDOW = 1 << 20;
    /**
     * Each stream's receive window (SETTINGS_INITIAL_WINDOW_SIZE): a quarter of the connection's, so an
     * upload is not held to 64 KiB per round trip; the connection's window still bounds what all the
     * streams together have in flight.
     */
    public const STREAM_WINDOW = 1 << 18;

    private string $buffer = '';
    private bool $prefaced = false;
    /** The first frame after the preface must be SETTINGS (§3.4). */
    private bool $settingsSeen = false;
    /** @var array<int, Http2Stream> the open streams (and closed ones whose application still runs) */
    private array $streams = [];
    /** Reset streams whose coroutine has not ended yet: they still count against the stream limit. */
    private int $zombies = 0;
    private int $lastStream = 0;
    /** A header block in progress: its stream (0: none), flags, fragments and CONTINUATION count. */
    private int $continuing = 0;
    private int $blockFlags = 0;
    private string $block = '';
    private int $continuations = 0;
    /** The peer's SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window. */
    private int $initialWindow = Frame::DEFAULT_WINDOW;
    /** Our receive window for the connection, and what of it is consumed and not given back. */
    private int $receiveWindow = Frame::DEFAULT_WINDOW;
    private int $unacknowledged = 0;
    /** GOAWAY sent: no new stream is taken; the connection closes once its streams are done. */
    private bool $goaway = false;
    /** The connection is over (closed, or closing after a GOAWAY for an error). */
    private bool $done = false;
    /** The peer ended its side (or sent GOAWAY): close once the streams in flight are answered. */
    private bool $ended = false;
    /** Inside received(): serve() and the producers leave the write to it. */
    private bool $receiving = false;
    /** Until the peer acknowledges our SETTINGS (§6.5.3): the timer that ends the connection if it never does. */
    private ?string $settingsTimer = null;
    /** What this connection holds of the worker's ReceiveBudget (HttpOptions::$bodyMemory): its streams' bodies. */
    private int $held = 0;
    private readonly HttpProtocol $http;
    private readonly Decoder $decoder;
    /** What we send: header blocks, DATA within the peer's windows (the connection's), the stall timer. */
    private readonly Http2Output $output;
    private readonly FloodGuard $floods;
    private readonly ?string $peer;
    /**
     * The last request head parsed, and the decoded fields it came from: the decoder returns the same
     * array for a repeated block (h2load's, a browser's polling), and parse() is a function of the
     * fields and the limits alone. Only heads without a refusal are kept.
     *
     * @var list<array{0: string, 1: string}>|null
     */
    private ?array $lastFields = null;
    private ?RequestHead $lastHead = null;
    /**
     * The last response's header array and streaming, and its checked fields (RequestHead::headerFields()):
     * a handler that answers with a literal array gives the same array every time.
     *
     * @var array<array-key, mixed>|null
     */
    private ?array $lastHeaders = null;
    private bool $lastStreamed = false;
    /** @var array{0: list<array{0: string, 1: string}>, 1: bool, 2: bool} */
    private array $lastOwnFields = [[], false, false];
    /**
     * The whole list made from them last (RequestHead::withStatusAndLength()), for the same status,
     * Date and body length (-1: none sent): the same array again, which the encoder knows at a glance.
     *
     * @var list<array{0: string, 1: string}>
     */
    private array $lastResponseFields = [];
    private int $lastStatus = 0;
    private string $lastDate = '';
    private int $lastLength = -2;

    public function __construct(
        private readonly Http2Protocol $protocol,
        private readonly Connection $connection,
    ) {
        $this->http = $protocol->http;
        $this->decoder = new Decoder(4096, $protocol->maxHeaderList);
        $this->output = new Http2Output($connection, $protocol->http->timeouts()->send, $this->forgetIfDone(...), function (): void {
            $this->fail(Frame::FLOW_CONTROL_ERROR, 'the client kept its flow-control window closed for --send-timeout');
            $this->connection->flush();
        });
        $this->floods = new FloodGuard($protocol->maxResets, $protocol->maxPings, $protocol->maxSettings, $protocol->maxEmptyFrames, static fn (): float => Loop::get()->now());
        $this->peer = HttpProtocol::host($connection->remoteAddress());
        // The server's preface: its SETTINGS, sent at once (§3.4), and a larger connection window.
        $connection->write(Frame::settings([
            Frame::SETTINGS_MAX_CONCURRENT_STREAMS => $protocol->maxConcurrentStreams,
            Frame::SETTINGS_ENABLE_PUSH => 0,
            Frame::SETTINGS_MAX_HEADER_LIST_SIZE => $protocol->maxHeaderList,
            Frame::SETTINGS_INITIAL_WINDOW_SIZE => self::STREAM_WINDOW,
        ]) . Frame::windowUpdate(0, self::CONNECTION_WINDOW - Frame::DEFAULT_WINDOW));
        $this->receiveWindow = self::CONNECTION_WINDOW;
        // A peer that never acknowledges them may be applying other values than ours (a window, a list
        // size): it has --header-timeout, as a request head has, then GOAWAY SETTINGS_TIMEOUT.
        $this->settingsTimer = Loop::get()->delay($protocol->http->timeouts()->header, function (): void {
            $this->settingsTimer = null;
            if (!$this->done && !$this->connection->isClosed()) {
                $this->fail(Frame::SETTINGS_TIMEOUT, 'our SETTINGS were not acknowledged within --header-timeout');
                $this->connection->flush();
            }
        });
    }

    public function received(string $bytes): void
    {
        if ($this->done) {
            return;
        }
        $this->buffer .= $bytes;
        $this->receiving = true;
        try {
            $this->frames();
        } catch (Http2Error $e) {
            $this->fail($e->getCode(), $e->getMessage());
        }
        $this->receiving = false;
        $this->refillWindows();
        $this->output->pump();
        $this->connection->flush();
        $this->output->wakeProducers();
    }

    public function ended(): void
    {
        $this->ended = true;
        $this->closeWhenDone();
    }

    public function phase(): int
    {
        if (!$this->goaway && !$this->done && $this->connection->isDraining()) {
            $this->drain();
        }
        if ($this->done) {
            return self::BUSY;
        }
        if (!$this->prefaced || $this->continuing !== 0) {
            return self::HEAD;
        }
        $phase = self::IDLE;
        foreach ($this->streams as $stream) {
            if ($stream->running || $stream->queued() > 0) {
                // Read on: WINDOW_UPDATE, RST_STREAM and new streams come while these run or wait.
                return self::MULTIPLEXING;
            }
            if (!$stream->remoteClosed) {
                $phase = self::BODY;
            }
        }
        return $phase;
    }

    public function wantsInput(): bool
    {
        return !$this->done;
    }

    public function timedOut(): ?string
    {
        // A preface, a header block or a body that stalled: say why, as HTTP/1.1 says 408.
        $this->done = true;
        return $this->prefaced ? Frame::goaway($this->lastStream, Frame::NO_ERROR, 'timeout') : null;
    }

    public function resume(): void
    {
        if ($this->connection->isClosed()) {
            return;
        }
        $this->output->pump();
        $this->connection->flush();
        $this->output->wakeProducers();
        $this->closeWhenDone();
    }

    public function closed(): void
    {
        $this->done = true;
        $this->http->budget->update($this->held, 0);
        $this->held = 0;
        $this->output->close();
        if ($this->settingsTimer !== null) {
            Loop::get()->cancel($this->settingsTimer);
            $this->settingsTimer = null;
        }
        $scheduler = Scheduler::get();
        foreach ($this->streams as $stream) {
            $stream->reset = true;
            if ($stream->waiter !== null && $stream->waiter->isWaiting()) {
                $waiter = $stream->waiter;
                $stream->waiter = null;
                $scheduler->throw($waiter, ConnectionClosed::byPeer('writing the response'));
            }
        }
    }

    /** @param Http2Stream $request */
    public function abandon(mixed $request, bool $failed): void
    {
        if ($this->connection->isClosed()) {
            return;
        }
        if (!$request->headersSent && !$request->reset) {
            $response = $failed ? $this->http->call->error() : ErrorResponse::unavailable('the worker failed while this request ran');
            $this->respond($request, $response, $request->method === 'HEAD');
        }
        $this->output->pump();
        if (!$this->done) {
            // Each stream of the connection in flight is abandoned in turn: one GOAWAY, and the
            // connection left open for the next one's answer (the process ends right after).
            $this->connection->write(Frame::goaway($this->lastStream, Frame::NO_ERROR));
            $this->done = true;
            $this->goaway = true;
        }
        $this->connection->flush();
    }

    /** @param Http2Stream $request */
    public function describe(mixed $request): string
    {
        return $request->method . ' ' . $request->target;
    }

    /** Runs in the stream's own coroutine. @param Http2Stream $request */
    public function serve(mixed $request): void
    {
        $stream = $request;
        $started = $this->http->observed ? \hrtime(true) : 0;
        $stream->coroutine = Scheduler::get()->running();
        $http = $this->http;
        $message = $stream->request;
        $isHead = $stream->method === 'HEAD';
        try {
            $response = $http->call->respond($message);
        } catch (ConnectionClosed) {
            $response = null; // reset while it ran (StreamReset): nobody to answer
        }
        $complete = true;
        if ($response !== null && !$stream->reset && !$this->connection->isClosed()) {
            if ($response->upgrade() !== null || $response->status() < 200) {
                // A protocol switch (a WebSocket's 101) or an interim answer cannot end an HTTP/2 stream.
                $http->call->log($message, new \UnexpectedValueException("Status {$response->status()} cannot answer an HTTP/2 request"));
                $response = $http->call->error();
            }
            try {
                $complete = $this->respond($stream, $response, $isHead, $message);
            } catch (ConnectionClosed) {
                $complete = false;
            }
        } else {
            $complete = false;
        }
        $stream->coroutine = null;
        $stream->running = false;
        $this->release($stream);
        if ($started !== 0) {
            $seconds = (\hrtime(true) - $started) / 1e9;
            $http->metrics?->record($stream->status, $seconds, 'HTTP/2.0');
            $http->accessLog?->record($message->remoteAddress(), $message->method(), $message->target(), '2.0',
                $stream->status, $stream->sent, $seconds, $message->header('referer'), $message->header('user-agent'), $complete && !$stream->reset);
        }
        if ($stream->reset) {
            $this->zombies--;
        } else {
            $this->forgetIfDone($stream);
        }
        if (!$this->receiving) {
            $this->output->pump();
            $this->connection->flush();
        }
    }

    /**
     * Queues DATA on a stream and sends what the windows admit. @internal for Http2BodyWriter
     *
     * @throws ConnectionClosed when the stream was reset or the connection is gone
     */
    public function queueData(Http2Stream $stream, string $data, bool $end): void
    {
        if ($stream->reset || $this->connection->isClosed()) {
            throw StreamReset::byPeer($stream->id);
        }
        $this->output->queue($stream, $data, $end);
        if (!$this->receiving) {
            $this->output->pump();
            $this->connection->flush();
        }
    }

    /**
     * Suspends a producer while its stream holds more than Http2Output::STREAM_QUEUE unsent (the peer's
     * window is closed) or the connection has no room. @internal for Http2BodyWriter
     *
     * @throws ConnectionClosed when the stream is reset or the connection ends meanwhile
     */
    public function waitForWindow(Http2Stream $stream): void
    {
        $this->connection->waitForRoom();
        $scheduler = Scheduler::get();
        while ($this->output->isFull($stream) && !$stream->reset && !$this->connection->isClosed()) {
            $self = $scheduler->self();
            $stream->waiter = $self;
            $scheduler->await(static function () use ($stream): void {
                $stream->waiter = null;
            });
            $stream->waiter = null;
        }
        if ($stream->reset || $this->connection->isClosed()) {
            throw StreamReset::byPeer($stream->id);
        }
    }

    // ---------------------------------------------------------------- reading frames

    /** Handles every complete frame in the buffer. @throws Http2Error */
    private function frames(): void
    {
        $buffer = $this->buffer;
        $length = \strlen($buffer);
        $at = 0;
        if (!$this->prefaced) {
            if ($length < 24) {
                if (!\str_starts_with(Frame::PREFACE, $buffer)) {
                    $this->badPreface();
                }
                return;
            }
            if (\substr($buffer, 0, 24) !== Frame::PREFACE) {
                $this->badPreface();
                return;
            }
            $this->prefaced = true;
            $at = 24;
        }
        while ($length - $at >= 9 && !$this->done) {
            $size = (\ord($buffer[$at]) << 16) | (\ord($buffer[$at + 1]) << 8) | \ord($buffer[$at + 2]);
            if ($size > Frame::MIN_FRAME_SIZE) {
                throw Http2Error::connection(Frame::FRAME_SIZE_ERROR, "a frame of $size bytes, over SETTINGS_MAX_FRAME_SIZE");
            }
            if ($length - $at - 9 < $size) {
                break;
            }
            $type = \ord($buffer[$at + 3]);
            $flags = \ord($buffer[$at + 4]);
            $id = \unpack('N', $buffer, $at + 5)[1] & 0x7fffffff;
            $payload = $size === 0 ? '' : \substr($buffer, $at + 9, $size);
            $at += 9 + $size;
            if ($this->continuing !== 0 && ($type !== Frame::CONTINUATION || $id !== $this->continuing)) {
                throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'a header block interrupted before END_HEADERS');
            }
            if (!$this->settingsSeen) {
                if ($type !== Frame::SETTINGS || ($flags & Frame::ACK) !== 0) {
                    throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'the preface is not followed by SETTINGS');
                }
                $this->settingsSeen = true;
            }
            match ($type) {
                Frame::DATA => $this->data($id, $flags, $payload),
                Frame::HEADERS => $this->headers($id, $flags, $payload),
                Frame::CONTINUATION => $this->continuation($id, $flags, $payload),
                Frame::PRIORITY => $this->priority($id, $payload),
                Frame::RST_STREAM => $this->rstStream($id, $payload),
                Frame::SETTINGS => $this->settings($id, $flags, $payload),
                Frame::PING => $this->ping($id, $flags, $payload),
                Frame::GOAWAY => $this->peerGoaway($id),
                Frame::WINDOW_UPDATE => $this->windowUpdate($id, $payload),
                Frame::PUSH_PROMISE => throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'a client sent PUSH_PROMISE'),
                default => null, // unknown frame types are ignored (§5.5)
            };
        }
        $this->buffer = $at === $length ? '' : \substr($buffer, $at);
    }

    private function badPreface(): void
    {
        // Not HTTP/2 at all: nothing to say in its language; closed.
        $this->done = true;
        $this->buffer = '';
        $this->connection->closeAfterFlush();
    }

    private function data(int $id, int $flags, string $payload): void
    {
        if ($id === 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'DATA on stream 0');
        }
        $size = \strlen($payload);
        if ($size > $this->receiveWindow) {
            throw Http2Error::connection(Frame::FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
        }
        $this->receiveWindow -= $size;
        $this->unacknowledged += $size;
        $stream = $this->streams[$id] ?? null;
        if ($stream === null || $stream->reset) {
            if ($id > $this->lastStream) {
                throw Http2Error::connection(Frame::PROTOCOL_ERROR, "DATA on idle stream $id");
            }
            if ($size === 0) {
                $this->floods->empty();
            }
            return; // a stream closed or reset meanwhile: ignored, its bytes given back with the connection's
        }
        if ($stream->remoteClosed) {
            $this->resetStream($stream, Frame::STREAM_CLOSED);
            return;
        }
        if ($size > $stream->receiveWindow) {
            $this->resetStream($stream, Frame::FLOW_CONTROL_ERROR);
            return;
        }
        $stream->receiveWindow -= $size;
        $stream->unacknowledged += $size;
        if (($flags & Frame::PADDED) !== 0) {
            $pad = $size === 0 ? 256 : \ord($payload[0]);
            if ($pad >= $size) {
                throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'DATA padding beyond the frame');
            }
            $payload = \substr($payload, 1, $size - 1 - $pad);
        }
        $end = ($flags & Frame::END_STREAM) !== 0;
        if ($payload === '' && !$end) {
            $this->floods->empty();
        }
        if (!$stream->answered) {
            $stream->body .= $payload;
            $max = $this->http->options->limits->maxBodyBytes;
            if (\strlen($stream->body) > $max) {
                $this->release($stream);
                $this->answer($stream, HttpError::bodyTooLarge($max)->toResponse());
            } elseif ($payload !== '' && $this->hold($stream, \strlen($payload))) {
                $this->refuseBody($stream);
            } elseif ($stream->contentLength !== null && \strlen($stream->body) > $stream->contentLength) {
                $this->resetStream($stream, Frame::PROTOCOL_ERROR);
                return;
            }
        }
        if ($end) {
            $stream->remoteClosed = true;
            if ($stream->answered) {
                $this->forgetIfDone($stream);
                return;
            }
            if ($stream->contentLength !== null && \strlen($stream->body) !== $stream->contentLength) {
                $this->resetStream($stream, Frame::PROTOCOL_ERROR); // malformed (§8.1.1)
                return;
            }
            $this->dispatch($stream);
        }
    }

    private function headers(int $id, int $flags, string $payload): void
    {
        if ($id === 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'HEADERS on stream 0');
        }
        $size = \strlen($payload);
        $start = 0;
        $pad = 0;
        if (($flags & Frame::PADDED) !== 0) {
            $pad = $size === 0 ? 256 : \ord($payload[0]);
            $start = 1;
        }
        if (($flags & Frame::PRIORITY_FLAG) !== 0) {
            if ($size >= $start + 4 && (\unpack('N', $payload, $start)[1] & 0x7fffffff) === $id) {
                throw Http2Error::connection(Frame::PROTOCOL_ERROR, "stream $id depends on itself");
            }
            $start += 5; // priorities are ignored, as RFC 9113 allows
        }
        if ($start + $pad > $size) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'HEADERS padding beyond the frame');
        }
        $fragment = $start === 0 && $pad === 0 ? $payload : \substr($payload, $start, $size - $start - $pad);
        if (($flags & Frame::END_HEADERS) === 0) {
            $this->continuing = $id;
            $this->blockFlags = $flags;
            $this->block = $fragment;
            $this->continuations = 0;
            return;
        }
        $this->headerBlock($id, $flags, $fragment);
    }

    private function continuation(int $id, int $flags, string $payload): void
    {
        if ($this->continuing === 0 || $id !== $this->continuing) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'CONTINUATION without a header block in progress');
        }
        $this->block .= $payload;
        // A flood of CONTINUATION frames (empty or not) holds memory and CPU before any stream exists.
        if (++$this->continuations > $this->protocol->maxContinuationFrames
            || \strlen($this->block) > 4 * $this->protocol->maxHeaderList + Frame::MIN_FRAME_SIZE) {
            throw Http2Error::connection(Frame::ENHANCE_YOUR_CALM, 'a header block of too many CONTINUATION frames');
        }
        if (($flags & Frame::END_HEADERS) !== 0) {
            $block = $this->block;
            $this->block = '';
            $this->continuing = 0;
            $this->headerBlock($id, $this->blockFlags, $block);
        }
    }

    /** A complete header block: a new stream's request, or its trailers. */
    private function headerBlock(int $id, int $flags, string $block): void
    {
        $tooLarge = false;
        try {
            $fields = $this->decoder->decode($block);
        } catch (HeaderListTooLarge) {
            $fields = [];
            $tooLarge = true; // the decoder stayed in step: only this stream is refused
        } catch (CompressionError $e) {
            throw Http2Error::connection(Frame::COMPRESSION_ERROR, 'HPACK: ' . $e->getMessage());
        }
        $end = ($flags & Frame::END_STREAM) !== 0;
        $stream = $this->streams[$id] ?? null;
        if ($stream !== null) {
            $this->trailers($stream, $fields, $end, $tooLarge);
            return;
        }
        if ($id <= $this->lastStream) {
            return; // a stream closed or reset meanwhile: decoded to keep HPACK in step, then ignored
        }
        if (($id & 1) === 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, "a client opened the even stream $id");
        }
        $this->lastStream = $id;
        if ($this->goaway) {
            return; // after our GOAWAY: beyond its last stream, the client retries it elsewhere
        }
        if (\count($this->streams) + $this->zombies >= $this->protocol->maxConcurrentStreams) {
            $this->connection->write(Frame::reset($id, Frame::REFUSED_STREAM));
            return;
        }
        $stream = new Http2Stream($id, $this->initialWindow);
        $this->streams[$id] = $stream;
        $stream->remoteClosed = $end;
        if ($tooLarge) {
            $this->answer($stream, HttpError::headerTooLarge($this->http->options->limits->maxHeaderBytes)->toResponse());
            return;
        }
        if ($fields === $this->lastFields) {
            $head = $this->lastHead;
        } else {
            $head = RequestHead::parse($fields, $this->http->options->limits);
            if ($head !== null && $head->refusal === null) {
                $this->lastFields = $fields;
                $this->lastHead = $head;
            }
        }
        if ($head === null) {
            $this->resetStream($stream, Frame::PROTOCOL_ERROR); // malformed (§8.1.1)
            return;
        }
        $stream->method = $head->method;
        $stream->target = $head->target;
        $stream->headerBlock = $head->headerBlock;
        $stream->contentLength = $head->contentLength;
        if ($head->refusal !== null) {
            $this->answer($stream, $head->refusal);
            return;
        }
        if ($end) {
            if ($stream->contentLength !== null && $stream->contentLength !== 0) {
                $this->resetStream($stream, Frame::PROTOCOL_ERROR);
                return;
            }
            $this->dispatch($stream);
        }
    }

    /** @param list<array{0: string, 1: string}> $fields */
    private function trailers(Http2Stream $stream, array $fields, bool $end, bool $tooLarge): void
    {
        if ($stream->remoteClosed || $stream->reset) {
            $this->resetStream($stream, Frame::STREAM_CLOSED);
            return;
        }
        if (!$end) {
            $this->resetStream($stream, Frame::PROTOCOL_ERROR); // a second HEADERS must end the stream
            return;
        }
        $stream->remoteClosed = true;
        if ($stream->answered) {
            $this->forgetIfDone($stream);
            return;
        }
        if ($tooLarge) {
            $this->answer($stream, HttpError::headerTooLarge($this->http->options->limits->maxHeaderBytes)->toResponse());
            return;
        }
        $block = RequestHead::trailers($fields);
        if ($block === null) {
            $this->resetStream($stream, Frame::PROTOCOL_ERROR);
            return;
        }
        $stream->trailerBlock = $block;
        if ($stream->contentLength !== null && \strlen($stream->body) !== $stream->contentLength) {
            $this->resetStream($stream, Frame::PROTOCOL_ERROR);
            return;
        }
        $this->dispatch($stream);
    }

    private function priority(int $id, string $payload): void
    {
        if ($id === 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'PRIORITY on stream 0');
        }
        if (\strlen($payload) !== 5) {
            throw Http2Error::connection(Frame::FRAME_SIZE_ERROR, 'PRIORITY of a size other than 5');
        }
        $this->floods->empty();
    }

    private function rstStream(int $id, string $payload): void
    {
        if ($id === 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'RST_STREAM on stream 0');
        }
        if (\strlen($payload) !== 4) {
            throw Http2Error::connection(Frame::FRAME_SIZE_ERROR, 'RST_STREAM of a size other than 4');
        }
        if ($id > $this->lastStream) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, "RST_STREAM on idle stream $id");
        }
        $this->floods->reset();
        $stream = $this->streams[$id] ?? null;
        if ($stream !== null) {
            $this->dropStream($stream);
        }
    }

    private function settings(int $id, int $flags, string $payload): void
    {
        if ($id !== 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'SETTINGS on a stream');
        }
        $size = \strlen($payload);
        if (($flags & Frame::ACK) !== 0) {
            if ($size !== 0) {
                throw Http2Error::connection(Frame::FRAME_SIZE_ERROR, 'a SETTINGS acknowledgement with a payload');
            }
            if ($this->settingsTimer !== null) {
                Loop::get()->cancel($this->settingsTimer);
                $this->settingsTimer = null;
            }
            return;
        }
        if ($size % 6 !== 0) {
            throw Http2Error::connection(Frame::FRAME_SIZE_ERROR, 'SETTINGS of a size not a multiple of 6');
        }
        $this->floods->settings();
        for ($at = 0; $at < $size; $at += 6) {
            ['i' => $setting, 'v' => $value] = \unpack('ni/Nv', $payload, $at);
            switch ($setting) {
                case Frame::SETTINGS_HEADER_TABLE_SIZE:
                    $this->output->setTableSize($value);
                    break;
                case Frame::SETTINGS_ENABLE_PUSH:
                    if ($value > 1) {
                        throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH other than 0 or 1');
                    }
                    break;
                case Frame::SETTINGS_INITIAL_WINDOW_SIZE:
                    if ($value > Frame::MAX_WINDOW) {
                        throw Http2Error::connection(Frame::FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1');
                    }
                    $delta = $value - $this->initialWindow;
                    $this->initialWindow = $value;
                    foreach ($this->streams as $stream) {
                        $stream->sendWindow += $delta;
                        if ($stream->sendWindow > Frame::MAX_WINDOW) {
                            throw Http2Error::connection(Frame::FLOW_CONTROL_ERROR, 'a stream window above 2^31-1');
                        }
                    }
                    break;
                case Frame::SETTINGS_MAX_FRAME_SIZE:
                    if ($value < Frame::MIN_FRAME_SIZE || $value > Frame::MAX_FRAME_SIZE) {
                        throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
                    }
                    // Frames larger than 64 KiB save nothing more and hold the write longer.
                    $this->output->maxFrame = \min($value, 65536);
                    break;
            }
        }
        $this->connection->write(Frame::frame(Frame::SETTINGS, Frame::ACK, 0));
    }

    private function ping(int $id, int $flags, string $payload): void
    {
        if ($id !== 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'PING on a stream');
        }
        if (\strlen($payload) !== 8) {
            throw Http2Error::connection(Frame::FRAME_SIZE_ERROR, 'PING of a size other than 8');
        }
        if (($flags & Frame::ACK) !== 0) {
            return;
        }
        $this->floods->ping();
        $this->connection->write(Frame::frame(Frame::PING, Frame::ACK, 0, $payload));
    }

    private function peerGoaway(int $id): void
    {
        if ($id !== 0) {
            throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'GOAWAY on a stream');
        }
        // The client opens no more streams here: the ones in flight are answered, then it is closed.
        $this->ended = true;
        $this->goaway = true;
    }

    private function windowUpdate(int $id, string $payload): void
    {
        if (\strlen($payload) !== 4) {
            throw Http2Error::connection(Frame::FRAME_SIZE_ERROR, 'WINDOW_UPDATE of a size other than 4');
        }
        $increment = \unpack('N', $payload)[1] & 0x7fffffff;
        if ($id === 0) {
            if ($increment === 0) {
                throw Http2Error::connection(Frame::PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
            }
            $this->output->window += $increment;
            if ($this->output->window > Frame::MAX_WINDOW) {
                throw Http2Error::connection(Frame::FLOW_CONTROL_ERROR, 'the connection window above 2^31-1');
            }
            return;
        }
        $stream = $this->streams[$id] ?? null;
        if ($stream === null || $stream->reset) {
            if ($id > $this->lastStream) {
                throw Http2Error::connection(Frame::PROTOCOL_ERROR, "WINDOW_UPDATE on idle stream $id");
            }
            $this->floods->empty();
            return;
        }
        if ($increment === 0) {
            $this->resetStream($stream, Frame::PROTOCOL_ERROR);
            return;
        }
        $stream->sendWindow += $increment;
        if ($stream->sendWindow > Frame::MAX_WINDOW) {
            $this->resetStream($stream, Frame::FLOW_CONTROL_ERROR);
        }
    }

    // ---------------------------------------------------------------- streams

    private function dispatch(Http2Stream $stream): void
    {
        $request = new Request($stream->method, $stream->target, $stream->headerBlock, $stream->body, '2.0', $this->peer, $stream->trailerBlock);
        $stream->body = '';
        if ($this->connection->tls !== null) {
            $request = $request->overTls();
        }
        $proxies = $this->http->proxies;
        if ($proxies !== null && $proxies->trusts((string) $request->remoteAddress())) {
            $request = $proxies->resolveFromTrustedPeer($request);
        }
        $stream->request = $request;
        $stream->running = true;
        try {
            $this->connection->dispatcher->dispatch($this, $stream);
        } catch (TooManyCoroutines $e) {
            $stream->running = false;
            $this->http->logger->error('{method} {target}: refused: {message}', [
                'method' => $stream->method, 'target' => $stream->target, 'message' => $e->getMessage(),
            ]);
            $this->answer($stream, ErrorResponse::unavailable('too many requests in flight'));
        }
    }

    /** The server answers the stream itself (a limit, a refusal); logged like any answer. */
    private function answer(Http2Stream $stream, Response $response): void
    {
        $stream->answered = true;
        $this->respond($stream, $response, $stream->method === 'HEAD');
        $this->http->accessLog?->record($this->peer, $stream->method !== '' ? $stream->method : null, $stream->method !== '' ? $stream->target : null,
            '2.0', $stream->status, $stream->sent, 0.0);
        $this->forgetIfDone($stream);
    }

    /**
     * Writes a response on its stream: HEADERS, then its body as DATA (or the producer's, for a
     * streamed one). @return bool whether it went out whole
     *
     * @throws ConnectionClosed
     */
    private function respond(Http2Stream $stream, Response $response, bool $isHead, ?Request $request = null): bool
    {
        $status = $response->status();
        if ($response->hasTrailers() && $response->hasHeader('content-length')) {
            // As on HTTP/1.1, where they need a chunked body: a client may stop reading at the length
            // (curl does) and miss them.
            $response = $response->withoutHeader('content-length');
        }
        $streamed = $response->isStreamed();
        $noBody = $isHead || $status === 204 || $status === 304;
        try {
            $headers = $response->headerFields();
            if ($headers !== $this->lastHeaders || $streamed !== $this->lastStreamed) {
                $this->lastOwnFields = RequestHead::headerFields($response);
                $this->lastHeaders = $headers;
                $this->lastStreamed = $streamed;
                $this->lastLength = -2;
            }
            $date = $this->http->date();
            $length = $streamed || $response->hasTrailers() ? -1 : \strlen($response->body());
            if ($length === $this->lastLength && $status === $this->lastStatus && $date === $this->lastDate) {
                $fields = $this->lastResponseFields;
            } else {
                $fields = $this->lastResponseFields = RequestHead::withStatusAndLength($response, $this->lastOwnFields, $date);
                $this->lastLength = $length;
                $this->lastStatus = $status;
                $this->lastDate = $date;
            }
            if (!$noBody && \is_array($response->trailers())) {
                $response->trailerFields(); // fixed trailers are checked while an honest 500 can still go out
            }
        } catch (\InvalidArgumentException $e) {
            if ($request !== null) {
                $this->http->call->log($request, $e, '{method} {target}: the response cannot be sent: {message}');
            }
            $response = $this->http->call->error();
            $status = 500;
            $streamed = false;
            $fields = RequestHead::responseFields($response, $this->http->date());
        }
        $stream->status = $status;
        $body = $streamed || $noBody ? '' : $response->body();
        $trailers = !$noBody && $response->hasTrailers();
        $endNow = $noBody || (!$streamed && $body === '' && !$trailers);
        if (!$endNow && !$streamed && !$trailers && !$stream->reset && !$this->connection->isClosed()) {
            $this->output->respond($stream, $fields, $body);
            if (!$this->receiving) {
                $this->output->pump();
                $this->connection->flush();
            }
            return true;
        }
        $this->output->headers($stream, $fields, $endNow);
        if ($endNow) {
            $stream->localClosed = true;
            return true;
        }
        if (!$streamed) {
            if ($trailers && !$this->endWithTrailers($stream, $response, $request)) {
                return false;
            }
            $this->queueData($stream, $body, true);
            return true;
        }
        $length = $response->header('content-length');
        $writer = new Http2BodyWriter($this, $stream, $length === null ? null : (int) $length);
        try {
            $this->waitForWindow($stream);
            ($response->producer())($writer);
            if (!$writer->isComplete()) {
                throw BodyLengthMismatch::tooShort((int) $length, $writer->written());
            }
        } catch (ConnectionClosed $e) {
            return false;
        } catch (\Throwable $e) {
            // The head is out: the stream is reset, the client sees the body cut, the connection lives on.
            if ($request !== null) {
                $this->http->call->log($request, $e, '{method} {target}: the streamed response failed, resetting its stream: {message}');
            }
            if (!$stream->reset) {
                $this->resetStream($stream, Frame::INTERNAL_ERROR);
            }
            return false;
        }
        if ($trailers && !$this->endWithTrailers($stream, $response, $request)) {
            return false;
        }
        $this->queueData($stream, '', true);
        return true;
    }

    /**
     * Evaluates the response's trailers for the end of its stream (Http2Output::pump() sends them after
     * the last DATA). A closure that throws, or fields that may not be sent, reset the stream: the client
     * sees the response cut, never ended without them. @return bool false when the stream was reset
     */
    private function endWithTrailers(Http2Stream $stream, Response $response, ?Request $request): bool
    {
        try {
            $fields = [];
            foreach ($response->trailerFields() as [$name, $value]) {
                $fields[] = [\strtolower($name), $value];
            }
        } catch (\Throwable $e) {
            if ($request !== null) {
                $this->http->call->log($request, $e, '{method} {target}: the response\'s trailers failed, resetting its stream: {message}');
            }
            if (!$stream->reset) {
                $this->resetStream($stream, Frame::INTERNAL_ERROR);
            }
            return false;
        }
        $stream->trailers = $fields === [] ? null : $fields;
        return true;
    }

    /**
     * Counts $bytes more of a stream's body in the worker's budget; true when the worker is over it and
     * this connection holds enough to be the one refused (as HttpSession refuses a body).
     */
    private function hold(Http2Stream $stream, int $bytes): bool
    {
        if ($this->http->options->bodyMemory <= 0 || $this->connection->isClosed()) {
            return false;
        }
        $stream->held += $bytes;
        $over = $this->http->budget->update($this->held, $this->held + $bytes);
        $this->held += $bytes;
        return $over;
    }

    /** The stream's body no longer held (answered, refused, reset, or its request ended). */
    private function release(Http2Stream $stream): void
    {
        $stream->body = '';
        if ($stream->held !== 0 && !$this->connection->isClosed()) {
            $this->http->budget->update($this->held, $this->held - $stream->held);
            $this->held -= $stream->held;
        }
        $stream->held = 0;
    }

    /** The worker holds too many request bytes: this stream's request is refused (503), the others go on. */
    private function refuseBody(Http2Stream $stream): void
    {
        $budget = $this->http->budget;
        $held = $budget->held;
        $this->release($stream);
        $count = $budget->refused();
        if ($count !== null) {
            $this->http->logger->warning('{method} {target}: refused: the worker holds {held} bytes of requests being received, over its budget of {budget} (half of --memory-limit); {count} refused since the last such line', [
                'method' => $stream->method, 'target' => $stream->target, 'held' => $held, 'budget' => $budget->limit, 'count' => $count,
            ]);
        }
        $this->answer($stream, ErrorResponse::unavailable('too many requests in transit'));
    }

    /** Our RST_STREAM: the stream is over for both sides. */
    private function resetStream(Http2Stream $stream, int $code): void
    {
        if (!$stream->reset) {
            $this->connection->write(Frame::reset($stream->id, $code));
        }
        $this->dropStream($stream);
    }

    /** A stream reset by either side: its coroutine is cancelled, its answer discarded. */
    private function dropStream(Http2Stream $stream): void
    {
        if ($stream->reset) {
            return;
        }
        $stream->reset = true;
        $stream->localClosed = $stream->remoteClosed = true;
        unset($this->streams[$stream->id]);
        $this->output->forget($stream);
        $stream->out = '';
        $stream->outOffset = 0;
        if (!$stream->running) {
            $this->release($stream);
        }
        if ($stream->running) {
            $this->zombies++;
            $waiter = $stream->waiter;
            if ($waiter !== null && $waiter->isWaiting()) {
                $stream->waiter = null;
                Scheduler::get()->throw($waiter, StreamReset::byPeer($stream->id));
            } else {
                $stream->coroutine?->cancel(new Cancelled("HTTP/2 stream {$stream->id} was reset"));
            }
        }
    }

    /** A stream both sides have ended, whose output is all written and whose application has returned, leaves the table. */
    private function forgetIfDone(Http2Stream $stream): void
    {
        if (!$stream->localClosed || $stream->running || $this->output->isSending($stream)) {
            return;
        }
        if (!$stream->remoteClosed) {
            // Answered before the client finished sending (413, 431): the rest is not wanted (§8.1).
            $this->connection->write(Frame::reset($stream->id, Frame::NO_ERROR));
            $stream->remoteClosed = true;
            $stream->reset = true;
        }
        unset($this->streams[$stream->id]);
        if (!$this->receiving) {
            $this->closeWhenDone();
        }
    }

    /** Gives back what was consumed of the receive windows: one WINDOW_UPDATE per read, not per frame. */
    private function refillWindows(): void
    {
        if ($this->done) {
            return;
        }
        if ($this->unacknowledged >= self::WINDOW_REFILL) {
            $this->connection->write(Frame::windowUpdate(0, $this->unacknowledged));
            $this->receiveWindow += $this->unacknowledged;
            $this->unacknowledged = 0;
        }
        foreach ($this->streams as $stream) {
            if ($stream->unacknowledged >= self::WINDOW_REFILL && !$stream->remoteClosed) {
                $this->connection->write(Frame::windowUpdate($stream->id, $stream->unacknowledged));
                $stream->receiveWindow += $stream->unacknowledged;
                $stream->unacknowledged = 0;
            }
        }
        $this->closeWhenDone();
    }

    /** The worker drains: GOAWAY names the last stream taken; those in flight are answered, then closed. */
    private function drain(): void
    {
        $this->goaway = true;
        $this->connection->write(Frame::goaway($this->lastStream, Frame::NO_ERROR));
        // Called from the connection's update(): the write and the close wait for the loop's next turn.
        Loop::get()->defer(function (): void {
            if (!$this->connection->isClosed()) {
                $this->connection->flush();
                $this->closeWhenDone();
            }
        });
    }

    private function closeWhenDone(): void
    {
        if (($this->goaway || $this->ended) && $this->streams === [] && $this->zombies === 0 && !$this->connection->isClosed()) {
            if (!$this->goaway) {
                $this->goaway = true;
                $this->connection->write(Frame::goaway($this->lastStream, Frame::NO_ERROR));
            }
            $this->done = true;
            $this->connection->closeAfterFlush();
            $this->connection->flush();
        }
    }

    /** A connection error: GOAWAY with its code, and the connection closed once that is written. */
    private function fail(int $code, string $why): void
    {
        if ($this->done) {
            return;
        }
        $level = $code === Frame::ENHANCE_YOUR_CALM ? 'warning' : 'info';
        $this->http->logger->{$level}('HTTP/2 connection from {peer} closed: {error}: {why}', [
            'peer' => $this->peer ?? '-', 'error' => Frame::errorName($code), 'why' => $why,
        ]);
        $this->connection->write(Frame::goaway($this->lastStream, $code, $why));
        $this->done = true;
        $this->goaway = true;
        foreach ($this->streams as $stream) {
            $this->dropStream($stream);
        }
        $this->connection->closeAfterFlush();
    }
}
