<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Coroutine\Cancelled;
use Weft\Coroutine\Coroutine;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\RequestParser;
use Weft\Socket\Acceptor;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Listener;
use Weft\Socket\Socket;

use function Weft\current;
use function Weft\go;

/**
 * A tiny HTTP/1.1 server that answers every request with 200 "ok" after a delay: the slow upstream of
 * the client tests and the upstream benchmark. Built directly on Listener, Socket, coroutines and the
 * request parser, not on Weft's HTTP server, so it can test the client on its own.
 *
 * The delay is the one given at construction, or the request's `?delay=SECONDS`. Keep-alive and
 * pipelining work (requests on one connection are answered in order); every connection has a coroutine
 * of its own, so any number of requests wait at once.
 *
 *   $server = DelayServer::listen('127.0.0.1:0', 0.2);
 *   $server->start();              // accepts in a coroutine; or run() to serve in the current one
 *   ... $server->url() ...
 *   $server->stop();
 */
final class DelayServer
{
    /** Every answer but a refusal: written as it is, no Date to format per request (the upstream of a benchmark). */
    private const RESPONSE = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n";

    private ?Coroutine $acceptor = null;
    /** @var array<int, array{Socket, ?Coroutine}> open connections and their coroutines, by socket object id */
    private array $connections = [];
    private int $accepted = 0;
    private int $served = 0;
    private bool $stopped = false;

    private function __construct(private readonly Listener $listener, private readonly float $delay)
    {
    }

    public static function listen(string $address = '127.0.0.1:0', float $delay = 0.0): self
    {
        if ($delay < 0) {
            throw new \InvalidArgumentException('The delay cannot be negative');
        }
        return new self(Listener::listen($address), $delay);
    }

    /** Accepts connections in a coroutine of its own and returns at once. */
    public function start(): Coroutine
    {
        return $this->acceptor ??= go($this->run(...));
    }

    /** Accepts and serves connections in the calling coroutine until stop(). */
    public function run(): void
    {
        Acceptor::run($this->listener, $this->serve(...));
    }

    /** Stops accepting and closes every connection; requests being delayed are not answered. */
    public function stop(): void
    {
        if ($this->stopped) {
            return;
        }
        $this->stopped = true;
        $this->listener->close();
        $connections = $this->connections;
        $this->connections = [];
        foreach ($connections as [$socket, $coroutine]) {
            $socket->close();
            $coroutine?->cancel(); // wakes one sleeping through its delay
        }
    }

    public function port(): int
    {
        return $this->listener->port();
    }

    public function address(): string
    {
        return $this->listener->address();
    }

    public function url(string $path = '/'): string
    {
        return 'http://' . $this->listener->address() . $path;
    }

    /** @return array{connections: int, requests: int, open: int} connections accepted, requests answered, connections open now */
    public function stats(): array
    {
        return ['connections' => $this->accepted, 'requests' => $this->served, 'open' => \count($this->connections)];
    }

    private function serve(Socket $socket): void
    {
        $this->accepted++;
        $this->connections[\spl_object_id($socket)] = [$socket, current()];
        $parser = new RequestParser();
        try {
            while (($data = $socket->read()) !== null) {
                $parser->push($data);
                while (($request = $parser->next()) !== null) {
                    $delay = $request->queryParam('delay');
                    $seconds = \is_numeric($delay) ? \max(0.0, (float) $delay) : $this->delay;
                    if ($seconds > 0) {
                        \Weft\sleep($seconds);
                    }
                    $keepAlive = $request->keepAlive();
                    $socket->write(self::RESPONSE . ($keepAlive ? '' : "Connection: close\r\n") . "\r\nok");
                    $this->served++;
                    if (!$keepAlive) {
                        return;
                    }
                }
            }
        } catch (HttpError $e) {
            try {
                // As Weft's server answers it (the status's own reason, its message), and closed.
                $socket->write((new ResponseEncoder(''))->encode($e->toResponse(), '1.1', false, false, ResponseEncoder::httpDate(\time())));
            } catch (ConnectionClosed) {
            }
        } catch (ConnectionClosed | Cancelled) {
            // The client went away, or stop() closed the connection.
        } finally {
            unset($this->connections[\spl_object_id($socket)]);
        }
    }
}
