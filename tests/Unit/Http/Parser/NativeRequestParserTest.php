<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Parser;

/** Every RequestParserTest case with the extension's head parser (Weft\Ext\parseHead) in front of the PHP one. */
final class NativeRequestParserTest extends RequestParserTest
{
    protected const NATIVE = true;
}
