<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Server\Connection;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;
use Weft\Server\Protocol;
use Weft\Server\Session;
use Weft\Server\Timeouts;
use Weft\Tests\Support\QuietSession;

/**
 * The worker's output budget on real connections (Unix socket pairs whose far ends read nothing unless
 * told): what is counted, who waits, who is woken, who is closed and what the log says.
 */
final class OutputBudgetTest extends TestCase
{
    private const KB = 1024;

    private Driver $driver;
    private Connections $connections;
    /** @var array<int, array{Connection, OutputBudgetTestSession}> */
    private array $opened = [];
    /** @var list<resource> the far ends */
    private array $peers = [];
    private AbstractLogger $logger;

    protected function setUp(): void
    {
        $this->driver = Loop::reset('select');
        $this->logger = new class () extends AbstractLogger {
            /** @var list<string> */
            public array $lines = [];

            public function log($level, \Stringable|string $message, array $context = []): void
            {
                $this->lines[] = $level . ': ' . \preg_replace_callback('/\{(\w+)\}/', static fn (array $m): string => (string) ($context[$m[1]] ?? ''), (string) $message);
            }
        };
    }

    protected function tearDown(): void
    {
        foreach ($this->peers as $peer) {
            @\fclose($peer);
        }
        Loop::reset('select');
    }

    public function testQueuedOutputIsCountedWholeUntilItsLastByteIsOut(): void
    {
        $budget = $this->budget(4 << 20);
        [$a] = $this->open();
        $a->write(\str_repeat('a', 600 * self::KB));
        $a->flush();
        self::assertGreaterThan(0, $a->unsent(), 'the peer reads nothing: part of it waits');
        self::assertLessThan(600 * self::KB, $a->unsent());
        self::assertSame(600 * self::KB, $budget->held, 'a piece partly sent is still held whole');
        self::assertSame(600 * self::KB, $a->held());

        $this->drain(0);
        $this->runUntil(static fn (): bool => $a->unsent() === 0);
        self::assertSame(0, $budget->held);

        [$b] = $this->open();
        $b->write(\str_repeat('b', 600 * self::KB));
        $b->flush();
        $b->close();
        self::assertSame(0, $budget->held, 'closing drops what it held');
    }

    public function testPastTheGateOnlyConnectionsHoldingOutputWait(): void
    {
        $budget = $this->budget(2 << 20); // gate: 1.5 MB
        [$a] = $this->open();
        [$b] = $this->open();
        [$fresh] = $this->open();
        $a->write(\str_repeat('a', 300 * self::KB));
        $a->flush();
        self::assertFalse($a->outOfRoom());
        $b->write(\str_repeat('b', 1300 * self::KB));
        $b->flush();
        self::assertTrue($budget->overGate());
        self::assertFalse($budget->overLimit());
        self::assertTrue($a->outOfRoom(), 'holds output while the worker is over its gate: waits');
        self::assertFalse($fresh->outOfRoom(), 'holds nothing: its peer reads, it goes on');
        self::assertSame(0, $this->opened[$a->id][1]->resumed);

        $b->close();
        $this->tick();
        self::assertSame(1, $this->opened[$a->id][1]->resumed, 'woken once the worker is below its gate');
        self::assertFalse($a->outOfRoom());
    }

    public function testPastTheLimitTheLongestStalledAreClosedAndNamed(): void
    {
        $budget = $this->budget(2 << 20);
        [$a] = $this->open();
        $a->write(\str_repeat('a', 600 * self::KB));
        $a->flush();
        $this->tick(0.02);
        [$b] = $this->open();
        $b->write(\str_repeat('b', 800 * self::KB));
        $b->flush();
        $this->tick(0.02);
        [$c] = $this->open();
        $c->write(\str_repeat('c', 700 * self::KB));
        $c->flush(); // 2.1 MB held, over the 2 MB limit

        self::assertTrue($a->isClosed(), 'stalled longest: closed first, though another holds more');
        self::assertFalse($b->isClosed(), 'back at the gate after one: no more is closed');
        self::assertFalse($c->isClosed(), 'the connection that needed the room is never the one closed');
        self::assertSame(1500 * self::KB, $budget->held);
        self::assertCount(1, $this->logger->lines);
        self::assertMatchesRegularExpression(
            '/^warning: Closed 1 connection\(s\) whose output waited longest unread: the worker held 2150400 bytes of output queued for clients, over its output budget of 2097152 \(see --memory-limit\); freed 614400 bytes: #' . $a->id . ' 10\.0\.0\.' . $a->id . ':80 \(\d+ bytes unsent, none read for 0\.\d s\)$/',
            $this->logger->lines[0],
        );
        self::assertTrue($this->opened[$a->id][1]->closed);
    }

    public function testOneLargeAnswerAloneIsNotCutForTheBudget(): void
    {
        $budget = $this->budget(1 << 20);
        [$a] = $this->open();
        $a->write(\str_repeat('a', 3 << 20)); // built by the application: in memory already
        $a->flush();
        $a->flush();
        self::assertTrue($budget->overLimit());
        self::assertFalse($a->isClosed());
        self::assertSame([], $this->logger->lines);
        $this->drain(0);
        $this->runUntil(static fn (): bool => $a->unsent() === 0);
        self::assertSame(0, $budget->held);
    }

    public function testARestPartlySentIsWrittenFromItsOffsetNotCopiedWhole(): void
    {
        $this->budget(64 << 20);
        [$a] = $this->open();
        $body = \str_repeat('x', 24 << 20);
        $a->write($body);
        unset($body);
        $a->flush();
        \memory_reset_peak_usage();
        $base = \memory_get_usage();
        $received = $this->drain(0, 64 * self::KB, $a);
        self::assertSame(24 << 20, $received);
        // A copy of the rest on each partial write would have taken up to 24 MB more at once.
        self::assertLessThan($base + (2 << 20), \memory_get_peak_usage());
    }

    private function budget(int $limit): \Weft\Server\OutputBudget
    {
        $protocol = new class ($this->opened) implements Protocol {
            /** @param array<int, array{Connection, OutputBudgetTestSession}> $opened */
            public function __construct(private array &$opened)
            {
            }

            public function open(Connection $connection): Session
            {
                $session = new OutputBudgetTestSession();
                $this->opened[$connection->id] = [$connection, $session];
                return $session;
            }

            public function refusal(string $reason): string
            {
                return '';
            }

            public function timeouts(): Timeouts
            {
                return new Timeouts(60, 60, 60, 60);
            }
        };
        $this->connections = new Connections($protocol, new Dispatcher($this->driver, $this->logger), $this->driver, $this->logger, 100, $limit);
        return $this->connections->output;
    }

    /** @return array{Connection, resource} */
    private function open(): array
    {
        [$ours, $theirs] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, 0);
        $id = \count($this->opened) + 1;
        $this->connections->add($ours, "10.0.0.$id:80");
        $this->peers[$id] = $theirs;
        return [$this->opened[$id][0], $theirs];
    }

    /** One turn of the loop, after $seconds (so that loop time moves on). */
    private function tick(float $seconds = 0.0): void
    {
        $this->driver->delay($seconds, fn () => $this->driver->stop());
        $this->driver->run();
    }

    /** Reads everything the far end of connection #$index+1 is sent, flushing $connection between reads. */
    private function drain(int $index, int $read = 65536, ?Connection $connection = null): int
    {
        $peer = \array_values($this->peers)[$index];
        \stream_set_blocking($peer, false);
        $total = 0;
        $idle = 0;
        while ($idle < 50) {
            $chunk = (string) \fread($peer, $read);
            $total += \strlen($chunk);
            $connection?->flush();
            if ($chunk === '') {
                $idle++;
                \usleep(1000);
            } else {
                $idle = 0;
            }
        }
        return $total;
    }

    private function runUntil(\Closure $condition): void
    {
        for ($i = 0; $i < 200 && !$condition(); $i++) {
            $this->tick(0.001);
            $this->drain(0);
        }
        self::assertTrue($condition());
    }
}

/** @internal */
final class OutputBudgetTestSession extends QuietSession
{
    public int $resumed = 0;
    public bool $closed = false;

    public function resume(): void
    {
        $this->resumed++;
    }

    public function closed(): void
    {
        $this->closed = true;
    }
}
