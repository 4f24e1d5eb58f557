<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Fuzz;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Cli\FuzzCommand;
use Weft\Http\Fuzz\ConnectionOracle;
use Weft\Http\Fuzz\Fuzzer;
use Weft\Http\Parser\Limits;
use Weft\Loop\Loop;

/**
 * Whole connections, every path that can serve one (the PHP parser; with the extension also its head
 * parser in front): the same bytes in give the same bytes out, at once and split.
 */
final class ConnectionOracleTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::reset();
    }

    /** @return iterable<string, array{string, array<string, int>}> */
    public static function vectors(): iterable
    {
        foreach (require Fuzzer::VECTORS as $vector) {
            yield $vector['name'] => [$vector['raw'], $vector['limits'] ?? []];
        }
    }

    /** @param array<string, int> $limits */
    #[DataProvider('vectors')]
    public function testEveryRequestVectorGetsTheSameAnswersOnEveryPath(string $raw, array $limits): void
    {
        $answers = (new ConnectionOracle(new Limits(...$limits)))->check($raw, \crc32($raw));
        // Every connection ends, and what was answered is HTTP from its first byte.
        self::assertTrue($answers === '' || \str_starts_with($answers, 'HTTP/1.'), $answers);
    }

    public function testAPipelinedBatchIsAnsweredInOrderAndTheConnectionEndsAfterTheError(): void
    {
        $answers = (new ConnectionOracle())->check(
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /c HTTP/1.1\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n",
            1,
        );
        self::assertSame(3, \substr_count($answers, "\r\nServer: weft\r\n"), $answers);
        self::assertMatchesRegularExpression('~^HTTP/1.1 200 OK\r\n.*\r\n\r\nGET /a HTTP/1.1\n.*HTTP/1.1 200 OK\r\n.*POST /b HTTP/1.1\n.*body 3 .*HTTP/1.1 400 Bad Request\r\n.*Connection: close\r\n~s', $answers);
        self::assertStringNotContainsString('/never', $answers);
        self::assertStringContainsString("\r\nDate: -\r\n", $answers, 'the Date value is normalised');
    }

    public function testTheFuzzerRunsWholeConnectionsAndFindsNothing(): void
    {
        $report = (new Fuzzer(FuzzCommand::seeds(Fuzzer::VECTORS)))->run(20261126, 300, connectionsEvery: 3);
        self::assertSame([], $report['failures']);
        self::assertSame(100, $report['connections']);
    }

    /**
     * Reads the native connection path frames itself (one whole head) that must not be taken as a
     * request: a body that looks like one, and a head read while the bytes of an unfinished head wait.
     * Each chunk is its own read; every path answers alike.
     */
    public function testReadsThatLookLikeARequestButBelongToAnotherAreNotTakenForOne(): void
    {
        $inner = "GET /x HTTP/1.1\r\nHost: y\r\n\r\n";
        $cases = [
            'a body' => ["POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: " . \strlen($inner) . "\r\n\r\n", $inner],
            'a chunk' => ["POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" . \dechex(\strlen($inner)) . "\r\n", $inner, "\r\n0\r\n\r\n"],
            'the rest of a head' => ["GET /first HTTP/1.1\r\nX-A: 1", $inner],
            'after a framed one' => [$inner, $inner, "GET /z HTTP/1.1\r\nHost: z\r\n\r\n"],
        ];
        $oracle = new ConnectionOracle();
        foreach ($cases as $name => $chunks) {
            $answers = [];
            foreach (ConnectionOracle::paths() as $path) {
                $answers[$path] = $oracle->serve($chunks, $path);
            }
            self::assertCount(1, \array_unique($answers), $name . ': ' . \json_encode($answers));
            $answer = \reset($answers);
            if ($name === 'a body' || $name === 'a chunk') {
                self::assertStringContainsString('body ' . \strlen($inner) . ' ' . \md5($inner), $answer, $name);
                self::assertStringNotContainsString('GET /x', $answer, $name);
            } elseif ($name === 'the rest of a head') {
                self::assertStringContainsString('GET /first HTTP/1.1', $answer, $name);
                self::assertStringContainsString('x-a: 1get /x http/1.1', \strtolower($answer), $name);
            } else {
                self::assertSame(3, \substr_count($answer, 'HTTP/1.1 200 OK'), $name);
            }
        }
    }
}
