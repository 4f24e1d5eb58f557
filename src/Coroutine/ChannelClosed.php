<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/** send() on a closed channel, or receive() on a closed channel with nothing left in its buffer. */
final class ChannelClosed extends \RuntimeException implements \Weft\WeftException
{
}
