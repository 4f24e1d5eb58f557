<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

use Weft\Http\Message\BodyWriter;

/** A streamed response's chunks, each pushed on to nginx as soon as it is written. */
final class SapiBodyWriter implements BodyWriter
{
    public function __construct(private readonly SapiOutput $output)
    {
    }

    public function write(string $chunk): void
    {
        if ($chunk === '') {
            return;
        }
        $this->output->write($chunk);
        $this->output->flush();
    }
}
