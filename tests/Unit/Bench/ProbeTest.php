<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Load\Probe;

/** The check request of a row gives up when told to, while the app is still thinking. */
final class ProbeTest extends TestCase
{
    public function testASlowAnswerIsAbandonedWhenAsked(): void
    {
        // A listener that never answers: the connection is queued in its backlog and stays silent.
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        self::assertIsResource($server);
        $port = (int) \substr((string) \stream_socket_get_name($server, false), \strlen('127.0.0.1:'));
        $asked = 0;
        try {
            Probe::request('127.0.0.1', $port, 'GET', '/', [], null, 600.0, static function () use (&$asked): bool {
                return ++$asked >= 3;
            });
            self::fail('an answer from a silent server');
        } catch (\RuntimeException $e) {
            self::assertSame('abandoned while waiting for the answer', $e->getMessage());
        } finally {
            \fclose($server);
        }
        self::assertSame(3, $asked, 'asked while waiting, and given up on the first yes');
    }

    public function testALineCheckGivesUpAfterItsTimeout(): void
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        self::assertIsResource($server);
        $port = (int) \substr((string) \stream_socket_get_name($server, false), \strlen('127.0.0.1:'));
        try {
            Probe::line('127.0.0.1', $port, 'hello', 0.2);
            self::fail('a reply from a silent server');
        } catch (\RuntimeException $e) {
            self::assertInstanceOf(\Weft\TimeoutException::class, $e);
        } finally {
            \fclose($server);
        }
    }

    public function testAnAnswerIsReadWhole(): void
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) \substr((string) \stream_socket_get_name($server, false), \strlen('127.0.0.1:'));
        $pid = \pcntl_fork();
        if ($pid === 0) {
            $conn = \stream_socket_accept($server, 10);
            \fread($conn, 4096);
            \usleep(300_000);   // longer than one wait slice: the answer arrives after a silence
            \fwrite($conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
            \usleep(300_000);
            \fwrite($conn, 'hello');
            \fclose($conn);
            exit(0);
        }
        try {
            $answer = Probe::request('127.0.0.1', $port, 'GET', '/', [], null, 30.0, static fn (): bool => false);
            self::assertSame(200, $answer['status']);
            self::assertSame('hello', $answer['body']);
        } finally {
            \pcntl_waitpid($pid, $status);
            \fclose($server);
        }
    }
}
