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

    /** The README's entry file loads .env as symfony/runtime does (real environment variables win). */
    public function testTheEntryFileLoadsDotenv(): void
    {
        $base = $this->serve();
        $json = json_decode(Curl::get("$base/json")['body'], true);
        self::assertSame('hello from .env', $json['dotenv']);
    }
}
