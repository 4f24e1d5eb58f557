<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/**
 * sd_notify as systemd sees it: the test plays systemd's part with a real unix datagram socket in
 * $NOTIFY_SOCKET and reads what the master sends through start, reload and stop.
 */
final class SystemdNotifyTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/ops-app.php';

    public function testReadyReloadingAndStoppingAreNotified(): void
    {
        $path = \sys_get_temp_dir() . '/weft-notify-' . \bin2hex(\random_bytes(4)) . '.sock';
        $socket = \stream_socket_server("udg://$path", $errno, $error, \STREAM_SERVER_BIND);
        self::assertNotFalse($socket, $error);
        try {
            $server = new ServerProcess([self::APP, '--workers', '2'], ['NOTIFY_SOCKET' => $path]);
            $messages = self::receiveUntil($socket, 'READY=1');
            self::assertSame('MAINPID=' . $server->masterPid() . "\nSTATUS=Starting workers", $messages[0]);
            self::assertSame("READY=1\nSTATUS=Serving with 2 worker(s)", \end($messages));

            $server->control('reload');
            $messages = self::receiveUntil($socket, 'READY=1');
            self::assertMatchesRegularExpression("/^RELOADING=1\nMONOTONIC_USEC=\d+\nSTATUS=Reloading/", $messages[0]);
            self::assertStringStartsWith('READY=1', \end($messages));

            // The application never sees the variable: only the master talks to systemd.
            self::assertSame('false', \file_get_contents("http://{$server->address()}/env?name=NOTIFY_SOCKET"));

            $server->stop();
            $messages = self::receiveUntil($socket, 'STOPPING=1');
            self::assertStringStartsWith('STOPPING=1', \end($messages));
        } finally {
            \fclose($socket);
            @\unlink($path);
        }
    }

    public function testTheWatchdogIsPingedFromTheMastersLoop(): void
    {
        $path = \sys_get_temp_dir() . '/weft-notify-' . \bin2hex(\random_bytes(4)) . '.sock';
        $socket = \stream_socket_server("udg://$path", $errno, $error, \STREAM_SERVER_BIND);
        self::assertNotFalse($socket, $error);
        try {
            $server = new ServerProcess([self::APP, '--workers', '1'], ['NOTIFY_SOCKET' => $path, 'WATCHDOG_USEC' => '400000']);
            self::receiveUntil($socket, 'READY=1');
            // Two pings, 0.2 s apart: WatchdogSec=0.4 s and a ping at half of it.
            self::receiveUntil($socket, 'WATCHDOG=1');
            self::receiveUntil($socket, 'WATCHDOG=1');
            // A stopped master pings no more: systemd would restart the service.
            $master = $server->masterPid();
            self::assertGreaterThan(1, $master);
            \posix_kill($master, \SIGSTOP);
            \usleep(100_000);
            while (self::drainOne($socket)) {
            }
            $read = [$socket];
            $w = $e = null;
            self::assertSame(0, \stream_select($read, $w, $e, 1, 0), 'no ping from a stopped master');
            \posix_kill($master, \SIGCONT);
            $resumed = self::receiveUntil($socket, 'WATCHDOG=1');
            self::assertStringStartsWith('WATCHDOG=1', (string) \end($resumed), 'pings resume with the master');
            $server->stop();
        } finally {
            \fclose($socket);
            @\unlink($path);
        }
    }

    /** @param resource $socket */
    private static function drainOne(mixed $socket): bool
    {
        $read = [$socket];
        $w = $e = null;
        if (@\stream_select($read, $w, $e, 0, 0) > 0) {
            \stream_socket_recvfrom($socket, 4096);
            return true;
        }
        return false;
    }

    public function testAnAbstractSocketNameWorks(): void
    {
        if (!\function_exists('socket_create')) {
            self::markTestSkipped('the sockets extension is not loaded');
        }
        $name = 'weft-notify-' . \bin2hex(\random_bytes(4));
        $socket = \socket_create(\AF_UNIX, \SOCK_DGRAM, 0);
        self::assertTrue(\socket_bind($socket, "\0$name"));
        \socket_set_option($socket, \SOL_SOCKET, \SO_RCVTIMEO, ['sec' => 20, 'usec' => 0]);
        $server = new ServerProcess([self::APP, '--workers', '1'], ['NOTIFY_SOCKET' => "@$name"]);
        $received = '';
        while (!\str_contains($received, 'READY=1')) {
            $data = '';
            self::assertNotFalse(@\socket_recv($socket, $data, 4096, 0), 'no READY=1 within 20 s');
            $received .= $data . "\n";
        }
        self::assertStringContainsString('MAINPID=' . $server->masterPid(), $received);
        $server->stop();
        \socket_close($socket);
    }

    /** @param resource $socket @return list<string> the datagrams up to the first one starting with $prefix */
    private static function receiveUntil(mixed $socket, string $prefix): array
    {
        $messages = [];
        $deadline = \microtime(true) + 20;
        while (\microtime(true) < $deadline) {
            $read = [$socket];
            $w = $e = null;
            if (@\stream_select($read, $w, $e, 0, 200_000) > 0) {
                $message = (string) \stream_socket_recvfrom($socket, 4096);
                $messages[] = $message;
                if (\str_starts_with($message, $prefix)) {
                    return $messages;
                }
            }
        }
        self::fail("no $prefix datagram within 20 s; got: " . \json_encode($messages));
    }
}
