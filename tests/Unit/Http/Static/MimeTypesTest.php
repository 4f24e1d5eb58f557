<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Static;

use PHPUnit\Framework\TestCase;
use Weft\Http\Static\MimeTypes;

final class MimeTypesTest extends TestCase
{
    public function testBuiltInTableExtraTypesAndTheSystemFile(): void
    {
        $system = (string) \tempnam(\sys_get_temp_dir(), 'weft-mime-');
        \file_put_contents($system, "# comment\napplication/x-weft-test\twefttest wt2\nnot-a-type ignored\n");
        try {
            $types = new MimeTypes(['html' => 'text/html; charset=iso-8859-1'], $system);
            self::assertSame('text/html; charset=iso-8859-1', $types->forPath('/a/index.HTML'));
            self::assertSame('text/css; charset=utf-8', $types->forPath('site.css'));
            self::assertSame('image/svg+xml', $types->forPath('logo.svg'));
            self::assertSame('application/x-weft-test', $types->forPath('file.wt2'));
            self::assertSame(MimeTypes::DEFAULT, $types->forPath('file.ignored'));
            self::assertSame(MimeTypes::DEFAULT, $types->forPath('/dir.d/README'));
            self::assertSame(MimeTypes::DEFAULT, $types->forPath('archive.unknownext'));
        } finally {
            \unlink($system);
        }
        // Without a system file the built-in table still answers.
        self::assertSame('application/wasm', (new MimeTypes([], '/nonexistent/mime.types'))->forPath('app.wasm'));
    }
}
