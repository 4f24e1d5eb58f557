<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Weft\Mode\Fpm\FrontController;

final class FrontControllerTest extends TestCase
{
    private string $dir;
    private RecordingOutput $output;
    /** @var list<array{string, string, array<string, mixed>}> */
    private array $logged = [];

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-front-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir);
        $this->output = new RecordingOutput();
    }

    protected function tearDown(): void
    {
        foreach (\glob($this->dir . '/*') ?: [] as $file) {
            \unlink($file);
        }
        \rmdir($this->dir);
    }

    private function app(string $code): string
    {
        $file = $this->dir . '/app' . \count(\glob($this->dir . '/*') ?: []) . '.php';
        \file_put_contents($file, "<?php\nuse Weft\\Http\\Message\\{Request, Response};\n" . $code);
        return $file;
    }

    private function front(): FrontController
    {
        $logger = new class ($this->logged) extends AbstractLogger {
            public function __construct(private array &$logged)
            {
            }

            public function log($level, \Stringable|string $message, array $context = []): void
            {
                $this->logged[] = [$level, (string) $message, $context];
            }
        };
        return new FrontController($this->output, $logger);
    }

    /** @param array<string, string> $server */
    private function handle(string $app, array $server = [], string $body = ''): void
    {
        $this->front()->handle($server + [
            'REQUEST_METHOD' => 'GET', 'REQUEST_URI' => '/', 'SERVER_PROTOCOL' => 'HTTP/1.1', 'WEFT_APP' => $app,
        ], static fn (): string => $body);
    }

    public function testTheHandlerAnswers(): void
    {
        $app = $this->app('return fn (Request $r): Response => new Response(200, ["X-Method" => $r->method()], $r->path() . ":" . $r->body());');
        $this->handle($app, ['REQUEST_METHOD' => 'POST', 'REQUEST_URI' => '/p?x', 'CONTENT_LENGTH' => '3'], 'abc');
        self::assertSame(200, $this->output->sentStatus());
        self::assertContains('X-Method: POST', $this->output->headers());
        self::assertSame('/p:abc', $this->output->body());
    }

    public function testTheBodyIsReadOnlyWhenThereIsOne(): void
    {
        $app = $this->app('return fn (Request $r): Response => new Response(200, [], "[" . $r->body() . "]");');
        $this->front()->handle(['REQUEST_METHOD' => 'GET', 'REQUEST_URI' => '/', 'WEFT_APP' => $app], static fn (): string => throw new \LogicException('read'));
        self::assertSame('[]', $this->output->body());
    }

    public function testAHandlerExceptionIsA500AndALogLine(): void
    {
        $app = $this->app('return fn (Request $r): Response => throw new RuntimeException("kaboom");');
        $this->handle($app, ['REQUEST_URI' => '/boom']);
        self::assertSame(500, $this->output->sentStatus());
        self::assertSame("Internal Server Error\n", $this->output->body());
        self::assertCount(1, $this->logged);
        [$level, $message, $context] = $this->logged[0];
        self::assertSame('error', $level);
        self::assertSame('/boom', $context['target']);
        self::assertSame('kaboom', $context['message']);
        self::assertInstanceOf(\RuntimeException::class, $context['exception']);
    }

    public function testAnUndecodableBodyIsA400(): void
    {
        $app = $this->app('return fn (Request $r): Response => Response::json($r->json());');
        $this->handle($app, ['REQUEST_METHOD' => 'POST', 'CONTENT_TYPE' => 'application/json', 'CONTENT_LENGTH' => '5'], '{nope');
        self::assertSame(400, $this->output->sentStatus());
        self::assertStringStartsWith('Bad Request: Invalid JSON body', $this->output->body());
        self::assertSame([], $this->logged, "the client's fault, not the application's");
    }

    public function testDebugShowsTheTrace(): void
    {
        $app = $this->app('return fn (Request $r): Response => throw new RuntimeException("kaboom");');
        $this->handle($app, ['WEFT_DEBUG' => '1']);
        self::assertStringContainsString('RuntimeException: kaboom', $this->output->body());
    }

    public function testAHandlerThatReturnsNoResponseIsA500(): void
    {
        $app = $this->app('return fn (Request $r) => "just a string";');
        $this->handle($app);
        self::assertSame(500, $this->output->sentStatus());
        self::assertStringContainsString('returned string', $this->logged[0][2]['message']);
    }

    public function testAnAppThatCannotLoadIsA500(): void
    {
        $this->handle($this->dir . '/missing.php');
        self::assertSame(500, $this->output->sentStatus());
        self::assertStringContainsString('not found', $this->logged[0][2]['message']);

        $output = $this->output = new RecordingOutput();
        $this->logged = [];
        $this->handle($this->app('return 42;'));
        self::assertSame(500, $output->sentStatus());
        self::assertStringContainsString('must return a handler', $this->logged[0][2]['message']);
    }

    public function testAnInvalidHeaderIsA500(): void
    {
        $app = $this->app('return fn (Request $r): Response => new Response(200, ["X-Bad" => "a\nb"], "x");');
        $this->handle($app);
        self::assertSame([['status', 500], ['header', 'Content-Type: text/plain; charset=utf-8'], ['header', 'Content-Length: 22'], ['write', "Internal Server Error\n"]], $this->output->events);
        self::assertCount(1, $this->logged);
    }

    public function testWhatTheAppPrintsIsLoggedNotSent(): void
    {
        $app = $this->app('return function (Request $r): Response { echo "stray\n"; return new Response(200, [], "the response"); };');
        $level = \ob_get_level();
        $this->handle($app);
        self::assertSame($level, \ob_get_level());
        self::assertSame('the response', $this->output->body());
        // One record per printed line, as the other modes log a worker's stdout.
        self::assertCount(1, $this->logged);
        self::assertSame('info', $this->logged[0][0]);
        self::assertSame('stdout: {line}', $this->logged[0][1]);
        self::assertSame(['line' => 'stray', 'stream' => 'stdout'], $this->logged[0][2]);
    }

    public function testAStreamedResponseWithAnInvalidHeaderIsA500(): void
    {
        $app = $this->app('return fn (Request $r): Response => Response::stream(fn ($w) => $w->write("x"), 200, ["X-Bad" => "a\rb"]);');
        $this->handle($app);
        self::assertSame(500, $this->output->sentStatus());
        self::assertSame("Internal Server Error\n", $this->output->body());
    }

    public function testAFailingProducerStopsTheBodyAndIsLogged(): void
    {
        $app = $this->app('return fn (Request $r): Response => Response::stream(function ($w) { $w->write("part"); throw new RuntimeException("producer broke"); });');
        $this->handle($app);
        self::assertSame(200, $this->output->sentStatus());
        self::assertSame('part', $this->output->body(), 'no 500 after the head is out');
        self::assertCount(1, $this->logged);
        self::assertStringContainsString('producer broke', $this->logged[0][2]['message']);
        self::assertInstanceOf(\RuntimeException::class, $this->logged[0][2]['exception']);
    }

    public function testPingLoadsTheAppWithoutCallingIt(): void
    {
        $app = $this->app('return fn (Request $r): Response => throw new LogicException("must not run");');
        $this->handle($app, ['WEFT_PING' => '1']);
        self::assertSame(200, $this->output->sentStatus());
        self::assertSame("pong\n", $this->output->body());
        self::assertSame([], $this->logged);
    }

    public function testPsr15Handler(): void
    {
        $app = $this->app(<<<'PHP'
            return new class implements Psr\Http\Server\RequestHandlerInterface {
                public function handle(Psr\Http\Message\ServerRequestInterface $request): Psr\Http\Message\ResponseInterface
                {
                    return new Nyholm\Psr7\Response(202, ['X-Psr' => 'yes'], $request->getMethod() . ' ' . $request->getUri()->getPath() . ' ' . json_encode($request->getQueryParams()));
                }
            };
            PHP);
        $this->handle($app, ['REQUEST_URI' => '/psr?a=1', 'HTTP_HOST' => 'example.com']);
        self::assertSame(202, $this->output->sentStatus());
        self::assertContains('X-Psr: yes', $this->output->headers());
        self::assertSame('GET /psr {"a":"1"}', $this->output->body());
    }
}
