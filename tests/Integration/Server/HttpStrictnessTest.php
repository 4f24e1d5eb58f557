<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Http\Fuzz\Wire;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * The shared request vectors (src/Http/Fuzz/vectors.php) against a live server, and what the server
 * does with responses that cannot be sent as the app built them.
 */
final class HttpStrictnessTest extends TestCase
{
    private const APP = \Weft\Http\Fuzz\Fuzzer::ECHO_APP;

    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ServerProcess([self::APP, '--workers', '1', '--header-timeout', '30']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    public function testEveryVectorGetsTheSameAnswerFromTheLiveServer(): void
    {
        $checked = 0;
        foreach (require \Weft\Http\Fuzz\Fuzzer::VECTORS as $vector) {
            // Vectors with other limits need another server; a partial one waits for bytes that never come.
            if (isset($vector['limits']) || ($vector['partial'] ?? false)) {
                continue;
            }
            $name = $vector['name'];
            $methods = \array_column($vector['requests'], 'method');
            $result = Wire::exchange(self::$server->address(), $vector['raw'], $methods);
            self::assertNull($result['malformed'], "$name: malformed response");
            $expected = [];
            foreach ($vector['requests'] as $request) {
                $expected[] = [200, $request['method'] . ' ' . $request['target'] . ' ' . \strlen($request['body'] ?? '')];
            }
            if ($vector['error'] !== null) {
                $expected[] = [$vector['error'], null];
            }
            $actual = \array_map(static fn (array $r) => [$r['status'], $r['status'] === 200 ? ($r['body'] ?: null) : null], $result['responses']);
            foreach ($expected as $i => [$status, $body]) {
                if (($vector['requests'][$i]['method'] ?? '') === 'HEAD') {
                    $expected[$i][1] = null;
                }
            }
            self::assertSame($expected, $actual, $name);
            self::assertTrue($result['closed'], "$name: the connection ends");
            if ($vector['error'] !== null) {
                self::assertSame('close', \strtolower($result['responses'][\count($result['responses']) - 1]['headers']['connection'][0] ?? ''), "$name: an error closes");
            }
            $checked++;
        }
        self::assertGreaterThan(120, $checked);
        self::assertSame(200, RawHttp::get(self::$server->address())['status'], 'and the server serves on');
    }

    public function testAHeadIsJudgedAtItsFirstInvalidByteNotAtTheTimeout(): void
    {
        foreach (["GE\x01T", "get ", "GET / HTTQ", "GET / HTTP/1.1\r\nX(", "GET / HTTP/1.1\r\nX: a\x00"] as $prefix) {
            $client = new RawHttp(self::$server->address(), 5);
            $started = \microtime(true);
            // Byte by byte, and the head never ends: only the bytes so far can condemn it.
            foreach (\str_split($prefix) as $byte) {
                $client->send($byte);
                \usleep(2_000);
            }
            $response = $client->response();
            self::assertSame(400, $response['status'], \json_encode($prefix));
            self::assertLessThan(5.0, \microtime(true) - $started, 'long before the 30 s header timeout');
            self::assertTrue($client->isClosedByPeer());
        }
    }

    public function testResponsesThatCannotBeSentAsBuiltAreLogged500s(): void
    {
        foreach (['/app/interim' => 'Status 101 is an interim response', '/app/stream-interim' => 'Status 103 is an interim response',
            '/app/stream-crlf' => 'Invalid response header "X-Evil"', '/app/stream-bad-length' => 'Content-Length must be a non-negative integer'] as $target => $why) {
            $client = new RawHttp(self::$server->address());
            $client->send("GET $target HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n");
            $response = $client->response();
            self::assertSame(500, $response['status'], $target);
            self::assertStringNotContainsString('pwned', $response['raw']);
            self::assertSame(200, $client->response()['status'], "$target: the connection goes on");
            $client->close();
            ServerProcess::waitFor(fn () => \str_contains(self::$server->output(), $why), 10, "the log to say '$why'");
            self::assertStringContainsString("$target", self::$server->output());
        }
    }

    public function testABoundedFuzzRunAgainstTheLiveServerGetsOnlyWellFormedAgreeingAnswers(): void
    {
        $errorsBefore = \substr_count(self::$server->output(), 'error:');
        $report = (new \Weft\Http\Fuzz\Fuzzer(\Weft\Cli\FuzzCommand::seeds(\Weft\Http\Fuzz\Fuzzer::VECTORS)))
            ->run(20261123, 1500, self::$server->address());
        self::assertSame([], $report['failures']);
        self::assertSame(1500, $report['live']);
        self::assertSame(200, RawHttp::get(self::$server->address())['status'], 'the server serves on');
        self::assertSame($errorsBefore, \substr_count(self::$server->output(), 'error:'), 'no handler or connection error in the log');
    }
}
