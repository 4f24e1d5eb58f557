<?php

declare(strict_types=1);

namespace App;

/** State done wrong: a singleton built at boot and a static, which nothing resets. */
final class Registry
{
    /** @var list<string> */
    public array $seen = [];
    /** @var list<string> */
    public static array $log = [];
}
