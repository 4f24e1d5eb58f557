<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

/**
 * An error reply from the server ("-WRONGTYPE Operation against a key holding the wrong kind of value").
 * The connection stays usable. $prefix is the error code: the first word when it is upper case
 * ("ERR", "WRONGTYPE", "NOAUTH", "WRONGPASS", "EXECABORT", ...), else "ERR".
 */
final class RedisError extends \RuntimeException implements \Weft\WeftException
{
    public readonly string $prefix;

    private function __construct(string $message, string $prefix, ?\Throwable $previous = null)
    {
        parent::__construct($message, 0, $previous);
        $this->prefix = $prefix;
    }

    public static function fromReply(string $reply, ?\Throwable $previous = null): self
    {
        $space = \strpos($reply, ' ');
        $word = $space === false ? $reply : \substr($reply, 0, $space);
        $prefix = $word !== '' && \strtoupper($word) === $word && \ctype_alpha(\str_replace(['_', '-'], '', $word))
            ? $word
            : 'ERR';
        return new self($reply, $prefix, $previous);
    }

    /** The error code, e.g. "WRONGTYPE". */
    public function prefix(): string
    {
        return $this->prefix;
    }
}
