<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Psr\Http\Server\RequestHandlerInterface;
use Psr\Log\LoggerInterface;
use Weft\Http\Message\BadRequest;
use Weft\Http\Message\BodyFraming;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\RequestParser;
use Weft\Http\Psr\PsrHandlerAdapter;
use Weft\Loop\Loop;
use Weft\Server\ConnectionHandler;
use Weft\Server\Executor;
use Weft\Server\IdleSweeper;
use Weft\Server\InFlight;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

/**
 * HTTP/1.1 connection state: keep-alive, pipelining, 100-continue, timeouts, graceful drain. Parsing
 * and encoding are pure and live elsewhere (Parser\RequestParser, Message\ResponseEncoder).
 *
 * The loop shape: read what has arrived, parse every complete request in it, answer them in order
 * into one buffer, write that once, wait for more. Pipelined requests thus cost one write per batch.
 */
final class HttpConnectionHandler implements ConnectionHandler
{
    /** How long a draining worker waits for an idle keep-alive connection's next request. */
    private const DRAIN_IDLE_WAIT = 1.0;

    private readonly \Closure $application;
    private readonly ResponseEncoder $encoder;
    private readonly IdleSweeper $sweeper;
    /** @var array<int, Socket> */
    private array $connections = [];
    /** @var array<int, true> connections waiting for a request, with nothing of one received */
    private array $idle = [];
    private int $nextId = 1;
    private int $requests = 0;
    private bool $draining = false;
    private int $dateSecond = 0;
    private string $date = '';

    public function __construct(
        \Closure|RequestHandlerInterface $application,
        private readonly Executor $executor,
        private readonly LoggerInterface $logger,
        private readonly HttpOptions $options = new HttpOptions(),
    ) {
        $this->application = $application instanceof RequestHandlerInterface
            ? (new PsrHandlerAdapter($application))(...)
            : $application;
        $this->encoder = new ResponseEncoder();
        $this->sweeper = new IdleSweeper(Loop::get());
    }

    public function handle(Socket $socket): void
    {
        $id = $this->nextId++;
        $this->connections[$id] = $socket;
        $parser = new RequestParser($this->options->limits, self::host($socket->remoteAddress()));
        $first = true;
        // Built once per connection: arming a deadline per request must not allocate.
        $closeQuietly = static fn () => $socket->close();
        $answerTimeout = fn () => $this->timeout($socket);
        try {
            while (true) {
                $partial = $parser->hasPartial();
                if (!$partial) {
                    if ($this->draining && !$first) {
                        return;
                    }
                    $this->idle[$id] = true;
                    // A new connection must send its first request within the header timeout; between
                    // keep-alive requests the idle timeout applies, and it is quiet (no 408).
                    $wait = $first ? $this->options->headerTimeout : ($this->draining ? self::DRAIN_IDLE_WAIT : $this->options->idleTimeout);
                    $this->sweeper->arm($id, $wait, $closeQuietly);
                    $requestStarted = null;
                } else {
                    $requestStarted ??= \hrtime(true) / 1e9;
                    $this->sweeper->arm($id, $this->partialTimeout($parser, $requestStarted), $answerTimeout);
                }
                $data = $socket->read();
                unset($this->idle[$id]);
                if ($data === null) {
                    return;
                }
                $first = false;
                $parser->push($data);
                if (!$this->serveBuffered($parser, $socket)) {
                    return;
                }
            }
        } catch (ConnectionClosed|SocketException) {
            // The peer left, or we closed the connection on a timeout: nothing more to say.
        } finally {
            $this->sweeper->disarm($id);
            unset($this->connections[$id], $this->idle[$id]);
            $socket->close();
        }
    }

    public function refuse(Socket $connection, string $reason): void
    {
        try {
            $response = new Response(503, ['Content-Type' => 'text/plain; charset=utf-8', 'Retry-After' => '1'], "Service unavailable: $reason\n");
            $connection->write($this->encoder->encode($response, '1.1', false, false, $this->date()), 1.0);
        } catch (\Throwable) {
        }
        $connection->close();
    }

    public function drain(): void
    {
        $this->draining = true;
        // Idle keep-alive connections get a short while for a request in flight towards us, which is
        // then answered with "Connection: close"; closing them at once would race with that request.
        foreach ($this->idle as $id => $_) {
            $socket = $this->connections[$id];
            $this->sweeper->arm($id, self::DRAIN_IDLE_WAIT, static fn () => $socket->close());
        }
    }

    public function stats(): array
    {
        return ['connections' => \count($this->connections), 'requests' => $this->requests];
    }

    /**
     * Answers every complete request in the parser's buffer with one write.
     *
     * @return bool whether the connection stays open
     */
    private function serveBuffered(RequestParser $parser, Socket $socket): bool
    {
        $out = '';
        $served = 0;
        while (true) {
            try {
                $request = $parser->next();
            } catch (HttpError $e) {
                $out .= $this->encoder->encode($e->toResponse(), '1.1', false, false, $this->date());
                $socket->write($out, $this->options->writeTimeout);
                return false;
            }
            if ($request === null) {
                if ($parser->needsContinue()) {
                    $out .= ResponseEncoder::CONTINUE;
                }
                break;
            }
            $this->requests++;
            $response = $this->respond($request);
            $isHead = $request->method() === 'HEAD';
            $keepAlive = !$this->draining && $this->encoder->keepAlive($request, $response);
            if ($response->isStreamed()) {
                if ($out !== '') {
                    $socket->write($out, $this->options->writeTimeout);
                    $out = '';
                }
                $this->stream($socket, $request, $response, $keepAlive, $isHead);
            } else {
                try {
                    $out .= $this->encoder->encode($response, $request->version(), $keepAlive, $isHead, $this->date());
                } catch (\InvalidArgumentException $e) {
                    // A header that would break the head (CR/LF injection): never send it.
                    $this->logger->error('{target}: the response cannot be sent: {message}', ['target' => $request->target(), 'message' => $e->getMessage()]);
                    $out .= $this->encoder->encode(self::internalError(), $request->version(), $keepAlive, $isHead, $this->date());
                }
            }
            if (!$keepAlive) {
                if ($out !== '') {
                    $socket->write($out, $this->options->writeTimeout);
                }
                return false;
            }
            // A client pipelining without reading our answers must not grow our buffer without bound.
            if (++$served >= $this->options->maxPipeline && $out !== '') {
                $socket->write($out, $this->options->writeTimeout);
                $out = '';
                $served = 0;
            }
        }
        if ($out !== '') {
            $socket->write($out, $this->options->writeTimeout);
        }
        return true;
    }

    private function respond(Request $request): Response
    {
        $running = InFlight::start($request->method(), $request->target());
        try {
            $response = $this->executor->call($this->application, $request);
            if ($response instanceof Response) {
                if ($response->status() < 200) {
                    // 1xx are interim answers (100 Continue is the server's own): as the final answer
                    // the client would wait on for the real one.
                    throw new \UnexpectedValueException("Status {$response->status()} is an interim response, not a final one");
                }
                if ($response->isStreamed()) {
                    // Its head goes out before its body is produced: a head that cannot be sent (1xx,
                    // CR/LF in a field, a Content-Length that is no number) must fail here, as a 500.
                    $this->encoder->encodeHead($response, $request->version(), false, false, '');
                }
                return $response;
            }
            throw new \UnexpectedValueException(\sprintf(
                'The application returned %s; expected a %s',
                \get_debug_type($response),
                Response::class,
            ));
        } catch (BadRequest $e) {
            // The request's body could not be decoded (form, JSON, multipart): the client's fault.
            return new Response(400, ['Content-Type' => 'text/plain; charset=utf-8'], 'Bad Request: ' . $e->getMessage() . "\n");
        } catch (\Throwable $e) {
            $this->logger->error('{method} {target}: {class}: {message}', [
                'method' => $request->method(), 'target' => $request->target(),
                'class' => $e::class, 'message' => $e->getMessage(), 'exception' => $e,
            ]);
            return $this->options->debug
                ? new Response(500, ['Content-Type' => 'text/plain; charset=utf-8'], "Internal Server Error\n\n" . $e . "\n")
                : self::internalError();
        } finally {
            InFlight::end($running);
        }
    }

    private static function internalError(): Response
    {
        return new Response(500, ['Content-Type' => 'text/plain; charset=utf-8'], "Internal Server Error\n");
    }

    private function stream(Socket $socket, Request $request, Response $response, bool &$keepAlive, bool $isHead): void
    {
        $version = $request->version();
        $framing = $this->encoder->framing($response, $version, $isHead);
        if ($framing === BodyFraming::CloseDelimited) {
            $keepAlive = false;
        }
        $socket->write($this->encoder->encodeHead($response, $version, $keepAlive, $isHead, $this->date()), $this->options->writeTimeout);
        if ($framing === BodyFraming::None) {
            return;
        }
        $writer = new SocketBodyWriter($socket, $framing === BodyFraming::Chunked ? $this->encoder : null, $this->options->writeTimeout);
        $running = InFlight::start($request->method(), $request->target());
        try {
            $this->executor->call($response->producer(), $writer);
        } catch (ConnectionClosed $e) {
            throw $e;
        } catch (\Throwable $e) {
            // The head is out: the only honest signal left is to cut the connection mid-body.
            $this->logger->error('Streamed response of {target} failed: {message}', [
                'target' => $request->target(), 'message' => $e->getMessage(), 'exception' => $e,
            ]);
            $keepAlive = false;
            return;
        } finally {
            InFlight::end($running);
        }
        if ($framing === BodyFraming::Chunked) {
            $socket->write($this->encoder->lastChunk(), $this->options->writeTimeout);
        }
    }

    private function partialTimeout(RequestParser $parser, float $started): float
    {
        // Slowloris: the head must be complete within the header timeout of its first byte, however
        // slowly it trickles. A body then only has to keep moving (the idle timeout between reads).
        if ($parser->inBody()) {
            return $this->options->idleTimeout;
        }
        return \max(0.001, $started + $this->options->headerTimeout - \hrtime(true) / 1e9);
    }

    private function timeout(Socket $socket): void
    {
        // Runs from the sweeper, outside the connection's coroutine: write what fits, then close.
        $bytes = $this->encoder->encode(HttpError::requestTimeout()->toResponse(), '1.1', false, false, $this->date());
        @\fwrite($socket->resource(), $bytes);
        $socket->close();
    }

    private function date(): string
    {
        $now = \time();
        if ($now !== $this->dateSecond) {
            $this->dateSecond = $now;
            $this->date = ResponseEncoder::httpDate($now);
        }
        return $this->date;
    }

    private static function host(?string $address): ?string
    {
        if ($address === null) {
            return null;
        }
        $colon = \strrpos($address, ':');
        return \trim($colon === false ? $address : \substr($address, 0, $colon), '[]');
    }
}
