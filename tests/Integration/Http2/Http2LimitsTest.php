<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http2;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Frame;
use Weft\Tests\Support\RawHttp2;
use Weft\Tests\Support\ServerProcess;

/**
 * The limits a hostile HTTP/2 client probes first, each written as raw frames: the outcome is the one
 * RFC 9113 names (GOAWAY with its error code and the connection closed, or RST_STREAM / a 4xx on that
 * stream only), and after each the same worker serves the next client.
 */
final class Http2LimitsTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/h2-app.php';

    private static ?ServerProcess $server = null;
    private static int $pid = 0;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ServerProcess([self::APP, '--workers', '1', '--send-timeout', '1', '--max-body', '100000']);
        self::$pid = (int) self::served()['body'];
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    protected function tearDown(): void
    {
        // Whatever the client did, the same worker answers the next one.
        self::assertSame(self::$pid, (int) self::served()['body']);
    }

    public function testStreamsBeyondTheConcurrencyLimitAreRefused(): void
    {
        $client = self::client();
        $frames = '';
        for ($id = 1; $id <= 201; $id += 2) {
            $frames .= $client->headers($id, '/sleep?s=0.3');
        }
        $client->send($frames);
        $others = [];
        $answer = $client->response(201, $others);
        self::assertSame(Frame::REFUSED_STREAM, $answer['reset']);
        // The hundred taken are all answered.
        $answered = 0;
        foreach ($others as $frame) {
            $answered += $frame['type'] === Frame::DATA && ($frame['flags'] & Frame::END_STREAM) !== 0 ? 1 : 0;
        }
        while ($answered < 100 && ($frame = $client->read()) !== null) {
            $answered += $frame['type'] === Frame::DATA && ($frame['flags'] & Frame::END_STREAM) !== 0 ? 1 : 0;
        }
        self::assertSame(100, $answered);
        $client->close();
    }

    public function testAHeaderListOverTheLimitIs431OnItsStreamAndTheConnectionGoesOn(): void
    {
        $client = self::client();
        $client->send($client->headers(1, '/', 'GET', ['x-big' => \str_repeat('a', 20000)]));
        self::assertSame(431, $client->response(1)['status']);
        $client->send($client->headers(3, '/echo'));
        self::assertSame(200, $client->response(3)['status']);
        $client->close();

        // An HPACK bomb, written by hand: GET / from the static table, one 4000-byte field added to the
        // dynamic table, then a thousand one-byte references to it (4 MB decoded from 5 KB).
        $client = self::client();
        $bomb = "\x82\x86\x84" . "\x40\x06x-bomb\x7f\xa1\x1e" . \str_repeat('b', 4000) . \str_repeat("\xbe", 1000);
        $client->send(RawHttp2::frame(Frame::HEADERS, Frame::END_HEADERS | Frame::END_STREAM, 1, $bomb));
        self::assertSame(431, $client->response(1)['status']);
        // The connection goes on (its HPACK state is the server's; a PING needs none).
        $client->send(RawHttp2::frame(Frame::PING, 0, 0, 'still-on'));
        self::assertSame('still-on', $client->readUntil(Frame::PING)['payload']);
        $client->close();
    }

    public function testAnUndecodableHeaderBlockIsACompressionError(): void
    {
        $client = self::client();
        // Index 2000 is in neither table.
        $client->send(RawHttp2::frame(Frame::HEADERS, Frame::END_HEADERS | Frame::END_STREAM, 1, "\xff\xd1\x0e"));
        self::assertSame([Frame::COMPRESSION_ERROR, 0], $client->goaway());
        self::assertTrue($client->closed());
    }

    public function testAContinuationFloodIsCut(): void
    {
        $client = self::client();
        $frames = RawHttp2::frame(Frame::HEADERS, 0, 1, $client->encoder->encode([[':method', 'GET']]));
        for ($i = 0; $i < 1000; $i++) {
            $frames .= RawHttp2::frame(Frame::CONTINUATION, 0, 1, '');
        }
        $client->send($frames);
        self::assertSame(Frame::ENHANCE_YOUR_CALM, $client->goaway()[0]);
        self::assertTrue($client->closed());
    }

    public function testRapidResetIsCut(): void
    {
        $client = self::client();
        $frames = '';
        for ($id = 1; $id < 1000; $id += 2) {
            $frames .= $client->headers($id, '/sleep?s=5') . Frame::reset($id, Frame::CANCEL);
        }
        $client->send($frames);
        self::assertSame(Frame::ENHANCE_YOUR_CALM, $client->goaway()[0]);
        self::assertTrue($client->closed());
    }

    public function testSettingsAndPingFloodsAreCut(): void
    {
        $client = self::client();
        $client->send(\str_repeat(Frame::settings([Frame::SETTINGS_ENABLE_PUSH => 0]), 500));
        self::assertSame(Frame::ENHANCE_YOUR_CALM, $client->goaway()[0]);
        self::assertTrue($client->closed());

        $client = self::client();
        $client->send(\str_repeat(RawHttp2::frame(Frame::PING, 0, 0, '12345678'), 500));
        self::assertSame(Frame::ENHANCE_YOUR_CALM, $client->goaway()[0]);
        self::assertTrue($client->closed());

        // A few PINGs are answered.
        $client = self::client();
        $client->send(RawHttp2::frame(Frame::PING, 0, 0, 'abcdefgh'));
        $ack = $client->readUntil(Frame::PING);
        self::assertSame([Frame::ACK, 'abcdefgh'], [$ack['flags'], $ack['payload']]);
        $client->close();
    }

    public function testFrameProtocolErrors(): void
    {
        // A frame above SETTINGS_MAX_FRAME_SIZE (16384).
        $client = self::client();
        $client->send(RawHttp2::frame(Frame::DATA, 0, 1, \str_repeat('x', 20000)));
        self::assertSame(Frame::FRAME_SIZE_ERROR, $client->goaway()[0]);
        self::assertTrue($client->closed());
        // A client never pushes.
        $client = self::client();
        $client->send(RawHttp2::frame(Frame::PUSH_PROMISE, Frame::END_HEADERS, 1, "\0\0\0\2"));
        self::assertSame(Frame::PROTOCOL_ERROR, $client->goaway()[0]);
        self::assertTrue($client->closed());
        // The preface must be followed by SETTINGS.
        $client = new RawHttp2(self::$server->address(), 5.0, false);
        $client->send(Frame::PREFACE . RawHttp2::frame(Frame::PING, 0, 0, '12345678'));
        self::assertSame(Frame::PROTOCOL_ERROR, $client->goaway()[0]);
        self::assertTrue($client->closed());
        // A bad preface that still starts like one is closed without a word of HTTP/2.
        $client = new RawHttp2(self::$server->address(), 5.0, false);
        $client->send("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n");
        self::assertTrue($client->closed());
    }

    public function testAMalformedRequestResetsOnlyItsStream(): void
    {
        $client = self::client();
        // Upper-case field names and connection-specific fields are malformed in HTTP/2.
        $client->send($client->headers(1, '/', 'GET', ['X-Upper' => '1']));
        self::assertSame(Frame::PROTOCOL_ERROR, $client->response(1)['reset']);
        $client->send($client->headers(3, '/', 'GET', ['connection' => 'keep-alive']));
        self::assertSame(Frame::PROTOCOL_ERROR, $client->response(3)['reset']);
        // A body that does not match its content-length.
        $client->send($client->headers(5, '/echo', 'POST', ['content-length' => '10'], false) . RawHttp2::frame(Frame::DATA, Frame::END_STREAM, 5, 'short'));
        self::assertSame(Frame::PROTOCOL_ERROR, $client->response(5)['reset']);
        // --max-body, declared or sent: 413.
        $client->send($client->headers(7, '/echo', 'POST', ['content-length' => '200000'], false));
        self::assertSame(413, $client->response(7)['status']);
        // (Within the stream's window, 256 KiB, then more once the server gives it back.)
        $frames = $client->headers(9, '/echo', 'POST', [], false);
        for ($i = 0; $i < 4; $i++) {
            $frames .= RawHttp2::frame(Frame::DATA, 0, 9, \str_repeat('y', 16000));
        }
        $client->send($frames);
        self::assertNotNull($client->readUntil(Frame::WINDOW_UPDATE, 9));
        $client->send(\str_repeat(RawHttp2::frame(Frame::DATA, 0, 9, \str_repeat('y', 16000)), 3));
        self::assertSame(413, $client->response(9)['status']);
        // A body with trailers, and the connection still fine.
        $head = $client->headers(11, '/echo', 'POST', [], false); // encoded in the order sent: HPACK's table
        $trailers = RawHttp2::frame(Frame::HEADERS, Frame::END_HEADERS | Frame::END_STREAM, 11, $client->encoder->encode([['x-checksum', 'abc']]));
        $client->send($head . RawHttp2::frame(Frame::DATA, 0, 11, 'hello') . $trailers);
        $answer = $client->response(11);
        self::assertSame(200, $answer['status']);
        $echo = \json_decode($answer['body'], true);
        self::assertSame([5, ['x-checksum' => ['abc']], '2.0'], [$echo['length'], $echo['trailers'], $echo['version']]);
        $client->close();
    }

    public function testFlowControlHoldsDataAndAZeroWindowStallIsCutAtTheSendTimeout(): void
    {
        // A window of 0: the head comes, no DATA, until the client opens it.
        $client = self::client([Frame::SETTINGS_INITIAL_WINDOW_SIZE => 0]);
        $client->send($client->headers(1, '/big'));
        $head = $client->readUntil(Frame::HEADERS, 1);
        self::assertNotNull($head);
        $client->send(Frame::windowUpdate(1, 1 << 20) . Frame::windowUpdate(0, 1 << 20));
        self::assertSame(1 << 20, \strlen($client->response(1)['body']));
        $client->close();

        // A client that never opens it: cut after --send-timeout (1 s here) without progress.
        $client = self::client([Frame::SETTINGS_INITIAL_WINDOW_SIZE => 0]);
        $client->send($client->headers(1, '/big'));
        $started = \microtime(true);
        self::assertSame(Frame::FLOW_CONTROL_ERROR, $client->goaway()[0]);
        self::assertTrue($client->closed());
        self::assertGreaterThanOrEqual(0.9, \microtime(true) - $started);
    }

    /**
     * The same header block, byte for byte, is another request once the dynamic table has moved: the
     * decoder's kept block (and the session's head parsed from it) must not outlive the table it was
     * decoded with.
     */
    public function testARepeatedHeaderBlockFollowsTheDynamicTable(): void
    {
        $client = self::client();
        $host = static function (int $stream, string $block) use ($client): ?string {
            $client->send(RawHttp2::frame(Frame::HEADERS, Frame::END_HEADERS | Frame::END_STREAM, $stream, $block));
            $answer = $client->response($stream);
            self::assertSame(200, $answer['status'], "stream $stream");
            return \json_decode($answer['body'], true)['host'];
        };
        // GET, http, then :path /echo and :authority a, both inserted: 62 is the authority, 63 the path.
        self::assertSame('a', $host(1, "\x82\x86\x44\x05/echo\x41\x01a"));
        $indexed = "\x82\x86\xbe\xbf"; // all indexed: the table stays as it is
        self::assertSame('a', $host(3, $indexed));
        self::assertSame('a', $host(5, $indexed));
        // Two insertions: 62 is now :authority b, 63 :path /echo (64 and 65 the older pair).
        self::assertSame('b', $host(7, "\x82\x86\x44\x05/echo\x41\x01b"));
        self::assertSame('b', $host(9, $indexed), 'the same octets, another table');
        self::assertSame('b', $host(11, $indexed));
        $client->close();
    }

    public function testStreamsRunSideBySide(): void
    {
        // A stream in the application does not hold the connection: the next one is read and answered
        // first (on the select loop too, which reads a busy HTTP/1.1 connection no further).
        $client = self::client();
        $client->send($client->headers(1, '/sleep?s=1.5'));
        \usleep(100000);
        $client->send($client->headers(3, '/'));
        $others = [];
        self::assertSame('Hello World', $client->response(3, $others)['body']);
        self::assertSame([], \array_filter($others, static fn (array $frame): bool => $frame['stream'] === 1));
        self::assertSame('slept', $client->response(1)['body']);
        $client->close();
    }

    public function testAStreamResetWhileItRunsIsCancelledAndTheConnectionGoesOn(): void
    {
        $client = self::client();
        $client->send($client->headers(1, '/sleep?s=3'));
        \usleep(100000);
        $client->send(Frame::reset(1, Frame::CANCEL) . $client->headers(3, '/'));
        $answer = $client->response(3);
        self::assertSame([200, 'Hello World'], [$answer['status'], $answer['body']]);
        $client->close();
    }

    public function testTheStreamAndResetLimitsAreOptions(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--http2-max-streams', '2', '--http2-max-resets', '5']);
        $client = new RawHttp2($server->address(), 5.0);
        $settings = $client->readUntil(Frame::SETTINGS);
        $values = [];
        for ($at = 0; $at < \strlen($settings['payload']); $at += 6) {
            ['i' => $id, 'v' => $value] = \unpack('ni/Nv', $settings['payload'], $at);
            $values[$id] = $value;
        }
        self::assertSame(2, $values[Frame::SETTINGS_MAX_CONCURRENT_STREAMS]);
        // Two streams run; the third is refused, and the two are answered.
        $client->send($client->headers(1, '/sleep?s=0.3') . $client->headers(3, '/sleep?s=0.3') . $client->headers(5, '/'));
        $others = [];
        self::assertSame(Frame::REFUSED_STREAM, $client->response(5, $others)['reset']);
        self::assertSame(200, $client->response(1)['status']);
        self::assertSame(200, $client->response(3)['status']);
        // Five resets pass, the sixth closes the connection.
        $frames = '';
        for ($id = 7; $id <= 15; $id += 2) {
            $frames .= $client->headers($id, '/sleep?s=5') . Frame::reset($id, Frame::CANCEL);
        }
        $client->send($frames . RawHttp2::frame(Frame::PING, 0, 0, 'five-ok!'));
        self::assertSame('five-ok!', $client->readUntil(Frame::PING)['payload']);
        $client->send($client->headers(17, '/sleep?s=5') . Frame::reset(17, Frame::CANCEL));
        self::assertSame([Frame::ENHANCE_YOUR_CALM, 17], $client->goaway());
        self::assertTrue($client->closed());
        $server->stop();
        // Out of range: refused at the start, naming the option.
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--http2-max-streams', '0']);
        self::assertNotSame(0, $code);
        self::assertStringContainsString("option '--http2-max-streams' must be at least 1", $out);
    }

    /** @param array<int, int> $settings */
    private static function client(array $settings = []): RawHttp2
    {
        return new RawHttp2(self::$server->address(), 5.0, true, $settings);
    }

    /** @return array{status: ?int, headers: array<string, string>, body: string, reset: ?int} */
    private static function served(): array
    {
        $client = self::client();
        $client->send($client->headers(1, '/pid'));
        $answer = $client->response(1);
        $client->close();
        return $answer;
    }
}
