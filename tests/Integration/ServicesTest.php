<?php

declare(strict_types=1);

namespace Weft\Tests\Integration;

use PHPUnit\Framework\TestCase;

/**
 * Checks that the throwaway services started by scripts/services.sh answer
 * where the integration tests expect them, speaking just enough of each wire
 * protocol over plain PHP streams to prove it is the right server.
 */
final class ServicesTest extends TestCase
{
    private const TIMEOUT = 5.0;

    public function testMariaDbSendsAProtocol10Handshake(): void
    {
        $url = $this->url('WEFT_TEST_MYSQL_URL', 'mysql://weft:weft@127.0.0.1:13306/weft', 13306);
        $conn = $this->connect($url);
        try {
            $header = $this->readExactly($conn, 4, 'MariaDB handshake header');
            $length = \ord($header[0]) | (\ord($header[1]) << 8) | (\ord($header[2]) << 16);
            self::assertSame(0, \ord($header[3]), 'the greeting is packet #0');
            self::assertGreaterThan(20, $length);
            $payload = $this->readExactly($conn, $length, 'MariaDB handshake payload');
        } finally {
            fclose($conn);
        }

        self::assertSame(10, \ord($payload[0]), 'protocol version 10');
        $nul = strpos($payload, "\0", 1);
        self::assertNotFalse($nul);
        $serverVersion = substr($payload, 1, $nul - 1);
        self::assertStringContainsString('MariaDB', $serverVersion);
        // The default authentication plugin is named at the end of the packet.
        self::assertStringContainsString('mysql_native_password', $payload);
    }

    public function testPostgreSqlAnswersAnSslRequest(): void
    {
        $url = $this->url('WEFT_TEST_PGSQL_URL', 'pgsql://weft:weft@127.0.0.1:15432/weft', 15432);
        $conn = $this->connect($url);
        try {
            // SSLRequest: Int32 length 8, Int32 code 80877103.
            fwrite($conn, pack('NN', 8, 80877103));
            $answer = $this->readExactly($conn, 1, 'PostgreSQL SSLRequest answer');
        } finally {
            fclose($conn);
        }

        self::assertContains($answer, ['N', 'S'], 'PostgreSQL answers an SSLRequest with N or S');
    }

    public function testRedisAnswersPing(): void
    {
        $url = $this->url('WEFT_TEST_REDIS_URL', 'redis://127.0.0.1:16379', 16379);
        $conn = $this->connect($url);
        try {
            fwrite($conn, "PING\r\n");
            self::assertSame('+PONG', $this->readLine($conn));
        } finally {
            fclose($conn);
        }
    }

    public function testRedisAcceptsAuthWithUserAndPassword(): void
    {
        $url = $this->url('WEFT_TEST_REDIS_URL', 'redis://127.0.0.1:16379', 16379);
        $conn = $this->connect($url);
        try {
            fwrite($conn, self::resp('AUTH', 'weft', 'weft'));
            self::assertSame('+OK', $this->readLine($conn));

            fwrite($conn, self::resp('ACL', 'WHOAMI'));
            self::assertSame('$4', $this->readLine($conn));
            self::assertSame('weft', $this->readLine($conn));

            fwrite($conn, self::resp('AUTH', 'weft', 'not-the-password'));
            self::assertStringStartsWith('-WRONGPASS', $this->readLine($conn));
        } finally {
            fclose($conn);
        }
    }

    /**
     * @return array{host: string, port: int}
     */
    private function url(string $env, string $default, int $defaultPort): array
    {
        $value = getenv($env);
        $url = \is_string($value) && $value !== '' ? $value : $default;
        $parts = parse_url($url);
        self::assertIsArray($parts, "$env is not a valid URL: $url");

        return [
            'host' => $parts['host'] ?? '127.0.0.1',
            'port' => $parts['port'] ?? $defaultPort,
        ];
    }

    /**
     * @param array{host: string, port: int} $url
     *
     * @return resource
     */
    private function connect(array $url)
    {
        $address = \sprintf('tcp://%s:%d', $url['host'], $url['port']);
        $conn = @stream_socket_client($address, $errno, $errstr, self::TIMEOUT);
        if ($conn === false) {
            self::fail("cannot connect to $address: $errstr ($errno); is `scripts/services.sh start` running?");
        }
        stream_set_timeout($conn, (int) self::TIMEOUT);

        return $conn;
    }

    /**
     * @param resource $conn
     */
    private function readExactly($conn, int $length, string $what): string
    {
        $data = '';
        while (\strlen($data) < $length) {
            $chunk = fread($conn, $length - \strlen($data));
            if ($chunk === false || $chunk === '') {
                $timedOut = stream_get_meta_data($conn)['timed_out'];
                self::fail(\sprintf(
                    '%s: %s after %d of %d bytes',
                    $what,
                    $timedOut ? 'timed out' : 'connection closed',
                    \strlen($data),
                    $length,
                ));
            }
            $data .= $chunk;
        }

        return $data;
    }

    /**
     * @param resource $conn
     */
    private function readLine($conn): string
    {
        $line = fgets($conn);
        if ($line === false) {
            self::fail('no reply from Redis: ' . (stream_get_meta_data($conn)['timed_out'] ? 'timed out' : 'connection closed'));
        }

        return rtrim($line, "\r\n");
    }

    private static function resp(string ...$args): string
    {
        $out = '*' . \count($args) . "\r\n";
        foreach ($args as $arg) {
            $out .= '$' . \strlen($arg) . "\r\n" . $arg . "\r\n";
        }

        return $out;
    }
}
