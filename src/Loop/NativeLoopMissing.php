<?php

declare(strict_types=1);

namespace Weft\Loop;

/**
 * The epoll loop was asked for and the weft extension is not loaded. How to build and load it depends on
 * the installation (a checkout or a Composer dependency): the command line says that (Cli\PhpRuntime).
 */
final class NativeLoopMissing extends \RuntimeException implements \Weft\WeftException
{
    public const MESSAGE = 'The epoll loop needs the weft native extension, which is not loaded.';

    public static function create(): self
    {
        return new self(self::MESSAGE . ' Build it (ext/README.md) and run PHP with it (-d extension=weft.so), or use the select loop.');
    }
}
