<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Psr;

use Nyholm\Psr7\Factory\Psr17Factory;
use Nyholm\Psr7\Response as PsrResponse;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Message\UploadedFileInterface;
use Psr\Http\Server\RequestHandlerInterface;
use Weft\Http\Message\BadRequest;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\RequestParser;
use Weft\Http\Psr\PsrBridge;
use Weft\Http\Psr\PsrHandlerAdapter;

final class PsrBridgeTest extends TestCase
{
    public function testRequestBasics(): void
    {
        $request = Request::create('PUT', '/items/7?expand=1&tags[]=a', [
            'Host' => 'api.example.com:8080',
            'Accept' => ['application/json', 'text/plain'],
            'Cookie' => 'sid=s%2B1; theme=dark',
            'Content-Type' => 'text/plain',
            'Content-Length' => '4',
        ], 'data', '1.0')->withRemoteAddress('203.0.113.9')->withAttribute('route', 'items.update');

        $psr = (new PsrBridge(null, ['SERVER_PORT' => 8080, 'REMOTE_ADDR' => 'not used']))->toServerRequest($request);

        self::assertSame('PUT', $psr->getMethod());
        self::assertSame('1.0', $psr->getProtocolVersion());
        // nyholm/psr7 percent-encodes the brackets; the raw target stays in REQUEST_URI.
        self::assertSame('http://api.example.com:8080/items/7?expand=1&tags%5B%5D=a', (string) $psr->getUri());
        self::assertSame('application/json, text/plain', $psr->getHeaderLine('accept'));
        self::assertSame(['application/json', 'text/plain'], $psr->getHeader('Accept'));
        self::assertSame('api.example.com:8080', $psr->getHeaderLine('Host'));
        self::assertSame('data', (string) $psr->getBody());
        self::assertSame(['expand' => '1', 'tags' => ['a']], $psr->getQueryParams());
        self::assertSame(['sid' => 's+1', 'theme' => 'dark'], $psr->getCookieParams());
        self::assertNull($psr->getParsedBody());
        self::assertSame([], $psr->getUploadedFiles());
        self::assertSame('items.update', $psr->getAttribute('route'));

        $server = $psr->getServerParams();
        self::assertSame('PUT', $server['REQUEST_METHOD']);
        self::assertSame('/items/7?expand=1&tags[]=a', $server['REQUEST_URI']);
        self::assertSame('expand=1&tags[]=a', $server['QUERY_STRING']);
        self::assertSame('HTTP/1.0', $server['SERVER_PROTOCOL']);
        self::assertSame('203.0.113.9', $server['REMOTE_ADDR']);
        self::assertSame('api.example.com:8080', $server['HTTP_HOST']);
        self::assertSame('application/json, text/plain', $server['HTTP_ACCEPT']);
        self::assertSame('text/plain', $server['CONTENT_TYPE']);
        self::assertSame('4', $server['CONTENT_LENGTH']);
        self::assertSame(8080, $server['SERVER_PORT']);
        self::assertIsInt($server['REQUEST_TIME']);
        self::assertIsFloat($server['REQUEST_TIME_FLOAT']);
    }

    public function testAClientNamedByATrustedProxyIsTheOneThePsrRequestSees(): void
    {
        $request = Request::create('GET', '/a', ['Host' => 'shop.example', 'X-Forwarded-For' => '203.0.113.7', 'X-Forwarded-Proto' => 'https'])
            ->withRemoteAddress('127.0.0.1');
        $proxies = new \Weft\Http\Server\TrustedProxies(['127.0.0.1']);
        $psr = (new PsrBridge())->toServerRequest($proxies->resolve($request));
        self::assertSame('203.0.113.7', $psr->getServerParams()['REMOTE_ADDR']);
        self::assertSame('on', $psr->getServerParams()['HTTPS']);
        self::assertSame('https://shop.example/a', (string) $psr->getUri());

        // From an untrusted peer: its own address, plain http.
        $psr = (new PsrBridge())->toServerRequest($proxies->resolve($request->withRemoteAddress('198.51.100.9')));
        self::assertSame('198.51.100.9', $psr->getServerParams()['REMOTE_ADDR']);
        self::assertArrayNotHasKey('HTTPS', $psr->getServerParams());
        self::assertSame('http://shop.example/a', (string) $psr->getUri());
    }

    public function testUriForOtherTargets(): void
    {
        $bridge = new PsrBridge();
        self::assertSame('http://example.org/a?b=c', (string) $bridge->toServerRequest(Request::create('GET', 'http://example.org/a?b=c', ['Host' => 'ignored']))->getUri());
        self::assertSame('/only/path?q=1', (string) $bridge->toServerRequest(Request::create('GET', '/only/path?q=1'))->getUri());
        $bad = $bridge->toServerRequest(Request::create('GET', '/p', ['Host' => 'bad host:xx']));
        self::assertSame('/p', $bad->getUri()->getPath());
        self::assertSame('', $bad->getUri()->getHost());
        self::assertSame('', $bridge->toServerRequest(Request::create('OPTIONS', '*', ['Host' => 'x']))->getUri()->getPath());
    }

    public function testFormJsonAndFiles(): void
    {
        $bridge = new PsrBridge();
        $form = Request::create('POST', '/', ['Content-Type' => 'application/x-www-form-urlencoded'], 'a=1&b[]=2');
        self::assertSame(['a' => '1', 'b' => ['2']], $bridge->toServerRequest($form)->getParsedBody());

        $json = Request::create('POST', '/', ['Content-Type' => 'application/vnd.api+json'], '{"x":{"y":true}}');
        self::assertSame(['x' => ['y' => true]], $bridge->toServerRequest($json)->getParsedBody());
        $scalar = Request::create('POST', '/', ['Content-Type' => 'application/json'], '"text"');
        self::assertNull($bridge->toServerRequest($scalar)->getParsedBody());

        $body = "--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nT\r\n"
            . "--B\r\nContent-Disposition: form-data; name=\"docs[]\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nAAA\r\n"
            . "--B\r\nContent-Disposition: form-data; name=\"none\"; filename=\"\"\r\n\r\n\r\n--B--\r\n";
        $multipart = $bridge->toServerRequest(Request::create('POST', '/', ['Content-Type' => 'multipart/form-data; boundary=B'], $body));
        self::assertSame(['title' => 'T'], $multipart->getParsedBody());
        $files = $multipart->getUploadedFiles();
        $doc = $files['docs'][0];
        self::assertInstanceOf(UploadedFileInterface::class, $doc);
        self::assertSame('a.txt', $doc->getClientFilename());
        self::assertSame('text/plain', $doc->getClientMediaType());
        self::assertSame(3, $doc->getSize());
        self::assertSame(UPLOAD_ERR_OK, $doc->getError());
        self::assertSame('AAA', (string) $doc->getStream());
        self::assertSame(UPLOAD_ERR_NO_FILE, $files['none']->getError());
    }

    public function testBrokenJsonReachesTheApplicationAndThrowsWhereItIsParsed(): void
    {
        $psr = (new PsrBridge())->toServerRequest(Request::create('POST', '/', ['Content-Type' => 'application/json'], '{'));
        // Converting never fails: the application sees the request and its raw body.
        self::assertSame('{', (string) $psr->getBody());
        self::assertSame('POST', $psr->withAttribute('id', 'r1')->getMethod());
        try {
            $psr->withAttribute('id', 'r1')->getParsedBody();
            self::fail('getParsedBody() should throw');
        } catch (BadRequest $e) {
            self::assertSame(400, $e->status);
            self::assertStringStartsWith('Invalid JSON body', $e->getMessage());
        }
        // A body-parsing middleware's own value wins, as PSR-7 says.
        self::assertSame(['fixed' => true], $psr->withParsedBody(['fixed' => true])->getParsedBody());
    }

    public function testBrokenMultipartThrowsFromGetUploadedFiles(): void
    {
        $psr = (new PsrBridge())->toServerRequest(Request::create('POST', '/', ['Content-Type' => 'multipart/form-data; boundary=x'], 'garbage'));
        $this->expectException(BadRequest::class);
        $psr->getUploadedFiles();
    }

    public function testParsedBodyIsDecodedOnceAndKeptAcrossCopies(): void
    {
        $psr = (new PsrBridge())->toServerRequest(Request::create('POST', '/', ['Content-Type' => 'application/json'], '{"a":[1,2]}'));
        self::assertSame(['a' => [1, 2]], $psr->getParsedBody());
        self::assertSame(['a' => [1, 2]], $psr->withHeader('X-A', 'b')->getParsedBody());
        self::assertNull((new PsrBridge())->toServerRequest(Request::create('POST', '/', ['Content-Type' => 'application/json'], '"just a string"'))->getParsedBody());
        self::assertNull((new PsrBridge())->toServerRequest(Request::create('POST', '/', ['Content-Type' => 'text/plain'], '{'))->getParsedBody());
    }

    public function testResponseWithStringBody(): void
    {
        $psr = (new PsrResponse(201, ['Content-Type' => 'text/plain', 'X-Multi' => ['1', '2'], 'Transfer-Encoding' => 'chunked'], 'created'));
        $psr->getBody()->read(3); // a body read part-way is still sent whole
        $response = (new PsrBridge())->fromPsrResponse($psr);
        self::assertSame(201, $response->status());
        self::assertSame('Created', $response->reason());
        self::assertFalse($response->hasCustomReason());
        self::assertSame(['Content-Type' => ['text/plain'], 'X-Multi' => ['1', '2']], $response->headers());
        self::assertSame('created', $response->body());
        self::assertFalse($response->isStreamed());

        $custom = (new PsrBridge())->fromPsrResponse(new PsrResponse(200, [], '', '1.1', 'All Good'));
        self::assertSame('All Good', $custom->reason());
    }

    public function testLargeOrUnsizedBodiesAreStreamed(): void
    {
        $factory = new Psr17Factory();
        $content = str_repeat('0123456789', 20000);
        $bridge = new PsrBridge($factory, [], 1000);

        $sized = $bridge->fromPsrResponse($factory->createResponse(200, 'Yes')->withBody($factory->createStream($content)));
        self::assertTrue($sized->isStreamed());
        self::assertSame((string) \strlen($content), $sized->header('content-length'));
        self::assertSame('Yes', $sized->reason());
        self::assertSame($content, self::drain($sized));

        $resource = fopen('php://temp', 'w+');
        self::assertIsResource($resource);
        fwrite($resource, 'unsized');
        $unsizedStream = new class ($factory->createStreamFromResource($resource)) extends \Nyholm\Psr7\Stream {
            public function __construct(private readonly \Psr\Http\Message\StreamInterface $inner)
            {
            }

            public function getSize(): ?int
            {
                return null;
            }

            public function isSeekable(): bool
            {
                return $this->inner->isSeekable();
            }

            public function rewind(): void
            {
                $this->inner->rewind();
            }

            public function eof(): bool
            {
                return $this->inner->eof();
            }

            public function read($length): string
            {
                return $this->inner->read($length);
            }

            public function close(): void
            {
                $this->inner->close();
            }
        };
        $unsized = $bridge->fromPsrResponse($factory->createResponse(200)->withBody($unsizedStream));
        self::assertTrue($unsized->isStreamed());
        self::assertFalse($unsized->hasHeader('content-length'));
        self::assertSame('unsized', self::drain($unsized));
    }

    public function testAdapterRunsARealPsr15Handler(): void
    {
        $handler = new class () implements RequestHandlerInterface {
            public ?ServerRequestInterface $seen = null;

            public function handle(ServerRequestInterface $request): ResponseInterface
            {
                $this->seen = $request;
                $factory = new Psr17Factory();
                $name = $request->getQueryParams()['name'] ?? 'nobody';
                $body = $request->getParsedBody();
                return $factory->createResponse(200)
                    ->withHeader('Content-Type', 'text/plain')
                    ->withHeader('X-Client', $request->getServerParams()['REMOTE_ADDR'] ?? '-')
                    ->withBody($factory->createStream(sprintf('Hello %s, you sent %s', $name, json_encode($body))));
            }
        };
        $adapter = new PsrHandlerAdapter($handler);

        $parser = new RequestParser(null, '198.51.100.4');
        $parser->push("POST /greet?name=Ada HTTP/1.1\r\nHost: weft.test\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"n\": 42}");
        $request = $parser->next();
        self::assertInstanceOf(Request::class, $request);

        $response = $adapter($request);
        self::assertSame('http://weft.test/greet?name=Ada', (string) $handler->seen?->getUri());
        $wire = (new ResponseEncoder())->encode($response, $request->version(), true, false, 'Thu, 01 Jan 1970 00:00:00 GMT');
        self::assertSame(
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Type: text/plain\r\n"
            . "X-Client: 198.51.100.4\r\nContent-Length: 28\r\nConnection: keep-alive\r\n\r\nHello Ada, you sent {\"n\":42}",
            $wire,
        );
    }

    private static function drain(Response $response): string
    {
        $writer = new class () implements BodyWriter {
            public string $written = '';

            public function write(string $chunk): void
            {
                $this->written .= $chunk;
            }
        };
        $producer = $response->producer();
        self::assertNotNull($producer);
        $producer($writer);
        return $writer->written;
    }
}
