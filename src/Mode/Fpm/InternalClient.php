<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * Weft's requests to its own nginx over the internal Unix socket: the readiness probe (which goes
 * through php-fpm to the front controller and loads the application) and php-fpm's status page.
 * Plain blocking HTTP/1.0, one request per connection; the supervisor has nothing else to do.
 */
final class InternalClient
{
    public function __construct(private readonly FpmSettings $settings)
    {
    }

    /** Whether a worker ran the front controller and the application file loaded. */
    public function ping(float $timeout = 2.0): bool
    {
        return self::isPong($this->pingReply($timeout));
    }

    /** @return array{0: int, 1: string}|null the readiness request's status and body, null without an answer */
    public function pingReply(float $timeout = 2.0): ?array
    {
        return $this->get('/ping', $timeout);
    }

    /** @param array{0: int, 1: string}|null $reply */
    public static function isPong(?array $reply): bool
    {
        return $reply !== null && $reply[0] === 200 && \trim($reply[1]) === 'pong';
    }

    /**
     * php-fpm's status page with every worker ("?full&json"), or null when it cannot be had.
     *
     * @return array<string, mixed>|null
     */
    public function fpmStatus(float $timeout = 2.0): ?array
    {
        $reply = $this->get(PhpFpmConfig::STATUS_PATH . '?full&json', $timeout);
        if ($reply === null || $reply[0] !== 200) {
            return null;
        }
        $status = \json_decode($reply[1], true);
        return \is_array($status) ? $status : null;
    }

    /** @return array{0: int, 1: string}|null status code and body */
    private function get(string $target, float $timeout): ?array
    {
        $socket = @\stream_socket_client('unix://' . $this->settings->internalSocket(), $errno, $error, $timeout);
        if ($socket === false) {
            return null;
        }
        try {
            \stream_set_timeout($socket, (int) \ceil($timeout));
            if (@\fwrite($socket, "GET $target HTTP/1.0\r\nHost: weft\r\n\r\n") === false) {
                return null;
            }
            $reply = '';
            $deadline = \microtime(true) + $timeout;
            while (!\feof($socket) && \microtime(true) < $deadline) {
                $chunk = @\fread($socket, 65536);
                if ($chunk === false || (\stream_get_meta_data($socket)['timed_out'] ?? false)) {
                    return null;
                }
                $reply .= $chunk;
            }
        } finally {
            \fclose($socket);
        }
        $end = \strpos($reply, "\r\n\r\n");
        if ($end === false || \preg_match('#\AHTTP/1\.[01] (\d{3})#', $reply, $m) !== 1) {
            return null;
        }
        return [(int) $m[1], (string) \substr($reply, $end + 4)];
    }
}
