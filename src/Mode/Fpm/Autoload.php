<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/** Composer's autoload.php that loaded Weft: the front controller and the preload probe require the same. */
final class Autoload
{
    public static function file(): string
    {
        if (!\class_exists(\Composer\Autoload\ClassLoader::class, false)) {
            return '';
        }
        // vendor/composer/ClassLoader.php -> vendor/autoload.php
        $file = (string) (new \ReflectionClass(\Composer\Autoload\ClassLoader::class))->getFileName();
        $autoload = \dirname($file, 2) . '/autoload.php';
        return \is_file($autoload) ? $autoload : '';
    }
}
