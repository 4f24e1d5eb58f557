<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Hook;

use PHPUnit\Framework\TestCase;

/**
 * The extension's hooks ask PHP only through what Hooks::install() handed them (ext/weft_hooks.c): no
 * hook looks a PHP class or method up by name, and none writes the text of a PHP exception of ours
 * (ConcurrentUse::hooked() writes it). A source check: it needs no extension loaded.
 */
final class HookLookupsTest extends TestCase
{
    public function testNoHookLooksAClassUpByNameOrNamesOneOfOurs(): void
    {
        $root = \dirname(__DIR__, 3) . '/ext';
        $files = [...\glob($root . '/weft_hook*.c'), $root . '/weft_curl.c'];
        self::assertGreaterThanOrEqual(6, \count($files), 'the hooks are where this test looks');
        $found = [];
        foreach ($files as $file) {
            $source = (string) \file_get_contents($file);
            // Comments may name classes; code may not.
            $code = (string) \preg_replace(['#/\*.*?\*/#s', '#//[^\n]*#'], '', $source);
            foreach (['zend_lookup_class', 'EG(class_table)', 'Weft\\\\Coroutine', 'Weft\\\\Hook', 'weft\\\\hook'] as $needle) {
                if (\str_contains($code, $needle)) {
                    $found[] = \basename($file) . ': ' . $needle;
                }
            }
        }
        self::assertSame([], $found);
    }
}
