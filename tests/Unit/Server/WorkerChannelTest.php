<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Server\MalformedMessage;
use Weft\Server\WorkerChannel;
use Weft\Server\WorkerMessage;

/** The master/worker channel over a real socket pair, both ends the same class, driven by a real loop. */
final class WorkerChannelTest extends TestCase
{
    private Driver $driver;
    /** @var list<WorkerMessage> */
    private array $received = [];
    /** @var list<string> */
    private array $faults = [];
    private int $closed = 0;

    protected function setUp(): void
    {
        $this->driver = Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    public function testEveryKindCrossesTheLoopInOrderWithItsFields(): void
    {
        [$worker, $master] = $this->pair();
        $stats = ['pid' => 42, 'requests' => 7, 'connections' => 2, 'running' => [['request' => 'GET /', 'since' => 1.5]], 'lag_max_ms' => 0.3];
        $worker->send(WorkerMessage::ready($stats));
        $worker->send(WorkerMessage::stats(['requests' => 8] + $stats));
        $worker->send(WorkerMessage::draining($stats));
        $worker->send(WorkerMessage::bootFailed("syntax error, unexpected '}'\nin app.php"));
        $this->runUntil(fn () => \count($this->received) === 4);

        self::assertSame(['ready', 'stats', 'draining', 'boot-failed'], \array_map(static fn ($m) => $m->type, $this->received));
        self::assertSame($stats, $this->received[0]->stats);
        self::assertSame(8, $this->received[1]->stats['requests']);
        self::assertSame("syntax error, unexpected '}'\nin app.php", $this->received[3]->error, 'a line break inside a field does not break the framing');
        self::assertSame([], $this->faults);
        self::assertSame(0, $master->queued());
    }

    public function testAFrameSplitAcrossReadsAndOneLargerThanAReadChunkArriveWhole(): void
    {
        [$rawWorker, $master] = $this->rawPair();
        $frame = WorkerMessage::stats(['pid' => 1, 'requests' => 1, 'connections' => 0, 'big' => \str_repeat('x', 300_000)])->encode() . "\n";
        \fwrite($rawWorker, \substr($frame, 0, 10));
        $master->receive();
        self::assertSame([], $this->received, 'nothing before the frame is complete');
        \stream_set_blocking($rawWorker, false);
        $rest = \substr($frame, 10);
        $this->driver->onWritable($rawWorker, function (string $id) use (&$rest, $rawWorker): void {
            $rest = (string) \substr($rest, (int) \fwrite($rawWorker, $rest));
            if ($rest === '') {
                $this->driver->cancel($id);
            }
        });
        $this->runUntil(fn () => $this->received !== []);
        self::assertCount(1, $this->received);
        self::assertSame(300_000, \strlen($this->received[0]->stats['big']));
    }

    /** @return iterable<string, array{string, string}> */
    public static function malformed(): iterable
    {
        yield 'not JSON' => ["ready\n", 'not JSON'];
        yield 'not an object' => ["[1,2]\n", 'not an object with a "type"'];
        yield 'no type' => ["{\"stats\":{}}\n", 'not an object with a "type"'];
        yield 'unknown type' => ["{\"type\":\"shutdown\",\"stats\":{}}\n", "unknown message type 'shutdown'"];
        yield 'stats missing' => ["{\"type\":\"stats\"}\n", 'holds exactly an object "stats"'];
        yield 'stats a list' => ["{\"type\":\"ready\",\"stats\":[1]}\n", 'holds exactly an object "stats"'];
        yield 'extra field' => ["{\"type\":\"stats\",\"stats\":{\"pid\":1,\"requests\":0,\"connections\":0},\"x\":1}\n", 'holds exactly an object "stats"'];
        yield 'mistyped figure' => ["{\"type\":\"stats\",\"stats\":{\"pid\":1,\"requests\":\"7\",\"connections\":0}}\n", 'the "requests" of a stats message must be an integer'];
        yield 'running not a list' => ["{\"type\":\"stats\",\"stats\":{\"pid\":1,\"requests\":0,\"connections\":0,\"running\":\"x\"}}\n", '"running"'];
        yield 'boot-failed without error' => ["{\"type\":\"boot-failed\",\"stats\":{}}\n", 'exactly a string "error"'];
        yield 'too deep' => [\str_repeat('[', 40) . \str_repeat(']', 40) . "\n", 'not JSON'];
    }

    #[DataProvider('malformed')]
    public function testAMalformedFrameIsAFaultOnceAndNothingAfterItIsRead(string $bytes, string $reason): void
    {
        [$rawWorker, $master] = $this->rawPair();
        $good = WorkerMessage::stats(['pid' => 1, 'requests' => 0, 'connections' => 0])->encode() . "\n";
        \fwrite($rawWorker, $good . $bytes . $good);
        $this->runUntil(fn () => $this->faults !== []);
        \fwrite($rawWorker, $good);
        $this->runFor(0.05);

        self::assertCount(1, $this->faults);
        self::assertStringContainsString($reason, $this->faults[0]);
        self::assertCount(1, $this->received, 'the message before the bad frame arrived; none after it is trusted');
    }

    public function testAnOversizedFrameIsAFaultWithoutBufferingIt(): void
    {
        [$rawWorker, $master] = $this->rawPair(maxMessage: 1024);
        \fwrite($rawWorker, '{"type":"stats","stats":{"pid":1,"requests":0,"connections":0,"x":"' . \str_repeat('y', 5000));
        $this->runUntil(fn () => $this->faults !== []);
        self::assertSame(['a frame longer than 1024 bytes'], $this->faults);
        self::assertSame([], $this->received);
    }

    public function testTheEndOfTheStreamIsReportedOnce(): void
    {
        [$worker, $master] = $this->pair();
        $worker->send(WorkerMessage::draining(['pid' => 1, 'requests' => 0, 'connections' => 0]));
        $worker->close();
        $this->runUntil(fn () => $this->closed > 0);
        $master->receive();
        self::assertSame(1, $this->closed);
        self::assertCount(1, $this->received, 'what was sent before the close is read first');
        $master->send(WorkerMessage::stats(['pid' => 1, 'requests' => 0, 'connections' => 0]));
        self::assertSame(0, $master->queued(), 'nothing is queued for a peer that is gone');
    }

    public function testPeriodicReportsAreDroppedWhileThePeerDoesNotReadOthersAreKept(): void
    {
        [$a, $b] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $worker = new WorkerChannel($a, $this->driver);
        $report = ['pid' => 1, 'requests' => 0, 'connections' => 0, 'pad' => \str_repeat('z', 100_000)];
        for ($i = 0; $i < 60; $i++) { // 6 MB for a peer that reads nothing
            $worker->send(WorkerMessage::stats($report));
        }
        $queued = $worker->queued();
        self::assertLessThan(WorkerChannel::MAX_QUEUED + 200_000, $queued, 'the queue is bounded');
        $worker->send(WorkerMessage::stats($report));
        self::assertSame($queued, $worker->queued(), 'a report over the bound is dropped');
        $worker->send(WorkerMessage::draining(['pid' => 1, 'requests' => 0, 'connections' => 0]));
        self::assertGreaterThan($queued, $worker->queued(), 'a state change is kept');
        $worker->close();
        \fclose($b);
    }

    /** @return array{WorkerChannel, WorkerChannel} the worker's end (not listening) and the master's */
    private function pair(): array
    {
        [$a, $b] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $master = $this->listening($b);
        return [new WorkerChannel($a, $this->driver), $master];
    }

    /** @return array{resource, WorkerChannel} a raw worker end (to write anything) and the master's */
    private function rawPair(int $maxMessage = WorkerChannel::MAX_MESSAGE): array
    {
        [$a, $b] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        return [$a, $this->listening($b, $maxMessage)];
    }

    /** @param resource $stream */
    private function listening(mixed $stream, int $maxMessage = WorkerChannel::MAX_MESSAGE): WorkerChannel
    {
        $channel = new WorkerChannel($stream, $this->driver, $maxMessage);
        $channel->listen(
            function (WorkerMessage $m): void {
                $this->received[] = $m;
            },
            function (MalformedMessage $e): void {
                $this->faults[] = $e->getMessage();
            },
            function (): void {
                $this->closed++;
            },
        );
        return $channel;
    }

    private function runUntil(\Closure $done, float $timeout = 5.0): void
    {
        $check = $this->driver->repeat(0.001, function () use ($done): void {
            if ($done()) {
                $this->driver->stop();
            }
        });
        $limit = $this->driver->delay($timeout, fn () => $this->driver->stop());
        $this->driver->run();
        $this->driver->cancel($check);
        $this->driver->cancel($limit);
        self::assertTrue($done(), 'the condition was met before the time limit');
    }

    private function runFor(float $seconds): void
    {
        $this->driver->delay($seconds, fn () => $this->driver->stop());
        $this->driver->run();
    }
}
