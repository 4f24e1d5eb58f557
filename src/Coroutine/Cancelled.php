<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/** Thrown into a coroutine's current wait by Coroutine::cancel(). */
final class Cancelled extends \RuntimeException implements \Weft\WeftException
{
}
