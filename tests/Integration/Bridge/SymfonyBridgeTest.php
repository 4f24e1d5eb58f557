<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

use Weft\Tests\Support\Curl;

/** A Symfony HttpKernel application (tests/Fixtures/symfony-app) under `bin/weft serve`. */
final class SymfonyBridgeTest extends FrameworkBridgeTestCase
{
    protected static function app(): string
    {
        return 'symfony-app';
    }

    protected static function errorPageMarker(): string
    {
        return '<title>An Error Occurred: Internal Server Error</title>';
    }

    /**
     * Booting a framework blocks the worker (container compiled, classes autoloaded) before any
     * request is served: the blocking-call detector does not report it, only what blocks a request.
     */
    public function testBootingIsNotReportedAsABlockingCall(): void
    {
        $entry = \dirname(__DIR__, 3) . '/var/fixtures/symfony-app/weft-slow-boot.php';
        file_put_contents($entry, "<?php\nusleep(300_000); // a long boot: a cold cache, a big container\nreturn require __DIR__ . '/weft.php';\n");
        $base = $this->serve(entryFile: 'weft-slow-boot.php');
        self::assertSame('Hello World', Curl::get("$base/")['body']);
        self::assertStringNotContainsString('A blocking call held the worker', $this->serverOutput());
    }

    /** The README's entry file loads .env as symfony/runtime does (real environment variables win). */
    public function testTheEntryFileLoadsDotenv(): void
    {
        $base = $this->serve();
        $json = json_decode(Curl::get("$base/json")['body'], true);
        self::assertSame('hello from .env', $json['dotenv']);
    }
}
