<?php

declare(strict_types=1);

namespace Weft\Socket;

/** Names errno values in messages: "Connection refused (ECONNREFUSED)". Linux numbering. */
final class Errno
{
    private const NAMES = [
        1 => 'EPERM', 2 => 'ENOENT', 4 => 'EINTR', 11 => 'EAGAIN', 13 => 'EACCES', 22 => 'EINVAL', 24 => 'EMFILE',
        32 => 'EPIPE', 98 => 'EADDRINUSE', 99 => 'EADDRNOTAVAIL', 101 => 'ENETUNREACH', 103 => 'ECONNABORTED',
        104 => 'ECONNRESET', 110 => 'ETIMEDOUT', 111 => 'ECONNREFUSED', 113 => 'EHOSTUNREACH',
    ];

    public static function name(int $errno): ?string
    {
        return self::NAMES[$errno] ?? null;
    }

    public static function describe(int $errno, string $message): string
    {
        if ($message === '' && \function_exists('socket_strerror') && $errno > 0) {
            $message = \socket_strerror($errno);
        }
        if ($errno === 0 && $message !== '') {
            $errno = self::fromMessage($message);
        }
        $name = self::name($errno);
        return $message === '' ? ($name ?? "errno $errno") : ($name === null ? $message : "$message ($name)");
    }

    /** PHP sometimes reports errno 0 with the system's message: find the number back from the message. */
    public static function fromMessage(string $message): int
    {
        if (\function_exists('socket_strerror')) {
            foreach (self::NAMES as $errno => $_) {
                if (\strcasecmp(\socket_strerror($errno), $message) === 0) {
                    return $errno;
                }
            }
        }
        return 0;
    }

    /** Pulls "errno=111 Connection refused" apart from a PHP warning. @return array{int, string} */
    public static function fromWarning(?string $warning): array
    {
        if ($warning !== null && \preg_match('/errno=(\d+) ([^\n]+)/', $warning, $m)) {
            return [(int) $m[1], \rtrim($m[2])];
        }
        return [0, $warning ?? 'unknown error'];
    }
}
