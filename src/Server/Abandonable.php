<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * A session that can still give a request its worker is about to lose a last answer: a fatal error
 * (the memory limit) ends the process, and every other request in flight on it would get an empty
 * reply. Called from the shutdown function, outside the loop.
 *
 * @internal
 */
interface Abandonable
{
    /** @param bool $failed whether this request caused the fatal error (500), rather than only shared its worker (503) */
    public function abandon(mixed $request, bool $failed): void;
}
