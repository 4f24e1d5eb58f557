<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

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
}
