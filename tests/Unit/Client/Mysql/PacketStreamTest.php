<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Mysql;

use PHPUnit\Framework\TestCase;
use Weft\Client\Mysql\Internal\PacketStream;
use Weft\Client\Mysql\Internal\ProtocolViolation;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Socket;

final class PacketStreamTest extends TestCase
{
    public function testFramingAndSequenceIds(): void
    {
        [$a, $b] = Socket::pair();
        $writer = new PacketStream($a);
        $writer->writeCommand("\x03SELECT 1");
        $writer->write('second');
        self::assertSame("\x09\x00\x00\x00\x03SELECT 1" . "\x06\x00\x00\x01second", $b->read());

        $reader = new PacketStream($b);
        $a->write("\x02\x00\x00\x00hi" . "\x00\x00\x00\x01" . "\x01\x00\x00\x02!");
        self::assertSame('hi', $reader->read());
        self::assertSame('', $reader->read());
        self::assertSame('!', $reader->read());
        self::assertSame(3, $reader->sequence);
        self::assertSame(0, $reader->pending());
        $a->close();
        $b->close();
    }

    public function testPayloadsOf16MiBAndMoreAreSplitAndJoined(): void
    {
        foreach ([0xFFFFFF, 0xFFFFFF + 10, 2 * 0xFFFFFF] as $size) {
            \Weft\run(function () use ($size): void {
                [$a, $b] = Socket::pair();
                $payload = \str_repeat('abcdefghijklmnopq', \intdiv($size, 17) + 1);
                $payload = \substr($payload, 0, $size);
                $writer = \Weft\go(static function () use ($a, $payload): void {
                    (new PacketStream($a))->writeCommand($payload);
                    // A marker packet after it: the reader must stop exactly at the payload's end.
                    $a->write("\x01\x00\x00\x09M");
                });
                $reader = new PacketStream($b);
                $received = $reader->read();
                $writer->join();
                self::assertSame(\strlen($payload), \strlen($received));
                self::assertTrue($payload === $received, "payload of $size bytes");
                $packets = \intdiv($size, 0xFFFFFF) + 1; // + an empty packet when it divides evenly
                self::assertSame($packets, $reader->sequence);
                $reader->sequence = 9;
                self::assertSame('M', $reader->read());
                $a->close();
                $b->close();
            });
        }
    }

    public function testAnOutOfOrderPacketIsAProtocolViolation(): void
    {
        [$a, $b] = Socket::pair();
        $a->write("\x01\x00\x00\x05x");
        $this->expectException(ProtocolViolation::class);
        $this->expectExceptionMessage('sequence id 5, expected 0');
        (new PacketStream($b))->read();
    }

    public function testEndOfStreamInsideAPacket(): void
    {
        [$a, $b] = Socket::pair();
        $a->write("\x0A\x00\x00\x00abc");
        $a->close();
        $this->expectException(ConnectionClosed::class);
        (new PacketStream($b))->read();
    }
}
