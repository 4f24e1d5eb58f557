<?php

declare(strict_types=1);

namespace Weft\Server\Internal;

/**
 * What a deadline calls when it passes (Deadlines::arm()), as an object rather than a Closure: a
 * connection is its own callback, where a bound Closure of its method cost every idle connection
 * almost 400 bytes.
 *
 * @internal
 */
interface Expiring
{
    /** The deadline armed for this object passed (it is disarmed already). */
    public function expired(): void;
}
