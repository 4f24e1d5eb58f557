<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Observe;

use Psr\Log\NullLogger;
use Weft\Http\Parser\HttpError;
use Weft\Observe\MetricsServer;
use Weft\Socket\Socket;
use Weft\Tests\Unit\Coroutine\CoroutineTestCase;

use function Weft\run;

/**
 * The metrics port reads with the server's own RequestParser, answers through its ResponseEncoder (status
 * line, Date, framing, Connection: close) and refuses through ErrorResponse, as every other Weft server does.
 */
final class MetricsServerTest extends CoroutineTestCase
{
    public function testEachAnswerIsTheEncodersWithTheSameHeadAsEver(): void
    {
        $status = ['master' => ['workers' => 1, 'uptime' => 1.0, 'rss' => 2000, 'restarts' => 0, 'reloads' => 0, 'state' => 'running'], 'workers' => []];
        $answers = run(static function () use ($status): array {
            $server = new MetricsServer('127.0.0.1:0', new NullLogger());
            $address = $server->bind();
            $server->start(static fn (): array => $status);
            $answers = [];
            foreach ([
                'metrics' => "GET /metrics HTTP/1.1\r\nHost: m\r\n\r\n",
                'health' => "GET /health HTTP/1.1\r\nHost: m\r\n\r\n",
                'head' => "HEAD /health HTTP/1.1\r\nHost: m\r\n\r\n",
                'missing' => "GET /nothing HTTP/1.1\r\nHost: m\r\n\r\n",
                'post' => "POST /metrics HTTP/1.1\r\nHost: m\r\n\r\n",
                'garbage' => "hello\r\n\r\n",
                'large' => "GET /metrics HTTP/1.1\r\n" . \str_repeat('X: ' . \str_repeat('a', 3000) . "\r\n", 3) . "\r\n",
            ] as $name => $request) {
                $client = Socket::connect($address);
                $client->write($request);
                $answer = '';
                while (($chunk = $client->read()) !== null) {
                    $answer .= $chunk;
                }
                $client->close();
                $answers[$name] = (string) \preg_replace('/\r\nDate: [^\r]+/', "\r\nDate: -", $answer);
            }
            $server->stop();
            return $answers;
        });
        $head = static fn (string $status, string $type, int $length, string $extra = ''): string => "HTTP/1.1 $status\r\nDate: -\r\nContent-Type: $type\r\nCache-Control: no-store\r\n{$extra}Content-Length: $length\r\nConnection: close\r\n\r\n";
        [$metricsHead, $metricsBody] = \explode("\r\n\r\n", $answers['metrics'], 2);
        self::assertSame($head('200 OK', 'text/plain; version=0.0.4; charset=utf-8', \strlen($metricsBody)), $metricsHead . "\r\n\r\n");
        self::assertStringContainsString("\nweft_up 0\n", "\n" . $metricsBody);
        [$healthHead, $healthBody] = \explode("\r\n\r\n", $answers['health'], 2);
        self::assertSame($head('503 Service Unavailable', 'application/json', \strlen($healthBody), "Retry-After: 1\r\n"), $healthHead . "\r\n\r\n");
        self::assertSame($healthHead . "\r\n\r\n", $answers['head'], 'HEAD: the same head, no body');
        self::assertSame("HTTP/1.1 404 Not Found\r\nDate: -\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: 35\r\nConnection: close\r\n\r\nNot Found: try /metrics or /health\n", $answers['missing']);
        self::assertSame("HTTP/1.1 405 Method Not Allowed\r\nDate: -\r\nAllow: GET, HEAD\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: 19\r\nConnection: close\r\n\r\nMethod Not Allowed\n", $answers['post']);
        self::assertStringStartsWith("HTTP/1.1 400 Bad Request\r\n", $answers['garbage']);
        self::assertStringEndsWith("Connection: close\r\n\r\n" . HttpError::badRequest('Invalid method')->getMessage() . "\n", $answers['garbage']);
        self::assertStringStartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n", $answers['large']);
        self::assertStringEndsWith("Connection: close\r\n\r\n" . HttpError::headerTooLarge(8192)->getMessage() . "\n", $answers['large']);
    }
}
