<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * Requests nginx refuses, against a real `bin/weft serve`, through the extension's head parser and
 * through the PHP one (WEFT_NATIVE_HTTP=0): targets no application should see get a 400 and never reach
 * it, and a duplicate or invalid Host, Content-Length or Transfer-Encoding line is answered as soon as
 * the line is complete, long before the head (which never ends here) or the 30 s header timeout.
 */
final class RequestRefusalTest extends TestCase
{
    private const APP = \Weft\Http\Fuzz\Fuzzer::ECHO_APP;

    /** @var array<string, ServerProcess> one server per head parser, shared by the cases */
    private static array $servers = [];

    public static function tearDownAfterClass(): void
    {
        foreach (self::$servers as $server) {
            $server->stop();
        }
        self::$servers = [];
    }

    /** The default head parser (native with the extension) or the PHP one (WEFT_NATIVE_HTTP=0). */
    private static function server(string $parser): ServerProcess
    {
        return self::$servers[$parser] ??= new ServerProcess(
            [self::APP, '--workers', '1', '--header-timeout', '30'],
            $parser === 'php' ? ['WEFT_NATIVE_HTTP' => '0'] : [],
        );
    }

    /** @return iterable<string, array{string, string, string}> parser, raw request(s), the 400's reason */
    public static function refusedTargets(): iterable
    {
        $cases = [
            'CONNECT authority-form' => ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 'CONNECT is not supported'],
            'CONNECT IPv6 authority' => ["CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n", 'CONNECT is not supported'],
            'CONNECT origin-form' => ["CONNECT /x HTTP/1.1\r\nHost: x\r\n\r\n", 'CONNECT is not supported'],
            'OPTIONS *' => ["OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 'The asterisk-form (OPTIONS *) is not supported'],
            'user and password in the target' => ["GET http://user:secret@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", 'Userinfo in the request target'],
            'user in the target' => ["GET http://user@example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n", 'Userinfo in the request target'],
            '/../' => ["GET /../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 'The request target climbs above the root'],
            '/a/../../' => ["GET /a/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 'The request target climbs above the root'],
            '%2e%2e' => ["GET /static/%2e%2e/%2E%2E/x HTTP/1.1\r\nHost: x\r\n\r\n", 'The request target climbs above the root'],
            '%2f..%2f' => ["GET /a%2f..%2f..%2fx HTTP/1.1\r\nHost: x\r\n\r\n", 'The request target climbs above the root'],
            'absolute-form /../' => ["GET http://example.com/../x HTTP/1.1\r\nHost: example.com\r\n\r\n", 'The request target climbs above the root'],
            '/.. after a good request' => ["GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /.. HTTP/1.1\r\nHost: x\r\n\r\n", 'The request target climbs above the root'],
        ];
        foreach (['native', 'php'] as $parser) {
            foreach ($cases as $name => [$raw, $why]) {
                yield "$name ($parser)" => [$parser, $raw, $why];
            }
        }
    }

    #[DataProvider('refusedTargets')]
    public function testTargetsNginxRefusesNeverReachTheApplication(string $parser, string $raw, string $why): void
    {
        $client = (new RawHttp(self::server($parser)->address(), 10))->send($raw);
        $response = $client->response();
        if (\str_starts_with($raw, 'GET / HTTP')) {
            self::assertSame('GET / 0', $response['body']);
            $response = $client->response();
        }
        // The strict app would echo the target with a 200: a 400 with the reason means it never saw it.
        self::assertSame(400, $response['status'], $response['raw']);
        self::assertSame("$why\n", $response['body']);
        self::assertSame('close', $response['headers']['connection'] ?? null);
        self::assertTrue($client->isClosedByPeer(), 'and the connection ends');
    }

    /** @return iterable<string, array{string}> */
    public static function parsers(): iterable
    {
        yield 'native' => ['native'];
        yield 'php' => ['php'];
    }

    #[DataProvider('parsers')]
    public function testTargetsWithinTheRootReachTheApplicationAsSent(string $parser): void
    {
        // Dot-segments that stay within the root are left as sent (nginx's $request_uri is too).
        foreach (['/a/../b', '/a/./b/..', '/a?next=/../../b', '/.well-known/x', '/a/.../b', '/a/..%2e/b'] as $target) {
            $response = RawHttp::get(self::server($parser)->address(), $target);
            self::assertSame(200, $response['status'], $target);
            self::assertSame("GET $target 0", $response['body']);
        }
        $client = (new RawHttp(self::server($parser)->address()))->send("GET http://example.com/a HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
        self::assertSame('GET http://example.com/a 0', $client->response()['body']);
    }

    /** curl sending these unchanged (--path-as-is, --request-target, a proxy tunnel): each is refused. */
    public function testCurlWithoutItsOwnCleanupGetsTheRefusals(): void
    {
        if (!\extension_loaded('curl')) {
            self::markTestSkipped('the curl extension is not loaded');
        }
        $base = 'http://' . self::server('native')->address();
        self::assertSame([400, "The request target climbs above the root\n"], self::curl($base . '/../../etc/passwd', [\CURLOPT_PATH_AS_IS => true]));
        self::assertSame([400, "The asterisk-form (OPTIONS *) is not supported\n"], self::curl($base, [\CURLOPT_CUSTOMREQUEST => 'OPTIONS', \CURLOPT_REQUEST_TARGET => '*']));
        // curl as a client of an HTTP proxy: the tunnel it asks for with CONNECT is refused.
        $handle = \curl_init('http://example.com/');
        \curl_setopt_array($handle, [\CURLOPT_PROXY => $base, \CURLOPT_HTTPPROXYTUNNEL => true, \CURLOPT_RETURNTRANSFER => true, \CURLOPT_TIMEOUT => 10]);
        self::assertFalse(\curl_exec($handle));
        self::assertSame(400, \curl_getinfo($handle, \CURLINFO_HTTP_CONNECTCODE));
        \curl_close($handle);
        // Without --path-as-is curl removes the dot-segments itself, and the request is served.
        self::assertSame([200, 'GET /etc/passwd 0'], self::curl($base . '/../../etc/passwd'));
    }

    /** @return iterable<string, array{string, string, int, string}> parser, a head cut after its offending line, status, reason */
    public static function condemnedLines(): iterable
    {
        $cases = [
            'two Content-Length' => ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n", 400, 'More than one Content-Length field'],
            'bad Content-Length' => ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n", 400, 'Invalid Content-Length'],
            'Content-Length over the limit' => ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n", 413, 'Body exceeds 8388608 bytes'],
            'bad Host' => ["GET / HTTP/1.1\r\nHost: a b\r\n", 400, 'Invalid Host header'],
            'two Hosts' => ["GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\nhost: a\r\n", 400, 'More than one Host header'],
            'unknown Transfer-Encoding' => ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n", 501, 'Transfer-Encoding other than chunked is not supported'],
            'chunked not last' => ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, x\r\n", 400, 'Invalid Transfer-Encoding'],
            'two Transfer-Encoding' => ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400, 'More than one Transfer-Encoding field'],
            'Content-Length and Transfer-Encoding' => ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n", 400, 'Both Content-Length and Transfer-Encoding'],
            'Transfer-Encoding in HTTP/1.0' => ["POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n", 400, 'Transfer-Encoding in an HTTP/1.0 request'],
            // The request line alone condemns these.
            'CONNECT' => ["CONNECT example.com:443 HTTP/1.1\r\n", 400, 'CONNECT is not supported'],
            '/../' => ["GET /../x HTTP/1.1\r\n", 400, 'The request target climbs above the root'],
        ];
        foreach (['native', 'php'] as $parser) {
            foreach ($cases as $name => [$head, $status, $why]) {
                yield "$name ($parser)" => [$parser, $head, $status, $why];
            }
        }
    }

    #[DataProvider('condemnedLines')]
    public function testAFramingOrHostLineIsRefusedAsSoonAsItEnds(string $parser, string $head, int $status, string $why): void
    {
        $client = new RawHttp(self::server($parser)->address(), 5);
        $started = \microtime(true);
        // A line at a time, as a slow client sends them; the blank line that would end the head never comes.
        foreach (\explode("\r\n", \rtrim($head, "\r\n")) as $line) {
            $client->send($line . "\r\n");
            \usleep(5_000);
        }
        $response = $client->response();
        self::assertSame($status, $response['status'], $response['raw']);
        self::assertSame("$why\n", $response['body']);
        self::assertLessThan(5.0, \microtime(true) - $started, 'answered long before the 30 s header timeout');
        self::assertTrue($client->isClosedByPeer(), 'and the connection ends');
    }

    /** @return array{int, string} status and body */
    private static function curl(string $url, array $options = []): array
    {
        $handle = \curl_init($url);
        \curl_setopt_array($handle, $options + [\CURLOPT_RETURNTRANSFER => true, \CURLOPT_TIMEOUT => 10]);
        $body = \curl_exec($handle);
        self::assertIsString($body, \curl_error($handle));
        $status = (int) \curl_getinfo($handle, \CURLINFO_RESPONSE_CODE);
        \curl_close($handle);
        return [$status, $body];
    }
}
