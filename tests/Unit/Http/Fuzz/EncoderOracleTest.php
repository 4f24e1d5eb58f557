<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Fuzz;

use PHPUnit\Framework\TestCase;
use Weft\Cli\FuzzCommand;
use Weft\Http\Fuzz\EncoderOracle;
use Weft\Http\Fuzz\Fuzzer;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Tests\Support\Memcheck;
use Weft\Tests\Unit\Http\Message\ResponseEncoderTest;

/**
 * The response encoder's two paths (Weft\Ext\encodeResponse() for the common response, PHP for the rest)
 * give the same bytes or the same exception: every vector of the encoder's own tests in every variant of
 * version, keep-alive and HEAD, and a bounded deterministic run of generated responses.
 */
final class EncoderOracleTest extends TestCase
{
    public function testEveryEncoderVectorGivesTheSameOutcomeOnBothPaths(): void
    {
        $responses = [];
        foreach (ResponseEncoderTest::encodings() as $name => [$response]) {
            $responses[$name] = $response;
        }
        foreach (ResponseEncoderTest::injections() as $name => [$headers]) {
            $responses[$name] = new Response(200, $headers, 'body');
        }
        $responses['streamed'] = Response::stream(static function (): void {}, 200, ['Content-Type' => 'text/plain']);
        $responses['float value'] = new Response(200, ['X-Ratio' => 1.5], 'f');
        $responses['own Server, empty list'] = new Response(200, ['Server' => []], 'no server field at all');
        $responses['empty list with a bad name'] = new Response(200, ['X A' => []], 'no field, no check');
        $responses['a bad Content-Length on a string body'] = new Response(200, ['Content-Length' => "x\r\ny"], 'replaced');
        $responses['negative numeric name'] = new Response(200, [-5 => 'v', 0 => [1, 2]], '');
        $oracle = new EncoderOracle();
        $native = 0;
        $cases = 0;
        foreach ($responses as $name => $response) {
            foreach (['1.1', '1.0', '2.0'] as $version) {
                foreach ([true, false] as $keepAlive) {
                    foreach ([false, true] as $isHead) {
                        foreach (['weft', ''] as $server) {
                            $native += $oracle->check($response, $version, $keepAlive, $isHead, 'Sun, 06 Nov 1994 08:49:37 GMT', $server) ? 1 : 0;
                            $cases++;
                        }
                    }
                }
            }
        }
        self::assertSame(\count($responses) * 24, $cases);
        if (self::nativeEncoding()) {
            // Not HEAD, a final status but 204/304, plain fields: the C path's share of these vectors.
            self::assertGreaterThan($cases / 5, $native, 'the C path encoded its share of the vectors');
        }
    }

    public function testGeneratedResponsesGiveTheSameOutcomeOnBothPaths(): void
    {
        $cases = Memcheck::cases(4000, 1000);
        $report = (new Fuzzer(FuzzCommand::seeds(Fuzzer::VECTORS)))->runEncoder(20261127, $cases);
        self::assertSame([], $report['failures']);
        self::assertSame($cases, $report['cases']);
        if (self::nativeEncoding()) {
            // Both paths are reached: C for the common ones, PHP for HEAD, streams, 1xx/204/304, bad fields.
            self::assertGreaterThan($cases / 10, $report['native']);
            self::assertLessThan($cases * 9 / 10, $report['native']);
        }
    }

    public function testTheSameSeedGivesTheSameCases(): void
    {
        $describe = static function (int $case): string {
            [$response, $version, $keepAlive, $isHead, $date, $server] = EncoderOracle::generate(7, $case);
            return \serialize([$response->status(), $response->headerFields(), $response->body(), $response->isStreamed(), $version, $keepAlive, $isHead, $date, $server]);
        };
        $first = \array_map($describe, \range(0, 40));
        self::assertSame($first, \array_map($describe, \range(0, 40)));
        self::assertGreaterThan(30, \count(\array_unique($first)));
    }

    /** The C path never answers for a class whose layout it did not check: a new property fails the check safe. */
    public function testTheLayoutCheckRefusesAnyOtherShape(): void
    {
        if (!\function_exists('Weft\Ext\checkResponseLayout')) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        try {
            self::assertSame('class No\Such\Response not found', \Weft\Ext\checkResponseLayout('No\Such\Response'));
            self::assertStringContainsString('not a final user class', (string) \Weft\Ext\checkResponseLayout(\stdClass::class));
            self::assertStringContainsString('must be taught to ext/weft_encode.c', (string) \Weft\Ext\checkResponseLayout(EncoderResponseWithMore::class));
            // After a failed check nothing is encoded in C, not even the class checked before.
            self::assertNull(\Weft\Ext\encodeResponse(new Response(200, [], 'x'), '1.1', true, false, 'd', '', 100));
            self::assertStringContainsString('property $body is not a declared string', (string) \Weft\Ext\checkResponseLayout(EncoderResponseWrongType::class));
            self::assertStringContainsString('accessors do not answer', (string) \Weft\Ext\checkResponseLayout(EncoderResponseLying::class));
            self::assertNull(\Weft\Ext\checkResponseLayout(EncoderResponseLike::class));
            // Accepted: a look-alike class is read, and the real Response (another class) is refused.
            self::assertSame("HTTP/1.1 200 OK\r\nDate: d\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx", \Weft\Ext\encodeResponse(new EncoderResponseLike(200, [], 'x'), '1.1', false, false, 'd', '', 100));
            self::assertNull(\Weft\Ext\encodeResponse(new Response(200, [], 'x'), '1.1', true, false, 'd', '', 100));
        } finally {
            self::assertNull(\Weft\Ext\checkResponseLayout(Response::class));
        }
        self::assertSame("HTTP/1.1 201 Created\r\nServer: weft\r\nDate: d\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\nx", \Weft\Ext\encodeResponse(new Response(201, [], 'x'), '1.1', true, false, 'd', "Server: weft\r\n", 100));
        // A response with trailers is left to PHP (it goes out chunked, its trailers after the body).
        self::assertNull(\Weft\Ext\encodeResponse((new Response(201, [], 'x'))->withTrailers(['x-check' => '1']), '1.1', true, false, 'd', '', 100));
        self::assertNull(\Weft\Ext\encodeResponse((new Response(201, [], 'x'))->withTrailers(static fn (): array => []), '1.1', true, false, 'd', '', 100));
        // A body over the limit given is left to PHP (HttpSession writes a large one as a piece of its own).
        self::assertNull(\Weft\Ext\encodeResponse(new Response(200, [], \str_repeat('x', 101)), '1.1', true, false, 'd', '', 100));
    }

    /** The same inside a coroutine (its own Fiber and stack) as outside any. */
    public function testInsideACoroutineAsOutside(): void
    {
        $cases = \array_map(static fn (int $case): array => EncoderOracle::generate(11, $case), \range(0, 300));
        $encode = static function () use ($cases): array {
            $oracle = new EncoderOracle();
            $native = 0;
            foreach ($cases as [$response, $version, $keepAlive, $isHead, $date, $server]) {
                $native += $oracle->check($response, $version, $keepAlive, $isHead, $date, $server) ? 1 : 0;
            }
            return [$native, (new ResponseEncoder())->encode(new Response(200, ['X-A' => 'b'], 'in'), '1.1', true, false, 'd')];
        };
        $outside = $encode();
        $inside = \Weft\run(static fn (): array => \Weft\go($encode)->join());
        self::assertSame($outside, $inside);
        self::assertSame("HTTP/1.1 200 OK\r\nServer: weft\r\nDate: d\r\nX-A: b\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nin", $inside[1]);
    }

    public function testWeftNativeHttpZeroKeepsTheEncoderInPhp(): void
    {
        if (!\function_exists('Weft\Ext\encodeResponse')) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $script = 'require ' . \var_export(\dirname(__DIR__, 4) . '/vendor/autoload.php', true)
            . '; echo json_encode((new Weft\Http\Message\ResponseEncoder())->native);';
        $php = \escapeshellarg(\PHP_BINARY);
        $so = \dirname(__DIR__, 4) . '/ext/modules/weft.so';
        // The extension of this run: given on the command line (as the README says), or from php.ini.
        $load = \in_array('weft', \get_loaded_extensions(), true) && \is_file($so) ? '-d extension=' . \escapeshellarg($so) : '';
        self::assertSame('true', \trim((string) \shell_exec("env -u WEFT_NATIVE_HTTP $php $load -r " . \escapeshellarg($script))));
        self::assertSame('false', \trim((string) \shell_exec("WEFT_NATIVE_HTTP=0 $php $load -r " . \escapeshellarg($script))));
    }

    private static function nativeEncoding(): bool
    {
        return (new ResponseEncoder('weft', true))->native;
    }
}

/** Response's shape, and one more property (as a new feature of Response would add). */
final class EncoderResponseWithMore
{
    private array $headers;
    private ?\Closure $producer = null;
    private ?\Weft\Http\Message\Upgrade $upgrade = null;
    private array|\Closure|null $trailers = null;
    private array $more = [];

    public function __construct(private int $status = 200, array $headers = [], private string $body = '', private string $reason = '')
    {
        $this->headers = $headers;
    }
}

final class EncoderResponseWrongType
{
    private array $headers;
    private ?\Closure $producer = null;
    private ?\Weft\Http\Message\Upgrade $upgrade = null;
    private array|\Closure|null $trailers = null;

    public function __construct(private int $status = 200, array $headers = [], private ?string $body = '', private string $reason = '')
    {
        $this->headers = $headers;
    }
}

/** The right layout, and accessors that answer something else. */
final class EncoderResponseLying
{
    public const REASONS = [201 => 'Created'];
    private array $headers;
    private ?\Closure $producer = null;
    private ?\Weft\Http\Message\Upgrade $upgrade = null;
    private array|\Closure|null $trailers = null;

    public function __construct(private int $status = 200, array $headers = [], private string $body = '', private string $reason = '')
    {
        $this->headers = $headers;
    }

    public function status(): int
    {
        return $this->status;
    }

    public function body(): string
    {
        return \strtoupper($this->body);
    }

    public function headerFields(): array
    {
        return $this->headers;
    }

    public function isStreamed(): bool
    {
        return false;
    }

    public function upgrade(): ?\Weft\Http\Message\Upgrade
    {
        return null;
    }

    public function hasTrailers(): bool
    {
        return false;
    }

    public function reason(): string
    {
        return $this->reason !== '' ? $this->reason : (self::REASONS[$this->status] ?? '');
    }
}

/** The right layout and honest accessors: the check accepts it. */
final class EncoderResponseLike
{
    public const REASONS = [200 => 'OK', 201 => 'Created'];
    private array $headers;
    private ?\Closure $producer = null;
    private ?\Weft\Http\Message\Upgrade $upgrade = null;
    private array|\Closure|null $trailers = null;

    public function __construct(private int $status = 200, array $headers = [], private string $body = '', private string $reason = '')
    {
        $this->headers = $headers;
    }

    public function status(): int
    {
        return $this->status;
    }

    public function body(): string
    {
        return $this->body;
    }

    public function headerFields(): array
    {
        return $this->headers;
    }

    public function isStreamed(): bool
    {
        return $this->producer !== null;
    }

    public function upgrade(): ?\Weft\Http\Message\Upgrade
    {
        return $this->upgrade;
    }

    public function hasTrailers(): bool
    {
        return $this->trailers !== null;
    }

    public function reason(): string
    {
        return $this->reason !== '' ? $this->reason : (self::REASONS[$this->status] ?? '');
    }
}
