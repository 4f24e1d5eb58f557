<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\Connection;
use Weft\Client\Http\Internal\Dropped;
use Weft\Coroutine\Timeout;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\ParsedResponse;
use Weft\Http\Parser\ResponseParser;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\ConnectOptions;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;
use Weft\Socket\TlsException;

/**
 * An HTTP/1.1 client on Weft sockets: in a coroutine every wait suspends only that coroutine, outside of
 * any (sync mode) the same calls block. One Client may be shared by all the coroutines of a process
 * (make it after fork: idle connections must not be shared between processes).
 *
 * - Keep-alive: connections are reused per origin (scheme, host, port; for https also the TLS
 *   settings) from a small stack of idle ones, the most recently used first. An idle connection the
 *   server has closed is noticed before use; if the server closes one just as a request goes out, the
 *   request is sent again, once, on a fresh connection when it is idempotent or was not fully sent.
 * - Bodies: Content-Length, chunked, or until close; gzip and deflate are decoded (Accept-Encoding is
 *   sent unless RequestOptions says otherwise). Request bodies go with a Content-Length.
 * - Redirects: up to RequestOptions::$maxRedirects; 301/302/303 continue with GET and no body,
 *   307/308 keep the method and the body; Authorization and Cookie are dropped on a change of origin.
 * - Timeouts: connect (TCP + TLS) and total per call, each enforced as a deadline on every wait, so
 *   nothing else runs in sync mode while the call blocks.
 * - Responses are parsed by Weft\Http\Parser\ResponseParser (shared with nothing else but its tests).
 */
final class Client
{
    public const DEFAULT_MAX_IDLE_PER_ORIGIN = 16;
    public const DEFAULT_IDLE_TIMEOUT = 30.0;
    public const DEFAULT_USER_AGENT = 'Weft-HTTP-Client/1.0';

    private const IDEMPOTENT = ['GET' => true, 'HEAD' => true, 'OPTIONS' => true, 'TRACE' => true, 'PUT' => true, 'DELETE' => true];
    private const REDIRECTS = [301 => true, 302 => true, 303 => true, 307 => true, 308 => true];
    /** Request bodies up to this size go out in the same write as the head. */
    private const COALESCE_BYTES = 65536;

    private readonly RequestOptions $defaults;
    /** @var array<string, list<Connection>> idle connections per pool key, most recent last */
    private array $idle = [];
    private float $lastSweep;
    private int $opened = 0;
    private int $reused = 0;
    private int $retried = 0;
    private int $requests = 0;

    public function __construct(
        ?RequestOptions $defaults = null,
        private readonly int $maxIdlePerOrigin = self::DEFAULT_MAX_IDLE_PER_ORIGIN,
        private readonly float $idleTimeout = self::DEFAULT_IDLE_TIMEOUT,
        private readonly string $userAgent = self::DEFAULT_USER_AGENT,
    ) {
        if ($maxIdlePerOrigin < 0) {
            throw new \InvalidArgumentException('The idle connection limit cannot be negative');
        }
        $this->defaults = $defaults ?? RequestOptions::defaults();
        $this->lastSweep = self::now();
    }

    /**
     * @param array<string, string|int|float|list<string|int|float>> $headers names in any case
     * @throws RequestFailed (ConnectFailed, ConnectTimeout, RequestTimeout, ConnectionLost,
     *         MalformedResponse, TooManyRedirects; the first two are also Weft\Socket\ConnectException,
     *         the third a Weft\Coroutine\Timeout, ConnectionLost a Weft\Socket\ConnectionLost); a 4xx or
     *         5xx status is a Response, not an error
     * @throws \InvalidArgumentException for a bad URL, method or header
     */
    public function request(string $method, string $url, array $headers = [], string $body = '', ?RequestOptions $options = null): Response
    {
        $options ??= $this->defaults;
        if (\preg_match('/\A[!#$%&\'*+\-.^_`|~0-9A-Za-z]+\z/', $method) !== 1) {
            throw new \InvalidArgumentException(\sprintf('Invalid HTTP method "%s"', \addcslashes($method, "\0..\37")));
        }
        $current = Url::parse($url);
        $deadline = $options->timeout === null ? null : self::now() + $options->timeout;
        $chain = [(string) $current];
        $redirects = 0;
        try {
            while (true) {
                $raw = $this->exchange($method, $current, $headers, $body, $options, $deadline);
                $location = $raw->header('location');
                if (!isset(self::REDIRECTS[$raw->status()]) || $location === null || $location === '' || $options->maxRedirects === 0) {
                    return $this->toResponse($raw, $method, $current, $options, $redirects);
                }
                try {
                    $next = $current->resolve($location);
                } catch (\InvalidArgumentException $e) {
                    throw MalformedResponse::because($method, (string) $current, 'unusable Location header', $e);
                }
                $chain[] = (string) $next;
                if ($redirects >= $options->maxRedirects) {
                    throw TooManyRedirects::after($method, (string) $current, $options->maxRedirects, $chain);
                }
                if ($raw->status() <= 303 && $method !== 'HEAD') {
                    $method = 'GET';
                    $body = '';
                    $headers = self::without($headers, ['content-type', 'content-length', 'transfer-encoding']);
                }
                if ($next->origin() !== $current->origin()) {
                    $headers = self::without($headers, ['authorization', 'cookie', 'proxy-authorization', 'host']);
                }
                $current = $next;
                $redirects++;
            }
        } catch (Timeout $e) {
            // Ours: a wait ran into the deadline. One with a token belongs to an enclosing Weft\timeout().
            if ($e->token !== null || $options->timeout === null || $e instanceof RequestTimeout) {
                throw $e;
            }
            throw RequestTimeout::of($method, (string) $current, $options->timeout, $e);
        }
    }

    /** @param array<string, string|int|float|list<string|int|float>> $headers */
    public function get(string $url, array $headers = [], ?RequestOptions $options = null): Response
    {
        return $this->request('GET', $url, $headers, '', $options);
    }

    /** @param array<string, string|int|float|list<string|int|float>> $headers */
    public function post(string $url, string $body = '', array $headers = [], ?RequestOptions $options = null): Response
    {
        return $this->request('POST', $url, $headers, $body, $options);
    }

    /**
     * Sends $data as JSON (none when null) and returns the decoded JSON answer (null for an empty body).
     *
     * @param array<string, string|int|float|list<string|int|float>> $headers
     * @throws StatusError for a 4xx or 5xx answer (the response is attached)
     * @throws \JsonException when the answer is not JSON
     */
    public function json(string $method, string $url, mixed $data = null, array $headers = [], ?RequestOptions $options = null): mixed
    {
        $body = '';
        if ($data !== null) {
            $body = \json_encode($data, \JSON_THROW_ON_ERROR | \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_PRESERVE_ZERO_FRACTION);
            if (!self::has($headers, 'content-type')) {
                $headers['Content-Type'] = 'application/json';
            }
        }
        if (!self::has($headers, 'accept')) {
            $headers['Accept'] = 'application/json';
        }
        $response = $this->request($method, $url, $headers, $body, $options);
        if ($response->status() >= 400) {
            throw StatusError::of($method, $response);
        }
        return $response->body() === '' ? null : $response->json();
    }

    /**
     * @return array{requests: int, opened: int, reused: int, retried: int, idle: int}
     *         requests sent (retries and redirect hops included), connections opened, requests sent on a
     *         reused connection, requests retried after a kept-alive connection died, idle connections now
     */
    public function stats(): array
    {
        return [
            'requests' => $this->requests,
            'opened' => $this->opened,
            'reused' => $this->reused,
            'retried' => $this->retried,
            'idle' => \array_sum(\array_map('count', $this->idle)),
        ];
    }

    /** Closes the idle connections. The client stays usable (it opens new ones). */
    public function close(): void
    {
        $idle = $this->idle;
        $this->idle = [];
        foreach ($idle as $stack) {
            foreach ($stack as $connection) {
                $connection->close();
            }
        }
    }

    /** One request on one connection, with the retry on a fresh connection when a kept-alive one died. */
    private function exchange(string $method, Url $url, array $headers, string $body, RequestOptions $options, ?float $deadline): ParsedResponse
    {
        [$head, $closeAfter] = $this->head($method, $url, $headers, $body, $options);
        $key = $url->isHttps() ? $url->origin() . '#' . \md5(\serialize($options->tlsContext())) : $url->origin();
        $connection = $options->keepAlive ? $this->takeIdle($key) : null;
        $retried = false;
        while (true) {
            $reused = $connection !== null;
            if ($connection === null) {
                $connection = $this->open($method, $url, $key, $options, $deadline);
            } else {
                $this->reused++;
            }
            $this->requests++;
            try {
                [$response, $reusable] = $this->roundTrip($connection->socket, $method, $url, $head, $body, $options, $deadline);
            } catch (Dropped $e) {
                $connection->close();
                if ($reused && !$retried && (!$e->sent || isset(self::IDEMPOTENT[$method]))) {
                    $retried = true;
                    $this->retried++;
                    $connection = null;
                    continue;
                }
                throw ConnectionLost::because($method, (string) $url, $e->getMessage(), $e->getPrevious());
            } catch (\Throwable $e) {
                $connection->close();
                throw $e;
            }
            $connection->requests++;
            if ($reusable && !$closeAfter && $options->keepAlive && $response->keepAlive()) {
                $this->park($connection);
            } else {
                $connection->close();
            }
            return $response;
        }
    }

    /** @return array{ParsedResponse, bool} the response and whether the connection can serve another request */
    private function roundTrip(Socket $socket, string $method, Url $url, string $head, string $body, RequestOptions $options, ?float $deadline): array
    {
        try {
            if (\strlen($body) <= self::COALESCE_BYTES) {
                $socket->write($head . $body, self::left($deadline, $options));
            } else {
                $socket->write($head, self::left($deadline, $options));
                $socket->write($body, self::left($deadline, $options));
            }
        } catch (ConnectionClosed $e) {
            // The request is incomplete on the server's side, which cannot have acted on it.
            throw new Dropped('the connection broke while sending the request: ' . $e->getMessage(), false, $e);
        }
        $parser = new ResponseParser(new Limits(maxBodyBytes: $options->maxBodyBytes));
        $received = false;
        while (true) {
            try {
                $response = $parser->next($method);
            } catch (HttpError $e) {
                throw MalformedResponse::because($method, (string) $url, $e->getMessage(), $e);
            }
            if ($response !== null) {
                if (!$response->isInformational()) {
                    return [$response, !$parser->hasPartial()];
                }
                if ($response->status() === 101) {
                    throw MalformedResponse::because($method, (string) $url, 'unexpected 101 Switching Protocols');
                }
                continue; // 100 Continue, 103 Early Hints: the final response follows
            }
            try {
                $chunk = $socket->read(65536, self::left($deadline, $options));
            } catch (ConnectionClosed $e) {
                $chunk = null;
            }
            if ($chunk === null) {
                if (!$received) {
                    throw new Dropped('the server closed the connection without answering', true);
                }
                try {
                    $response = $parser->finish();
                } catch (HttpError $e) {
                    throw ConnectionLost::because($method, (string) $url, 'the server closed the connection before the response was complete', $e);
                }
                if ($response === null || $response->isInformational()) {
                    throw ConnectionLost::because($method, (string) $url, 'the server closed the connection before the response was complete');
                }
                return [$response, false];
            }
            $received = true;
            $parser->push($chunk);
        }
    }

    private function open(string $method, Url $url, string $key, RequestOptions $options, ?float $deadline): Connection
    {
        $start = self::now();
        $left = self::left($deadline, $options);
        $limit = $left === null ? $options->connectTimeout : \min($options->connectTimeout, $left);
        $byDeadline = $left !== null && $left < $options->connectTimeout;
        try {
            $socket = Socket::connect($url->socketAddress(), ConnectOptions::defaults()->withConnectTimeout(\max(0.001, $limit)));
        } catch (\Weft\Socket\ConnectTimeout $e) {
            throw $byDeadline
                ? RequestTimeout::of($method, (string) $url, (float) $options->timeout, $e)
                : ConnectTimeout::opening($method, (string) $url, $options->connectTimeout, $e);
        } catch (SocketException $e) {
            throw ConnectFailed::opening($method, (string) $url, $e);
        }
        if ($url->isHttps()) {
            try {
                $socket->enableClientTls($url->host, $options->tlsContext(), \max(0.001, $limit - (self::now() - $start)));
            } catch (TlsException $e) {
                $socket->close();
                if (\str_contains($e->getMessage(), 'timed out')) {
                    throw $byDeadline
                        ? RequestTimeout::of($method, (string) $url, (float) $options->timeout, $e)
                        : ConnectTimeout::opening($method, (string) $url, $options->connectTimeout, $e);
                }
                throw ConnectFailed::opening($method, (string) $url, $e);
            } catch (\Throwable $e) {
                $socket->close();
                throw $e;
            }
        }
        $this->opened++;
        return new Connection($socket, $key);
    }

    /**
     * @param array<string, mixed> $headers
     * @return array{string, bool} the request head, and whether the request asks to close the connection
     */
    private function head(string $method, Url $url, array $headers, string $body, RequestOptions $options): array
    {
        $fields = '';
        $present = [];
        $close = false;
        foreach ($headers as $name => $values) {
            $name = (string) $name;
            if (\preg_match('/\A[!#$%&\'*+\-.^_`|~0-9A-Za-z]+\z/', $name) !== 1) {
                throw new \InvalidArgumentException(\sprintf('Invalid header name "%s"', \addcslashes($name, "\0..\37\177..\377")));
            }
            $lower = \strtolower($name);
            if ($lower === 'content-length' || $lower === 'transfer-encoding') {
                continue; // the framing is ours: the body goes with its exact length
            }
            foreach (\is_array($values) ? $values : [$values] as $value) {
                $value = \trim((string) $value, " \t");
                if (\strpbrk($value, "\r\n\0") !== false) {
                    throw new \InvalidArgumentException(\sprintf('Invalid value for header "%s": CR, LF and NUL are not allowed', $name));
                }
                $fields .= $name . ': ' . $value . "\r\n";
                if ($lower === 'connection' && \stripos($value, 'close') !== false) {
                    $close = true;
                }
            }
            $present[$lower] = true;
        }
        $head = $method . ' ' . $url->target . " HTTP/1.1\r\n";
        if (!isset($present['host'])) {
            $head .= 'Host: ' . $url->authority() . "\r\n";
        }
        $head .= $fields;
        if (!isset($present['user-agent']) && $this->userAgent !== '') {
            $head .= 'User-Agent: ' . $this->userAgent . "\r\n";
        }
        if ($options->decodeContent && !isset($present['accept-encoding'])) {
            $head .= "Accept-Encoding: gzip, deflate\r\n";
        }
        if ($url->user !== null && !isset($present['authorization'])) {
            $head .= 'Authorization: Basic ' . \base64_encode($url->user . ':' . ($url->password ?? '')) . "\r\n";
        }
        if (!$options->keepAlive && !isset($present['connection'])) {
            $head .= "Connection: close\r\n";
        }
        if ($body !== '' || $method === 'POST' || $method === 'PUT' || $method === 'PATCH') {
            $head .= 'Content-Length: ' . \strlen($body) . "\r\n";
        }
        return [$head . "\r\n", $close];
    }

    private function toResponse(ParsedResponse $raw, string $method, Url $url, RequestOptions $options, int $redirects): Response
    {
        $body = $raw->body();
        $encoding = $raw->header('content-encoding');
        if ($options->decodeContent && $body !== '' && $encoding !== null) {
            $body = $this->decode(\strtolower(\trim($encoding)), $body, $method, $url, $options->maxBodyBytes);
        }
        return new Response($raw->status(), $raw->reason(), $raw->headers(), $body, (string) $url, $raw->version(), $redirects);
    }

    private function decode(string $encoding, string $body, string $method, Url $url, int $limit): string
    {
        $decoded = match ($encoding) {
            'gzip', 'x-gzip' => @\gzdecode($body, $limit),
            // "deflate" is meant to be zlib-wrapped; some servers send raw deflate: accept both.
            'deflate' => @\gzuncompress($body, $limit) ?: @\gzinflate($body, $limit),
            default => $body, // identity, or a coding we did not ask for: left as it came
        };
        if ($decoded === false) {
            throw MalformedResponse::because($method, (string) $url, \sprintf(
                'the %s body does not decode (corrupt, or over %d bytes decoded)',
                $encoding,
                $limit,
            ));
        }
        return $decoded;
    }

    private function takeIdle(string $key): ?Connection
    {
        $now = self::now();
        while (isset($this->idle[$key]) && $this->idle[$key] !== []) {
            $connection = \array_pop($this->idle[$key]);
            if ($now - $connection->idleSince <= $this->idleTimeout && $connection->isReusable()) {
                return $connection;
            }
            $connection->close();
        }
        unset($this->idle[$key]);
        return null;
    }

    private function park(Connection $connection): void
    {
        $now = self::now();
        $connection->idleSince = $now;
        if (\count($this->idle[$connection->key] ?? []) >= $this->maxIdlePerOrigin) {
            $connection->close();
        } else {
            $this->idle[$connection->key][] = $connection;
        }
        if ($now - $this->lastSweep > $this->idleTimeout) {
            $this->lastSweep = $now;
            $this->sweep($now);
        }
    }

    /** Closes connections idle longer than the idle timeout, for origins not asked for lately. */
    private function sweep(float $now): void
    {
        foreach ($this->idle as $key => $stack) {
            $keep = [];
            foreach ($stack as $connection) {
                if ($now - $connection->idleSince > $this->idleTimeout) {
                    $connection->close();
                } else {
                    $keep[] = $connection;
                }
            }
            if ($keep === []) {
                unset($this->idle[$key]);
            } else {
                $this->idle[$key] = $keep;
            }
        }
    }

    /** Seconds left before the deadline (null: none). @throws Timeout when none are left */
    private static function left(?float $deadline, RequestOptions $options): ?float
    {
        if ($deadline === null) {
            return null;
        }
        $left = $deadline - self::now();
        if ($left <= 0) {
            throw Timeout::after((float) $options->timeout, 'Request');
        }
        return $left;
    }

    /** @param array<string, mixed> $headers */
    private static function has(array $headers, string $name): bool
    {
        foreach ($headers as $key => $_) {
            if (\strcasecmp((string) $key, $name) === 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param array<string, mixed> $headers
     * @param list<string> $names lowercase
     * @return array<string, mixed>
     */
    private static function without(array $headers, array $names): array
    {
        foreach ($headers as $key => $_) {
            if (\in_array(\strtolower((string) $key), $names, true)) {
                unset($headers[$key]);
            }
        }
        return $headers;
    }

    private static function now(): float
    {
        return \hrtime(true) / 1e9;
    }
}
