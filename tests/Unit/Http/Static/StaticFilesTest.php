<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Static;

use PHPUnit\Framework\TestCase;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Static\StaticFiles;
use Weft\Http\Static\StaticOptions;

/** StaticFiles as an app uses it: a handler wrapped around its own, called in-process. */
final class StaticFilesTest extends TestCase
{
    private string $base;

    protected function setUp(): void
    {
        $this->base = \sys_get_temp_dir() . '/weft-static-unit-' . \bin2hex(\random_bytes(4));
        \mkdir($this->base . '/www/docs', 0755, true);
        \mkdir($this->base . '/outside');
        \file_put_contents($this->base . '/outside/secret.txt', 'secret');
        \file_put_contents($this->base . '/www/a.txt', \str_repeat('0123456789', 100));
        \file_put_contents($this->base . '/www/docs/home.htm', 'docs home');
        \file_put_contents($this->base . '/www/.hidden', 'dot');
        \symlink($this->base . '/outside', $this->base . '/www/out');
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->base));
    }

    public function testWrapsAnApplicationHandler(): void
    {
        $app = static fn (Request $r): Response => Response::text('app ' . $r->method() . ' ' . $r->path());
        $handler = new StaticFiles($this->base . '/www', $app);
        self::assertSame(\str_repeat('0123456789', 100), $handler(Request::create('GET', '/a.txt'))->body());
        self::assertSame('app GET /missing', $handler(Request::create('GET', '/missing'))->body());
        self::assertSame('app DELETE /a.txt', $handler(Request::create('DELETE', '/a.txt'))->body());
        self::assertSame('app GET /out/secret.txt', $handler(Request::create('GET', '/out/secret.txt'))->body());
        self::assertSame('app GET /.hidden', $handler(Request::create('GET', '/.hidden'))->body());
    }

    public function testWithoutAnApplication404And405(): void
    {
        $handler = new StaticFiles($this->base . '/www');
        self::assertSame(404, $handler(Request::create('GET', '/missing'))->status());
        $post = $handler(Request::create('POST', '/a.txt'));
        self::assertSame([405, 'GET, HEAD'], [$post->status(), $post->header('allow')]);
        self::assertSame(404, $handler(Request::create('POST', '/missing'))->status());
    }

    public function testOptions(): void
    {
        $handler = new StaticFiles(new StaticOptions(
            $this->base . '/www',
            index: 'home.htm',
            followSymlinks: true,
            dotfiles: true,
            bufferLimit: 10,
            chunkSize: 300,
            mimeTypes: ['txt' => 'text/x-custom'],
        ));
        self::assertSame('secret', $handler(Request::create('GET', '/out/secret.txt'))->body());
        self::assertSame('dot', $handler(Request::create('GET', '/.hidden'))->body());
        self::assertSame('docs home', $handler(Request::create('GET', '/docs/'))->body());
        $streamed = $handler(Request::create('GET', '/a.txt'));
        self::assertTrue($streamed->isStreamed());
        self::assertSame(['text/x-custom', '1000'], [$streamed->header('content-type'), $streamed->header('content-length')]);
        $writer = new class () implements BodyWriter {
            /** @var list<string> */
            public array $chunks = [];

            public function write(string $chunk): void
            {
                $this->chunks[] = $chunk;
            }
        };
        ($streamed->producer())($writer);
        self::assertSame([300, 300, 300, 100], \array_map('strlen', $writer->chunks), 'read and written chunkSize bytes at a time');
        self::assertSame(\str_repeat('0123456789', 100), \implode('', $writer->chunks));
    }

    public function testBadOptionsAreRefused(): void
    {
        foreach ([
            fn () => new StaticOptions($this->base . '/nope'),
            fn () => new StaticOptions($this->base . '/www/a.txt'),
            fn () => new StaticOptions($this->base . '/www', index: '../x.html'),
            fn () => new StaticOptions($this->base . '/www', chunkSize: 0),
        ] as $i => $make) {
            try {
                $make();
                self::fail("case $i was accepted");
            } catch (\InvalidArgumentException $e) {
                self::assertNotSame('', $e->getMessage());
            }
        }
    }
}
