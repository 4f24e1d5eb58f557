<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Fuzz;

use PHPUnit\Framework\TestCase;
use Weft\Cli\FuzzCommand;
use Weft\Http\Fuzz\Fuzzer;
use Weft\Http\Fuzz\RequestMutator;
use Weft\Http\Fuzz\Wire;

/** The CI run of the request fuzzer on the pure parser: bounded, deterministic, zero failures. */
final class FuzzerTest extends TestCase
{
    public function testABoundedDeterministicRunFindsNothing(): void
    {
        $report = (new Fuzzer(FuzzCommand::seeds(Fuzzer::VECTORS)))->run(20261123, 5000);
        self::assertSame([], $report['failures']);
        self::assertSame(5000, $report['cases']);
        // The mutations reach every kind of outcome, not only one error.
        foreach (['ok', 'partial', 400, 501, 505] as $kind) {
            self::assertGreaterThan(20, $report['errors'][$kind] ?? 0, "outcome $kind: " . \json_encode($report['errors']));
        }
    }

    public function testTheSameSeedGivesTheSameCases(): void
    {
        $mutator = new RequestMutator(["GET / HTTP/1.1\r\nHost: x\r\n\r\n", "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab"]);
        $first = \array_map(static fn (int $i) => $mutator->mutate(5, $i), \range(0, 50));
        self::assertSame($first, \array_map(static fn (int $i) => $mutator->mutate(5, $i), \range(0, 50)));
        self::assertGreaterThan(30, \count(\array_unique($first)), 'and they differ from one another');
    }

    public function testTheWireCheckRefusesMalformedResponses(): void
    {
        self::assertNull(Wire::parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No Content\r\n\r\n")[1]);
        self::assertCount(2, Wire::parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nHTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")[0]);
        foreach ([
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok",            // body cut short
            "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",                          // bare CR in a field
            "HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\nx",          // ambiguous length
            "HTTP/1.1 20 OK\r\n\r\n",                                      // bad status line
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nok\r\n", // truncated chunk
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n",                    // head never ends
        ] as $bad) {
            self::assertNotNull(Wire::parse($bad)[1], \json_encode($bad));
        }
    }
}
