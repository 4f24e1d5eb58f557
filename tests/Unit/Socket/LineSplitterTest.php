<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Socket;

use PHPUnit\Framework\TestCase;
use Weft\Line\LineCodec;
use Weft\Socket\LineSplitter;
use Weft\Socket\LineTooLong;
use Weft\Socket\Socket;

final class LineSplitterTest extends TestCase
{
    public function testTakeCutsOneLineAtATimeWithEitherEnding(): void
    {
        $splitter = new LineSplitter(10);
        $buffer = "one\r\ntwo\n\nthr";
        self::assertSame('one', $splitter->take($buffer));
        self::assertSame('two', $splitter->take($buffer));
        self::assertSame('', $splitter->take($buffer), 'an empty line is a line');
        self::assertNull($splitter->take($buffer), 'no ending yet');
        self::assertSame('thr', $buffer, 'the unterminated rest stays');
        $buffer .= "ee\r";
        self::assertNull($splitter->take($buffer, 3), 'a search may start where the last one ended');
        $buffer .= "\n";
        self::assertSame('three', $splitter->take($buffer, 6));
        self::assertSame('', $buffer);
    }

    public function testTheLimitCountsTheLineWithoutItsEnding(): void
    {
        $splitter = new LineSplitter(4);
        $buffer = "abcd\r\nabcd\n";
        self::assertSame('abcd', $splitter->take($buffer));
        self::assertSame('abcd', $splitter->take($buffer));

        $buffer = "abcd\r";
        self::assertNull($splitter->take($buffer), 'the "\r" of a line at the limit may still be followed by "\n"');

        $buffer = "abcde\n";
        try {
            $splitter->take($buffer);
            self::fail('a complete line over the limit');
        } catch (LineTooLong $e) {
            self::assertSame('line too long (limit 4 bytes)', $e->getMessage());
            self::assertSame("abcde\n", $buffer, 'the bytes stay: the caller decides');
        }

        $buffer = 'abcdef';
        $this->expectException(LineTooLong::class);
        $splitter->take($buffer); // still arriving, but already longer than any line may be
    }

    public function testSplitTakesEveryCompleteLineWithItsEnding(): void
    {
        $splitter = new LineSplitter(8);
        $buffer = "a\r\nb\nc";
        self::assertSame([['a', "\r\n"], ['b', "\n"]], $splitter->split($buffer));
        self::assertSame('c', $buffer);
        self::assertSame([], $splitter->split($buffer));

        $buffer = "ok\n" . \str_repeat('x', 10) . "\n";
        $this->expectException(LineTooLong::class);
        $splitter->split($buffer);
    }

    public function testTakeAndSplitAgreeOnEveryInput(): void
    {
        $splitter = new LineSplitter(5);
        $inputs = ["\n", "\r\n", "\r\r\n", "12345\n", "12345\r\n", "123456\n", "a\nbb\r\nccc", "12345\r", "123456", "1234567", "x\ny\n"];
        foreach ($inputs as $input) {
            $viaSplit = $input;
            $viaTake = $input;
            try {
                $expected = \array_column($splitter->split($viaSplit), 0);
                $expected[] = $viaSplit;
            } catch (LineTooLong) {
                $expected = 'too long';
            }
            try {
                $lines = [];
                while (($line = $splitter->take($viaTake)) !== null) {
                    $lines[] = $line;
                }
                $lines[] = $viaTake;
            } catch (LineTooLong) {
                $lines = 'too long';
            }
            self::assertSame($expected, $lines, \json_encode($input));
        }
    }

    public function testTakePieceForwardsLongLinesInPiecesAndTheRestAtTheEnd(): void
    {
        $splitter = new LineSplitter(4);
        $buffer = "ab\r\n" . "abcdefghij\n" . 'xyz';
        self::assertSame('ab', $splitter->takePiece($buffer));
        self::assertSame('abcd', $splitter->takePiece($buffer));
        self::assertSame('efgh', $splitter->takePiece($buffer));
        self::assertSame('ij', $splitter->takePiece($buffer));
        self::assertNull($splitter->takePiece($buffer), 'a short unterminated rest waits');
        self::assertSame('xyz', $splitter->takePiece($buffer, true), 'unless the writer is gone');
        self::assertNull($splitter->takePiece($buffer, true));
    }

    public function testTheLineCodecAndSocketReadLineShareTheSplittersLimit(): void
    {
        $codec = new LineCodec(4);
        $buffer = "abcd\r\n";
        self::assertSame([['abcd', "\r\n"]], $codec->decode($buffer));

        [$a, $b] = Socket::pair();
        $a->write("abcd\r\nabcde\n");
        self::assertSame('abcd', $b->readLine(4), 'the same line passes both');
        try {
            $b->readLine(4);
            self::fail('the same line fails both');
        } catch (LineTooLong) {
        }
        self::assertSame('abcde', $b->readLine(5), 'the bytes stayed buffered');
        $a->close();
        $b->close();
    }
}
