<?php

declare(strict_types=1);

namespace App;

/**
 * Per-request state done wrong: a shared service and a static that nothing resets, so whatever
 * one request puts here the next one sees. Weft's leak warning names this class.
 */
final class Registry
{
    /** @var list<string> */
    public array $seen = [];
    /** @var list<string> */
    public static array $log = [];
}
