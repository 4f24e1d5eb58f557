<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * A 40 MB file to slow readers: it arrives whole and in order, and the worker's memory stays bounded
 * by the chunk size, not the file size. The bound is checked on PHP's own peak allocation in the
 * worker (memory_get_peak_usage() reported by the app on the same, only worker): deterministic,
 * unlike RSS or timing.
 */
final class StaticLargeFileTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/static-app.php';
    /** Far below the file's 40 MB; a whole-file read would need at least 40 MB more. */
    private const MEMORY_BOUND = 8 * 1024 * 1024;

    private static DocRoot $docRoot;
    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$docRoot = new DocRoot(big: true);
        self::$server = new ServerProcess([self::APP, '--workers', '1', '--static', self::$docRoot->root]);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
        self::$docRoot->remove();
    }

    private static function peak(): int
    {
        return (int) RawHttp::get(self::$server->address(), '/app/peak')['body'];
    }

    public function testCurlAtALimitedRateGetsTheWholeFileInBoundedMemory(): void
    {
        $before = self::peak();
        $url = 'http://' . self::$server->address() . '/big.bin';
        $result = Curl::run(['--limit-rate', '40M', '--write-out', "\n%{http_code} %{size_download}", $url], 120.0);
        self::assertSame(0, $result['code'], $result['err']);
        $trailer = \strrpos($result['out'], "\n");
        $body = \substr($result['out'], 0, $trailer);
        self::assertSame('200 ' . DocRoot::BIG_SIZE, \substr($result['out'], $trailer + 1));
        self::assertSame(\sha1_file(self::$docRoot->path('big.bin')), \sha1($body));
        self::assertLessThan($before + self::MEMORY_BOUND, self::peak(), 'the worker held far more than a chunk of the file');
    }

    public function testABigTextFileIsGzippedOnTheFlyInBoundedMemory(): void
    {
        $before = self::peak();
        $file = self::$docRoot->path('big.txt');
        $url = 'http://' . self::$server->address() . '/big.txt';
        $response = Curl::get($url, ['--compressed', '--limit-rate', '40M']);
        self::assertSame('gzip', $response['headers']['content-encoding']);
        self::assertSame('chunked', $response['headers']['transfer-encoding']);
        self::assertSame(\filesize($file), \strlen($response['body']));
        self::assertSame(\sha1_file($file), \sha1($response['body']));
        self::assertLessThan($before + self::MEMORY_BOUND, self::peak(), 'the worker held far more than a chunk of the file');
    }

    public function testASlowSocketReaderWithASmallReceiveBufferGetsEveryByteInOrder(): void
    {
        $before = self::peak();
        $socket = \socket_create(\AF_INET, \SOCK_STREAM, \SOL_TCP);
        \socket_set_option($socket, \SOL_SOCKET, \SO_RCVBUF, 8192);
        \socket_set_option($socket, \SOL_SOCKET, \SO_RCVTIMEO, ['sec' => 30, 'usec' => 0]);
        self::assertTrue(\socket_connect($socket, '127.0.0.1', self::$server->port));
        \socket_write($socket, "GET /big.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        $hash = \hash_init('sha1');
        $received = '';
        $bodyBytes = 0;
        $reads = 0;
        while (true) {
            $chunk = \socket_read($socket, 65536);
            if ($chunk === false || $chunk === '') {
                break;
            }
            if ($received !== null) {
                $received .= $chunk;
                $end = \strpos($received, "\r\n\r\n");
                if ($end === false) {
                    continue;
                }
                self::assertStringContainsString('Content-Length: ' . DocRoot::BIG_SIZE . "\r\n", \substr($received, 0, $end));
                $chunk = \substr($received, $end + 4);
                $received = null;
            }
            \hash_update($hash, $chunk);
            $bodyBytes += \strlen($chunk);
            if (++$reads % 64 === 0) {
                \usleep(2000);   // a slow reader: the server must wait on a full socket, not buffer
            }
        }
        \socket_close($socket);
        self::assertSame(DocRoot::BIG_SIZE, $bodyBytes);
        self::assertSame(\sha1_file(self::$docRoot->path('big.bin')), \hash_final($hash));
        self::assertLessThan($before + self::MEMORY_BOUND, self::peak());
    }

    public function testAReaderThatLeavesMidFileDoesNotHurtTheWorker(): void
    {
        for ($i = 0; $i < 3; $i++) {
            $client = new RawHttp(self::$server->address());
            $client->send("GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
            self::assertNotSame('', (string) \fread($client->socket, 65536));
            $client->close();
        }
        $range = RawHttp::get(self::$server->address(), '/big.bin', ['Range' => 'bytes=-16']);
        self::assertSame(206, $range['status']);
        self::assertSame(\file_get_contents(self::$docRoot->path('big.bin'), false, null, DocRoot::BIG_SIZE - 16), $range['body']);
        // A range deep in the file: the megabyte counter at its start proves the offset.
        $deep = RawHttp::get(self::$server->address(), '/big.bin', ['Range' => 'bytes=' . (37 * 1024 * 1024) . '-' . (37 * 1024 * 1024 + 7)]);
        self::assertSame('00000037', $deep['body']);
    }

    public function testAFileThatShrinksWhileSentCutsTheConnection(): void
    {
        $copy = self::$docRoot->path('shrinking.bin');
        \copy(self::$docRoot->path('big.bin'), $copy);
        $socket = \socket_create(\AF_INET, \SOCK_STREAM, \SOL_TCP);
        \socket_set_option($socket, \SOL_SOCKET, \SO_RCVBUF, 8192);
        \socket_set_option($socket, \SOL_SOCKET, \SO_RCVTIMEO, ['sec' => 30, 'usec' => 0]);
        self::assertTrue(\socket_connect($socket, '127.0.0.1', self::$server->port));
        \socket_write($socket, "GET /shrinking.bin HTTP/1.1\r\nHost: t\r\n\r\n");
        $received = (string) \socket_read($socket, 4096);
        self::assertStringStartsWith('HTTP/1.1 200 OK', $received);
        // The server is now blocked on a full socket, a few megabytes into the file at most: cut the
        // file to 20 MB under it. The promised 40 MB can no longer be sent.
        $handle = \fopen($copy, 'r+');
        \ftruncate($handle, 20 * 1024 * 1024);
        \fclose($handle);
        while (($chunk = \socket_read($socket, 65536)) !== false && $chunk !== '') {
            $received .= $chunk;
        }
        \socket_close($socket);
        $body = \substr($received, \strpos($received, "\r\n\r\n") + 4);
        self::assertSame(20 * 1024 * 1024, \strlen($body), 'the bytes the file still had, then the connection closed');
        self::assertSame(\sha1_file($copy), \sha1($body));
        self::assertSame("Hello, static world\n", RawHttp::get(self::$server->address(), '/hello.txt')['body'], 'the worker serves on');
        self::assertStringContainsString('changed while being sent', self::$server->output());
    }
}
