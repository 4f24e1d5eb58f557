<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\WeftException;

/**
 * A message on the master/worker channel that is not one of the kinds both ends know, with their
 * fields: not JSON, an unknown kind, a missing or mistyped field, or a frame over the size limit. The
 * channel stops reading at once (the stream can no longer be trusted to be in step); the master
 * retires the worker that sent it.
 */
final class MalformedMessage extends \RuntimeException implements WeftException
{
    public static function because(string $reason, string $frame = ''): self
    {
        if ($frame !== '') {
            $reason .= ': ' . \json_encode(\strlen($frame) > 80 ? \substr($frame, 0, 77) . '...' : $frame, \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_UNESCAPED_SLASHES);
        }
        return new self($reason);
    }
}
