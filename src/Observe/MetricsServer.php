<?php

declare(strict_types=1);

namespace Weft\Observe;

use Psr\Log\LoggerInterface;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\RequestParser;
use Weft\Server\MasterHook;
use Weft\Socket\Acceptor;
use Weft\Socket\Listener;
use Weft\Socket\ListenOptions;
use Weft\Socket\Socket;

use function Weft\timeout;

/**
 * `--metrics HOST:PORT`: the master answers GET /health and GET /metrics on a port of its own, from the
 * figures the workers report to it every second. It lives in the master, not in a worker, so a scrape
 * works while workers start, drain or crash, and never queues behind application requests.
 *
 * It is deliberately tiny HTTP: one request per connection, a head of at most 8 KB and no body, read
 * within 5 s by the server's own parser, `Connection: close`. Scrapers and load-balancer health checks need nothing more. The 5 s cover the
 * whole exchange (not each read: a client trickling a byte every few seconds would hold a descriptor
 * for hours), and at most MAX_CLIENTS connections are open at once (more are closed unanswered), so
 * clients of this port cannot use up the master's descriptors, which it needs to replace workers.
 */
final class MetricsServer implements MasterHook
{
    private const MAX_HEAD = 8192;
    private const TIMEOUT = 5.0;
    private const MAX_CLIENTS = 64;

    private ?Listener $listener = null;
    private readonly Prometheus $prometheus;
    private readonly ResponseEncoder $encoder;

    public function __construct(private readonly string $address, private readonly LoggerInterface $logger)
    {
        if (!self::valid($address)) {
            throw new \InvalidArgumentException("option '--metrics' expects HOST:PORT (like 127.0.0.1:9100), got '$address'");
        }
        $this->prometheus = new Prometheus();
        $this->encoder = new ResponseEncoder('');
    }

    /** "127.0.0.1:9100", "[::1]:9100", "localhost:0": a host and a port from 0 to 65535. */
    public static function valid(string $address): bool
    {
        return \preg_match('/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/', $address, $m) === 1 && (int) $m[2] <= 65535;
    }

    /** Binds before the master forks, so a busy port is a start-up error, not a log line. */
    public function bind(): string
    {
        $this->listener ??= Listener::listen($this->address, ListenOptions::defaults()->withBacklog(128));
        return $this->listener->address();
    }

    public function start(\Closure $status): void
    {
        $this->bind();
        $listener = $this->listener;
        $this->logger->info('Metrics on http://{address}/metrics, health on /health', ['address' => $listener->address()]);
        Acceptor::start($listener, fn (Socket $client) => $this->serve($client, $status), self::MAX_CLIENTS);
    }

    public function event(string $event): void
    {
    }

    public function workerExited(array $stats): void
    {
        $this->prometheus->retire($stats);
    }

    public function stop(): void
    {
        $this->listener?->close();
    }

    public function forked(): void
    {
        // A worker must not keep the port: after a master crash it would block the next start's bind.
        if ($this->listener !== null) {
            @\fclose($this->listener->resource());
        }
    }

    private function serve(Socket $client, \Closure $status): void
    {
        try {
            timeout(self::TIMEOUT, function () use ($client, $status): void {
                // The server's own request parser, with a small head and no body: HTTP read as everywhere
                // in Weft (the same limits' answers: 400, 413, 414, 431), only smaller.
                $parser = new RequestParser(self::limits());
                try {
                    while (($request = $parser->next()) === null) {
                        $data = $client->read();
                        if ($data === null) {
                            return; // gone before a whole request
                        }
                        $parser->push($data);
                    }
                } catch (HttpError $e) {
                    $client->write($this->encode($e->toResponse()));
                    return;
                }
                $client->write($this->answer($request, $status));
            }, 'A metrics request');
        } catch (\Throwable) {
            // A client that leaves or stalls gets nothing more; the master carries on.
        }
    }

    private static function limits(): Limits
    {
        return new Limits(maxHeaderBytes: self::MAX_HEAD, maxTargetBytes: self::MAX_HEAD, maxBodyBytes: 0);
    }

    private function answer(Request $request, \Closure $status): string
    {
        $method = $request->method();
        $path = $request->path();
        if ($method !== 'GET' && $method !== 'HEAD') {
            return $this->encode(ErrorResponse::methodNotAllowed(['GET', 'HEAD']));
        }
        $head = $method === 'HEAD';
        return match ($path) {
            '/metrics' => $this->response(200, Prometheus::CONTENT_TYPE, $this->prometheus->render($status()), [], $head),
            '/health' => (function () use ($status, $head): string {
                $health = Health::check($status());
                return $this->response($health->healthy ? 200 : 503, 'application/json', $health->json(), $health->healthy ? [] : ['Retry-After' => '1'], $head);
            })(),
            default => $this->encode(ErrorResponse::notFound('try /metrics or /health'), $head),
        };
    }

    /**
     * Through the server's own encoder: the same status lines, header check and framing as every other
     * response of Weft. Always "Connection: close": one request a connection is all this side server serves.
     *
     * @param array<string, string> $headers
     */
    private function response(int $status, string $type, string $body, array $headers = [], bool $head = false): string
    {
        return $this->encode(new Response($status, ['Content-Type' => $type, 'Cache-Control' => 'no-store'] + $headers, $body), $head);
    }

    /** Refusals are ErrorResponse's, as everywhere in Weft; nothing this server answers is cached. */
    private function encode(Response $response, bool $head = false): string
    {
        if (!$response->hasHeader('Cache-Control')) {
            $response = $response->withHeader('Cache-Control', 'no-store');
        }
        return $this->encoder->encode($response, '1.1', false, $head, ResponseEncoder::httpDate(\time()));
    }
}
