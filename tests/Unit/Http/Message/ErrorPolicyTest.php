<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Message;

use PHPUnit\Framework\TestCase;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\HeaderField;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Mode\Fpm\SapiEmitter;
use Weft\Mode\Fpm\SapiOutput;

/** The one error policy (ErrorResponse) and the one header rule (HeaderField), as each writer applies them. */
final class ErrorPolicyTest extends TestCase
{
    public function testARefusalIsA503ThatClosesTheConnectionAndMayBeRetried(): void
    {
        $encoder = new ResponseEncoder();
        $refusal = ErrorResponse::unavailable('too many requests in flight');
        self::assertFalse($encoder->keepAlive(new Request('GET', '/'), $refusal), 'a refusal closes the connection');
        self::assertSame(
            "HTTP/1.1 503 Service Unavailable\r\nServer: weft\r\nDate: D\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
            . "Content-Length: 49\r\nConnection: close\r\n\r\nService unavailable: too many requests in flight\n",
            $encoder->encode($refusal, '1.1', false, false, 'D'),
        );
    }

    public function testTheBytesTheExtensionWritesForAFailedWorkerAreThatRefusal(): void
    {
        // HttpSession hands these to the extension ahead of time (PHP may be stuck when they are needed):
        // they must stay the encoder's answer for ErrorResponse::unavailable(), less the optional Date.
        $lastWords = (new \ReflectionClassConstant(\Weft\Http\Server\HttpSession::class, 'LAST_WORDS'))->getValue();
        $encoded = (new ResponseEncoder())->encode(ErrorResponse::unavailable('the worker failed while this request ran'), '1.1', false, false, 'D');
        self::assertSame(\str_replace("Date: D\r\n", '', $encoded), $lastWords);
    }

    public function testAFailureIsA500WithTheTraceOnlyInDebugMode(): void
    {
        $e = new \RuntimeException('secret detail');
        self::assertSame([500, "Internal Server Error\n"], [ErrorResponse::internal($e)->status(), ErrorResponse::internal($e)->body()]);
        self::assertStringContainsString('secret detail', ErrorResponse::internal($e, true)->body());
        self::assertSame("Internal Server Error\n", ErrorResponse::internal(null, true)->body());
        self::assertSame([400, "Bad Request: bad JSON\n"], [ErrorResponse::badRequest('bad JSON')->status(), ErrorResponse::badRequest('bad JSON')->body()]);
        self::assertSame(504, ErrorResponse::gatewayTimeout()->status());
    }

    /** The refusals of static files, the HTTPS redirect, the parser and the metrics port: ErrorResponse's, one shape. */
    public function testEveryWritersRefusalsAreErrorResponses(): void
    {
        $shape = static fn (Response $r): array => [$r->status(), $r->headers(), $r->body()];
        $text = ['Content-Type' => ['text/plain; charset=utf-8']];
        $root = \sys_get_temp_dir() . '/weft-errors-' . \bin2hex(\random_bytes(4));
        \mkdir($root);
        \file_put_contents("$root/a.txt", 'a');
        $static = new \Weft\Http\Static\StaticFiles(new \Weft\Http\Static\StaticOptions($root));
        self::assertSame($shape(ErrorResponse::notFound()), $shape($static(new Request('GET', '/no-such-file'))));
        self::assertSame([404, $text, "Not Found\n"], $shape(ErrorResponse::notFound()));
        self::assertSame([405, ['Allow' => ['GET, HEAD']] + $text, "Method Not Allowed\n"], $shape(ErrorResponse::methodNotAllowed(['GET', 'HEAD'])));
        self::assertSame($shape(ErrorResponse::methodNotAllowed(['GET', 'HEAD'])), $shape($static(new Request('POST', '/a.txt'))));
        \unlink("$root/a.txt");
        \rmdir($root);
        self::assertSame([412, $text, "Precondition Failed\n"], $shape(ErrorResponse::preconditionFailed()));
        self::assertSame([416, ['Content-Range' => ['bytes */10']] + $text, "Range Not Satisfiable\n"], $shape(ErrorResponse::rangeNotSatisfiable(10)));
        $redirect = (new \Weft\Http\Tls\HttpsRedirect(443))(new Request('GET', '/'));
        self::assertSame([400, $text + ['Connection' => ['close']], "Bad Request: no usable Host field to redirect to HTTPS\n"], $shape($redirect));
        $parser = \Weft\Http\Parser\HttpError::headerTooLarge(8192)->toResponse();
        self::assertSame($shape(ErrorResponse::unreadable(431, \rtrim($parser->body()))), $shape($parser));
    }

    /** @return iterable<string, array{string, string}> */
    public static function badFields(): iterable
    {
        yield 'CRLF in a value' => ['X-Evil', "a\r\nInjected: 1"];
        yield 'LF in a value' => ['X-Evil', "a\nb"];
        yield 'NUL in a value' => ['X-Evil', "a\0b"];
        yield 'space in a name' => ['X Evil', 'a'];
        yield 'colon in a name' => ['X:Evil', 'a'];
        yield 'empty name' => ['', 'a'];
    }

    /** @dataProvider badFields */
    #[\PHPUnit\Framework\Attributes\DataProvider('badFields')]
    public function testEveryWriterRefusesTheSameFieldWithTheSameReason(string $name, string $value): void
    {
        $reason = HeaderField::problem([$name => [$value]]);
        self::assertNotNull($reason);
        self::assertStringStartsWith('Invalid response header "', $reason);
        $response = new Response(200, ['X-Fine' => "tab\tok", $name => $value], 'x');
        $writers = [
            'encoder' => fn () => (new ResponseEncoder())->encode($response, '1.1', true, false, 'D'),
            'SAPI emitter' => fn () => (new SapiEmitter(new class () implements SapiOutput {
                public function status(int $status, string $reason): void {}
                public function header(string $line): void {}
                public function write(string $bytes): void {}
                public function flush(): void {}
            }))->emit($response),
            'field line' => fn () => HeaderField::line($name, $value),
        ];
        foreach ($writers as $writer => $write) {
            try {
                $write();
                self::fail("$writer accepted it");
            } catch (\InvalidArgumentException $e) {
                self::assertSame($reason, $e->getMessage(), $writer);
            }
        }
    }

    public function testGoodFieldsPass(): void
    {
        self::assertNull(HeaderField::problem(['Set-Cookie' => ['a=1', 'b=2'], 'X-Tab' => ["a\tb"], 'X-Empty' => ['']]));
        self::assertSame("X-Utf8: h\u{e9}", HeaderField::line('X-Utf8', "h\u{e9}"));
    }
}
