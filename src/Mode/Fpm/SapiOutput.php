<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * The few things a response needs from the SAPI. php-fpm's is PhpSapiOutput; the seam exists so the
 * emitter can be tested in the CLI, where header() is a no-op.
 */
interface SapiOutput
{
    /** @param string $reason custom reason phrase; "" for the standard one */
    public function status(int $status, string $reason): void;

    /** One "Name: value" field; a repeated name adds a field rather than replacing it. */
    public function header(string $line): void;

    public function write(string $bytes): void;

    /** Pushes what was written so far to the web server (streamed responses). */
    public function flush(): void;
}
