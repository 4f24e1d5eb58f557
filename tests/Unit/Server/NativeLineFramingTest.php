<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Ext\Conn;
use Weft\Ext\Epoll;
use Weft\Loop\Loop;
use Weft\Loop\NativeDriver;
use Weft\Socket\LineSplitter;
use Weft\Socket\LineTooLong;

/**
 * Weft\Ext\Conn::frameLines() (ext/weft_line.c): a read of whole lines within the limit comes cut into
 * exactly the [line, ending] pairs LineSplitter::split() gives for the same bytes; any other read comes
 * as bytes alone, for PHP's splitter (and its error for a line too long). Outside and inside a coroutine.
 */
final class NativeLineFramingTest extends TestCase
{
    private const MAX = 8;

    private NativeDriver $loop;

    protected function setUp(): void
    {
        if (!\class_exists(Conn::class, false)) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $driver = Loop::reset('epoll');
        if (!$driver instanceof NativeDriver) {
            self::markTestSkipped('not the native loop');
        }
        $this->loop = $driver;
    }

    protected function tearDown(): void
    {
        Loop::reset();
    }

    /** Runs $body outside, then inside a coroutine (on a fresh loop each time). */
    private function both(\Closure $body): void
    {
        self::assertNull(\Weft\current());
        $body();
        $this->loop = Loop::reset('epoll');
        \Weft\run(static function () use ($body): void {
            self::assertNotNull(\Weft\current(), 'inside a coroutine');
            $body();
        });
    }

    /** @return list<string> reads, each sent alone; the comment says whether C cuts it */
    private static function vectors(): array
    {
        return [
            "hello\n",                       // cut
            "hello\r\n",                     // cut: the "\r" is the ending's
            "a\nb\r\n\nc\n",                 // cut: four lines, endings kept one by one
            "\n",                            // cut: one empty line
            "\r\n",                          // cut: one empty line, "\r\n"
            "12345678\r\n",                  // cut: exactly the limit
            "a\r\r\n",                       // cut: "a\r" ending "\r\n"
            "x\0y\n",                        // cut: a NUL is a byte like any other
            "\xff\xfe\n",                    // cut: not UTF-8, not our business
            "123456789\n",                   // bytes: one over the limit (PHP says so)
            "ok\n123456789\n",               // bytes: a line too long after a good one
            "partial",                       // bytes: no ending yet
            "a\nrest",                       // bytes: a line and the start of the next
            "a\r",                           // bytes: an ending half arrived
            \str_repeat("l\n", 1025),        // bytes: more lines than one batch
            \str_repeat("l\n", 1024),        // cut: exactly one batch
        ];
    }

    public function testWholeLinesComeCutAsTheSplitterCutsThem(): void
    {
        $this->both(function (): void {
            $splitter = new LineSplitter(self::MAX);
            foreach (self::vectors() as $bytes) {
                [$data, $lines] = $this->readOnce($bytes, fn (Conn $conn) => $conn->frameLines(self::MAX));
                self::assertSame($bytes, $data, 'the bytes come whole either way');
                $buffer = $bytes;
                try {
                    $expected = $splitter->split($buffer);
                    $complete = $buffer === '';
                } catch (LineTooLong) {
                    $expected = null;
                    $complete = false;
                }
                if ($complete && \count($expected) <= 1024) {
                    self::assertSame($expected, $lines, \json_encode($bytes) . ': the splitter\'s pairs');
                } else {
                    self::assertNull($lines, \json_encode($bytes) . ': left to PHP');
                }
            }
        });
    }

    public function testFrameNothingAndFrameRequestsTurnItOff(): void
    {
        $this->both(function (): void {
            [, $lines] = $this->readOnce("a\n", static function (Conn $conn): void {
                $conn->frameLines(self::MAX);
                $conn->frameNothing();
            });
            self::assertNull($lines);
            $limits = new \Weft\Http\Parser\Limits();
            [, $request] = $this->readOnce("a\n", static function (Conn $conn) use ($limits): void {
                $conn->frameLines(self::MAX);
                $conn->frameRequests($limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet, null);
            });
            self::assertNull($request, 'HTTP framing, which cuts no lines');
            [, $lines] = $this->readOnce("a\n", static function (Conn $conn) use ($limits): void {
                $conn->frameRequests($limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet, null);
                $conn->frameLines(self::MAX);
            });
            self::assertSame([['a', "\n"]], $lines, 'frameLines() replaces frameRequests()');
        });
    }

    public function testALimitBelowOneIsRefused(): void
    {
        [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), static function (): void {
        });
        try {
            $this->expectException(\ValueError::class);
            $conn->frameLines(0);
        } finally {
            $conn->close();
        }
    }

    public function testAClosedConnIgnoresIt(): void
    {
        [$server] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), static function (): void {
        });
        $conn->close();
        $conn->frameLines(self::MAX);
        self::assertSame(-1, $conn->fd());
    }

    /**
     * Sends $bytes as one write and returns the one read's arguments: the bytes and the second argument.
     *
     * @param \Closure(Conn): void $setUp
     * @return array{string|false, mixed}
     */
    private function readOnce(string $bytes, \Closure $setUp): array
    {
        [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \stream_set_blocking($client, false);
        $got = null;
        $conn = null;
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), function (string|false $data, mixed $extra = null) use (&$got, &$conn): void {
            $got = [$data, $extra];
            $conn->close();
        }, true);
        \fclose($server);
        $setUp($conn);
        \fwrite($client, $bytes);
        $this->loop->run();
        \fclose($client);
        self::assertNotNull($got, 'one read');
        return $got;
    }
}
