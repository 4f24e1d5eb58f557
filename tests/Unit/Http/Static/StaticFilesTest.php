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

    public function testASymlinkToADotfileIsHiddenToo(): void
    {
        \mkdir($this->base . '/www/.git');
        \file_put_contents($this->base . '/www/.git/config', '[core]');
        \file_put_contents($this->base . '/outside/.env', 'secret');
        \symlink($this->base . '/www/.hidden', $this->base . '/www/plain');
        \symlink($this->base . '/www/.git', $this->base . '/www/repo');
        \symlink($this->base . '/outside/.env', $this->base . '/www/env-out');
        $app = static fn (Request $r): Response => Response::text('app ' . $r->path());
        $closed = new StaticFiles($this->base . '/www', $app);
        $open = new StaticFiles(new StaticOptions($this->base . '/www', followSymlinks: true), $app);
        foreach ([$closed, $open] as $handler) {
            self::assertSame('app /plain', $handler(Request::create('GET', '/plain'))->body());
            self::assertSame('app /repo/config', $handler(Request::create('GET', '/repo/config'))->body());
            self::assertSame('app /env-out', $handler(Request::create('GET', '/env-out'))->body());
        }
        // Allowed, they are served, and a root that itself sits under a dot directory serves its files.
        $dotfiles = new StaticFiles(new StaticOptions($this->base . '/www', dotfiles: true));
        self::assertSame('dot', $dotfiles(Request::create('GET', '/plain'))->body());
        \mkdir($this->base . '/.cache/www', 0755, true);
        \file_put_contents($this->base . '/.cache/www/a.txt', 'under a dot directory');
        self::assertSame('under a dot directory', (new StaticFiles($this->base . '/.cache/www'))(Request::create('GET', '/a.txt'))->body());
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

    public function testManyTransfersShareTheStreamBudget(): void
    {
        \file_put_contents($this->base . '/www/big.bin', \str_repeat('x', 1024 * 1024));
        $handler = new StaticFiles(new StaticOptions($this->base . '/www', chunkSize: 256 * 1024, streamBudget: 512 * 1024));
        $largest = [];   // transfer => size of its first chunk
        $received = [];
        \Weft\run(static function () use ($handler, &$largest, &$received): void {
            $wg = new \Weft\Coroutine\WaitGroup();
            for ($i = 0; $i < 8; $i++) {
                $wg->add();
                \Weft\go(static function () use ($i, $handler, $wg, &$largest, &$received): void {
                    $response = $handler(Request::create('GET', '/big.bin'));
                    // A slow client: every write waits, so all eight transfers are in flight together.
                    $writer = new class ($i, $largest, $received) implements BodyWriter {
                        public function __construct(private int $i, private array &$largest, private array &$received)
                        {
                        }

                        public function write(string $chunk): void
                        {
                            $this->largest[$this->i] ??= \strlen($chunk);   // the first chunk
                            $this->received[$this->i] = ($this->received[$this->i] ?? 0) + \strlen($chunk);
                            \Weft\sleep(0.001);
                        }
                    };
                    ($response->producer())($writer);
                    $wg->done();
                });
            }
            $wg->wait();
        });
        self::assertSame(\array_fill(0, 8, 1024 * 1024), $received, 'every transfer got the whole file');
        // Transfer n starts with n - 1 others in flight: its first chunk is the budget's share,
        // capped by the chunk size (256 KB) — 512 KB / 3, / 4, ... / 8 for the later ones.
        \ksort($largest);
        self::assertSame([262144, 262144, 174762, 131072, 104857, 87381, 74898, 65536], $largest);
    }

    public function testTheShareHasAFloor(): void
    {
        $options = new StaticOptions($this->base . '/www', chunkSize: 256 * 1024, streamBudget: 1024 * 1024);
        $transfers = new \Weft\Http\Static\Transfers();
        self::assertSame(256 * 1024, $transfers->chunkSize($options));
        $transfers->inFlight = 16;
        self::assertSame(64 * 1024, $transfers->chunkSize($options));
        $transfers->inFlight = 10_000;
        self::assertSame(StaticOptions::MIN_CHUNK_SIZE, $transfers->chunkSize($options), 'chunks never shrink to a syscall per few bytes');
    }
}
