<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Http;

use Weft\Socket\ConnectionClosed;
use Weft\Socket\Listener;
use Weft\Socket\ListenOptions;
use Weft\Socket\Socket;

use function Weft\go;

/**
 * A purpose-built raw HTTP server for one test, in coroutines of the test process: each connection runs
 * $handler(Socket, TestServer) in a coroutine of its own. Must be used inside Weft\run(), and stopped.
 */
final class TestServer
{
    public int $connections = 0;
    /** @var list<array{method: string, target: string, headers: array<string, string>, body: string, connection: int}> */
    public array $requests = [];
    /** @var list<Socket> */
    private array $sockets = [];
    private bool $stopped = false;

    private function __construct(public readonly Listener $listener, private readonly \Closure $handler)
    {
    }

    /** @param \Closure(Socket, TestServer, int): void $handler gets the connection's number (from 1) */
    public static function start(\Closure $handler, ?ListenOptions $options = null): self
    {
        $server = new self(Listener::listen('127.0.0.1:0', $options), $handler);
        go($server->acceptLoop(...));
        return $server;
    }

    public function url(string $path = '/'): string
    {
        return 'http://' . $this->listener->address() . $path;
    }

    public function stop(): void
    {
        if ($this->stopped) {
            return;
        }
        $this->stopped = true;
        $this->listener->close();
        foreach ($this->sockets as $socket) {
            $socket->close();
        }
    }

    /**
     * Reads one request (head, and a Content-Length body); null when the client closed the connection.
     *
     * @return array{method: string, target: string, headers: array<string, string>, body: string, connection: int}|null
     */
    public function readRequest(Socket $socket, int $connection = 0): ?array
    {
        $line = $socket->readLine();
        if ($line === null) {
            return null;
        }
        [$method, $target] = \explode(' ', $line);
        $headers = [];
        while (($line = $socket->readLine()) !== null && $line !== '') {
            [$name, $value] = \explode(':', $line, 2);
            $headers[\strtolower($name)] = \trim($value);
        }
        $length = (int) ($headers['content-length'] ?? 0);
        $body = $length > 0 ? $socket->readExactly($length) : '';
        return $this->requests[] = ['method' => $method, 'target' => $target, 'headers' => $headers, 'body' => $body, 'connection' => $connection];
    }

    /** A complete response with a Content-Length. @param array<string, string> $headers */
    public static function response(int $status, string $body = '', array $headers = [], string $reason = 'OK'): string
    {
        $head = "HTTP/1.1 $status $reason\r\n";
        foreach ($headers + ['Content-Length' => (string) \strlen($body)] as $name => $value) {
            $head .= "$name: $value\r\n";
        }
        return $head . "\r\n" . $body;
    }

    private function acceptLoop(): void
    {
        while (!$this->stopped) {
            try {
                $socket = $this->listener->accept();
            } catch (ConnectionClosed) {
                return;
            }
            $this->sockets[] = $socket;
            $number = ++$this->connections;
            go(function () use ($socket, $number): void {
                try {
                    ($this->handler)($socket, $this, $number);
                } catch (ConnectionClosed) {
                    // the client or stop() closed it
                } finally {
                    $socket->close();
                }
            });
        }
    }
}
