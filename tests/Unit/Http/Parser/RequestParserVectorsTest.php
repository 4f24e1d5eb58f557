<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Parser;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Random\Engine\Mt19937;
use Random\Randomizer;
use Weft\Http\Message\Request;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\RequestParser;

/**
 * Runs the shared vectors (src/Http/Fuzz/vectors.php) through RequestParser fed at once, byte by byte, split
 * at every single point, and split at random (seeded) points: every way must give the same result.
 * Each vector runs twice: on the pure PHP parser, and with the extension's head parser
 * (Weft\Ext\parseHead) in front of it, skipped when the extension is not loaded.
 */
final class RequestParserVectorsTest extends TestCase
{
    private bool $nativeBefore;

    protected function setUp(): void
    {
        $this->nativeBefore = RequestParser::nativeHead();
    }

    protected function tearDown(): void
    {
        RequestParser::useNativeHead($this->nativeBefore);
    }

    /** @return iterable<string, array{array<string, mixed>, bool}> */
    public static function vectors(): iterable
    {
        foreach (require \Weft\Http\Fuzz\Fuzzer::VECTORS as $vector) {
            yield $vector['name'] . ' (php)' => [$vector, false];
            yield $vector['name'] . ' (native)' => [$vector, true];
        }
    }

    private static function use(bool $native): void
    {
        if ($native && !\function_exists('Weft\Ext\parseHead')) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        RequestParser::useNativeHead($native);
        self::assertSame($native, RequestParser::nativeHead());
    }

    /** @param array<string, mixed> $vector */
    #[DataProvider('vectors')]
    public function testAtOnce(array $vector, bool $native): void
    {
        self::use($native);
        self::assertSame(self::expected($vector), self::feed($vector, [$vector['raw']]));
    }

    /** @param array<string, mixed> $vector */
    #[DataProvider('vectors')]
    public function testByteByByte(array $vector, bool $native): void
    {
        self::use($native);
        self::assertSame(self::expected($vector), self::feed($vector, str_split($vector['raw'])));
    }

    /** @param array<string, mixed> $vector */
    #[DataProvider('vectors')]
    public function testSplitAtEveryPoint(array $vector, bool $native): void
    {
        self::use($native);
        $raw = $vector['raw'];
        $expected = self::expected($vector);
        // Long vectors only repeat the same states; their byte-by-byte run already covers them.
        $step = max(1, intdiv(\strlen($raw), 400));
        for ($at = 1; $at < \strlen($raw); $at += $step) {
            self::assertSame($expected, self::feed($vector, [substr($raw, 0, $at), substr($raw, $at)]), "split at $at");
        }
    }

    /** @param array<string, mixed> $vector */
    #[DataProvider('vectors')]
    public function testRandomSplits(array $vector, bool $native): void
    {
        self::use($native);
        $random = new Randomizer(new Mt19937(crc32($vector['name'])));
        $raw = $vector['raw'];
        $expected = self::expected($vector);
        for ($round = 0; $round < 25; $round++) {
            $chunks = [];
            for ($at = 0; $at < \strlen($raw);) {
                $length = $random->getInt(1, 12);
                $chunks[] = substr($raw, $at, $length);
                $at += $length;
            }
            self::assertSame($expected, self::feed($vector, $chunks), 'chunks: ' . json_encode(array_map('strlen', $chunks)));
        }
    }

    /**
     * @param array<string, mixed> $vector
     * @return array{requests: list<array<string, mixed>>, error: int|null, partial: bool|null}
     */
    private static function expected(array $vector): array
    {
        $requests = [];
        foreach ($vector['requests'] as $request) {
            $requests[] = [
                'method' => $request['method'],
                'target' => $request['target'],
                'version' => $request['version'],
                'headers' => $request['headers'],
                'body' => $request['body'] ?? '',
                'trailers' => $request['trailers'] ?? [],
            ];
        }
        return [
            'requests' => $requests,
            'error' => $vector['error'],
            'partial' => $vector['error'] === null ? ($vector['partial'] ?? false) : null,
        ];
    }

    /**
     * @param array<string, mixed> $vector
     * @param list<string> $chunks
     * @return array{requests: list<array<string, mixed>>, error: int|null, partial: bool|null}
     */
    private static function feed(array $vector, array $chunks): array
    {
        $parser = new RequestParser(new Limits(...($vector['limits'] ?? [])));
        $requests = [];
        $error = null;
        foreach ($chunks as $chunk) {
            $parser->push($chunk);
            try {
                while (($request = $parser->next()) !== null) {
                    $requests[] = self::describe($request);
                }
            } catch (HttpError $e) {
                $error = $e->status;
                break;
            }
        }
        return ['requests' => $requests, 'error' => $error, 'partial' => $error === null ? $parser->hasPartial() : null];
    }

    /** @return array<string, mixed> */
    private static function describe(Request $request): array
    {
        return [
            'method' => $request->method(),
            'target' => $request->target(),
            'version' => $request->version(),
            'headers' => $request->headers(),
            'body' => $request->body(),
            'trailers' => $request->trailers(),
        ];
    }
}
