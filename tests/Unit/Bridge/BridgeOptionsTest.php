<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bridge;

use PHPUnit\Framework\TestCase;
use Weft\Bridge\BridgeOptions;

final class BridgeOptionsTest extends TestCase
{
    /** @var array<string, string|false> */
    private array $saved = [];

    protected function setUp(): void
    {
        foreach (['WEFT_LEAK_WARNINGS', 'APP_ENV', 'APP_DEBUG'] as $name) {
            $this->saved[$name] = getenv($name);
            putenv($name);
            unset($_SERVER[$name], $_ENV[$name]);
        }
    }

    protected function tearDown(): void
    {
        foreach ($this->saved as $name => $value) {
            putenv($value === false ? $name : "$name=$value");
            unset($_SERVER[$name], $_ENV[$name]);
        }
    }

    public function testOffInProductionAndOnInDevelopment(): void
    {
        self::assertFalse(BridgeOptions::leakWarningsWanted());
        self::assertFalse(BridgeOptions::leakWarningsWanted(false, 'prod'));
        self::assertFalse(BridgeOptions::leakWarningsWanted(false, 'production'));
        self::assertTrue(BridgeOptions::leakWarningsWanted(false, 'dev'));
        self::assertTrue(BridgeOptions::leakWarningsWanted(false, 'Local'));
        self::assertTrue(BridgeOptions::leakWarningsWanted(true, 'prod'));
    }

    public function testReadsAppEnvAndAppDebugWhenNotGiven(): void
    {
        putenv('APP_ENV=local');
        self::assertTrue(BridgeOptions::leakWarningsWanted());
        putenv('APP_ENV=production');
        $_SERVER['APP_DEBUG'] = 'false';
        self::assertFalse(BridgeOptions::leakWarningsWanted());
        $_SERVER['APP_DEBUG'] = '1';
        self::assertTrue(BridgeOptions::leakWarningsWanted());
    }

    public function testWeftLeakWarningsOverridesEitherWay(): void
    {
        putenv('WEFT_LEAK_WARNINGS=1');
        self::assertTrue(BridgeOptions::leakWarningsWanted(false, 'prod'));
        putenv('WEFT_LEAK_WARNINGS=0');
        self::assertFalse(BridgeOptions::leakWarningsWanted(true, 'dev'));
        self::assertFalse(BridgeOptions::fromEnvironment(true, 'dev')->leakWarnings);
        putenv('WEFT_LEAK_WARNINGS=');
        self::assertTrue(BridgeOptions::fromEnvironment(true, 'prod')->leakWarnings, 'empty means unset');
    }
}
