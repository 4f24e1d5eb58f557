<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Parser;

use PHPUnit\Framework\TestCase;
use Weft\Http\Fuzz\Fuzzer;
use Weft\Http\Message\Request;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\RequestParser;

/**
 * Weft\Ext\parseRequest() and checkRequestLayout() (ext/weft_http.c): the native head parser answering the
 * usual request with a Request it built itself, identical to the one PHP builds from parseHead()'s parts;
 * and the layout check that guards it. Outside and inside a coroutine.
 */
final class NativeRequestTest extends TestCase
{
    protected function setUp(): void
    {
        if (!\function_exists('Weft\Ext\parseRequest')) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        self::assertNull(\Weft\Ext\checkRequestLayout(Request::class));
    }

    private static function parse(string $buffer, int $offset = 0, ?string $remote = '192.0.2.1', Limits $limits = new Limits()): object|array|false
    {
        return \Weft\Ext\parseRequest($buffer, $offset, $offset, $limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet, $remote);
    }

    private static function both(\Closure $body): void
    {
        $body();
        \Weft\run(static function () use ($body): void {
            self::assertNotNull(\Weft\current());
            $body();
        });
    }

    public function testTheUsualRequestComesBackBuiltAndEqualToPhps(): void
    {
        self::both(static function (): void {
            foreach (['GET', 'POST', 'HEAD', 'DELETE', 'OPTIONS'] as $method) {
                foreach (['1.1', '1.0'] as $version) {
                    foreach (['192.0.2.1', null] as $remote) {
                        $head = "$method /p/$method?q=1 HTTP/$version\r\nHost: example.com\r\nUser-Agent: t\r\n\r\n";
                        $request = self::parse($head, 0, $remote);
                        self::assertInstanceOf(Request::class, $request);
                        self::assertEquals(new Request($method, "/p/$method?q=1", "\r\nHost: example.com\r\nUser-Agent: t", '', $version, $remote), $request);
                        self::assertSame($method, $request->method());
                        self::assertSame(['t'], $request->headers()['user-agent'] ?? null);
                        self::assertSame(['q' => '1'], $request->query());
                        self::assertSame($remote, $request->remoteAddress());
                    }
                }
            }
            // After empty lines the caller skipped, and with an empty header block (HTTP/1.0).
            self::assertEquals(new Request('GET', '/', '', '', '1.0', 'x'), self::parse("\r\n\r\nGET / HTTP/1.0\r\n\r\n", 4, 'x'));
        });
    }

    public function testItsPropertiesAreInitializedAsTheConstructorsAndItsCopiesWork(): void
    {
        $request = self::parse("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertInstanceOf(Request::class, $request);
        $copy = $request->withAttribute('k', 'v');
        self::assertSame('v', $copy->attribute('k'));
        self::assertSame('/a', $copy->target());
        // Every slot C wrote reads as initialized, as after the constructor (an uninitialized typed
        // property would throw here), and a clone of it is equal to one the constructor built.
        $constructed = new Request('GET', '/a', "\r\nHost: x", '', '1.1', '192.0.2.1');
        foreach (['method', 'target', 'headerBlock', 'body', 'version', 'remoteAddress', 'trailerBlock'] as $name) {
            $property = new \ReflectionProperty(Request::class, $name);
            self::assertTrue($property->isInitialized($request), $name);
            self::assertSame($property->getValue($constructed), $property->getValue($request), $name);
        }
        self::assertEquals($constructed, clone $request);
    }

    public function testAnythingElseGetsParseHeadsAnswer(): void
    {
        $limits = new Limits();
        $cases = [
            'framing' => "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab",
            'framing, body not yet here' => "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n",
            'chunked' => "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
            'pipelined' => "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n",
            'a partial next one' => "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nG",
            'incomplete' => "GET /1 HTTP/1.1\r\nHost: x\r\n",
            'refused' => "GET /1 HTTP/1.1\r\n\r\n",
        ];
        foreach ($cases as $name => $buffer) {
            $head = \Weft\Ext\parseHead($buffer, 0, 0, $limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet);
            self::assertSame($head, self::parse($buffer), $name);
        }
    }

    public function testEveryVectorParsesAlikeOnEveryPath(): void
    {
        // The shared vectors through whole parsers: PHP only, parseHead() in front, parseRequest() in front.
        foreach (require Fuzzer::VECTORS as $vector) {
            $limits = new Limits(...($vector['limits'] ?? []));
            $outcomes = [];
            foreach ([false, true] as $native) {
                $parser = new RequestParser($limits, '192.0.2.9', $native);
                $parser->push($vector['raw']);
                $outcome = [];
                try {
                    while (($request = $parser->next()) !== null) {
                        $outcome[] = $request;
                    }
                } catch (\Weft\Http\Parser\HttpError $e) {
                    $outcome[] = $e->status . ' ' . $e->getMessage();
                }
                $outcomes[] = $outcome;
            }
            self::assertEquals($outcomes[0], $outcomes[1], $vector['name']);
        }
    }

    public function testTheLayoutCheckSaysWhatItCannotBuild(): void
    {
        self::both(static function (): void {
            self::assertSame('class No\Such\Request not found', \Weft\Ext\checkRequestLayout('No\Such\Request'));
            self::assertStringContainsString('not a user class', (string) \Weft\Ext\checkRequestLayout(\stdClass::class));
            self::assertStringContainsString('$method is not a declared string', (string) \Weft\Ext\checkRequestLayout(NativeRequestNoMethod::class));
            self::assertStringContainsString('sets more than its seven', (string) \Weft\Ext\checkRequestLayout(NativeRequestDerived::class));
            self::assertStringContainsString('$remoteAddress is not a declared ?string', (string) \Weft\Ext\checkRequestLayout(NativeRequestWrongType::class));
            self::assertStringContainsString('threw', (string) \Weft\Ext\checkRequestLayout(NativeRequestThrows::class));
            // $scheme: where a Request read over TLS says "https"; built as "http" like every other.
            self::assertStringContainsString('$scheme is not a declared string', (string) \Weft\Ext\checkRequestLayout(NativeRequestNoScheme::class));
            self::assertStringContainsString("\$scheme does not default to 'http'", (string) \Weft\Ext\checkRequestLayout(NativeRequestHttpsScheme::class));
            // After a failed check nothing is built: parseHead()'s answer.
            self::assertIsArray(self::parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
            self::assertNull(\Weft\Ext\checkRequestLayout(Request::class));
            self::assertInstanceOf(Request::class, self::parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        });
    }
}

/** Test doubles for the layout check: each differs from Request in one way it must notice. */
final class NativeRequestNoMethod
{
    public function __construct(private readonly string $target)
    {
    }
}

final class NativeRequestDerived
{
    private int $length = 0;
    private string $scheme = 'http';

    public function __construct(
        private readonly string $method,
        private readonly string $target,
        private readonly string $headerBlock = '',
        private readonly string $body = '',
        private readonly string $version = '1.1',
        private ?string $remoteAddress = null,
        private readonly string $trailerBlock = '',
    ) {
        $this->length = \strlen($body);
    }
}

final class NativeRequestWrongType
{
    public function __construct(
        private readonly string $method,
        private readonly string $target,
        private readonly string $headerBlock = '',
        private readonly string $body = '',
        private readonly string $version = '1.1',
        private string $remoteAddress = '',
        private readonly string $trailerBlock = '',
    ) {
    }
}

final class NativeRequestThrows
{
    private string $scheme = 'http';

    public function __construct(
        private readonly string $method,
        private readonly string $target,
        private readonly string $headerBlock = '',
        private readonly string $body = '',
        private readonly string $version = '1.1',
        private ?string $remoteAddress = null,
        private readonly string $trailerBlock = '',
    ) {
        throw new \RuntimeException('no');
    }
}

final class NativeRequestNoScheme
{
    public function __construct(
        private readonly string $method,
        private readonly string $target,
        private readonly string $headerBlock = '',
        private readonly string $body = '',
        private readonly string $version = '1.1',
        private ?string $remoteAddress = null,
        private readonly string $trailerBlock = '',
    ) {
    }
}

final class NativeRequestHttpsScheme
{
    private string $scheme = 'https';

    public function __construct(
        private readonly string $method,
        private readonly string $target,
        private readonly string $headerBlock = '',
        private readonly string $body = '',
        private readonly string $version = '1.1',
        private ?string $remoteAddress = null,
        private readonly string $trailerBlock = '',
    ) {
    }
}
