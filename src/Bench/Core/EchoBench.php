<?php

declare(strict_types=1);

namespace Weft\Bench\Core;

use Weft\Coroutine\WaitGroup;
use Weft\Socket\ConnectOptions;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Listener;
use Weft\Socket\Socket;

use function Weft\go;
use function Weft\run;

/**
 * TCP echo over loopback with one coroutine per connection, server and client in separate processes:
 * the cost of Weft's socket layer and scheduler without any protocol on top.
 */
final class EchoBench
{
    public const MESSAGE_BYTES = 64;

    /** Serves until it is killed (SIGTERM's default action); prints READY <port> once it listens. */
    public static function server(int $port = 0): int
    {
        $listener = Listener::listen("127.0.0.1:$port");
        echo 'READY ' . $listener->port() . "\n";
        run(static function () use ($listener): void {
            while (true) {
                $socket = $listener->accept();
                go(static function () use ($socket): void {
                    try {
                        while (($data = $socket->read()) !== null) {
                            $socket->write($data);
                        }
                    } catch (\Throwable) {
                    } finally {
                        $socket->close();
                    }
                });
            }
        });
        return 0;
    }

    /**
     * $connections coroutines, each with its own connection, send a message and read it back until
     * $seconds are over.
     *
     * @return array<string, mixed>
     */
    public static function client(int $port, int $connections, float $seconds): array
    {
        return run(static function () use ($port, $connections, $seconds): array {
            $message = \str_repeat('x', self::MESSAGE_BYTES - 1) . "\n";
            $sockets = [];
            $errors = ['connect' => 0, 'mismatch' => 0, 'closed' => 0, 'timeout' => 0];
            for ($i = 0; $i < $connections; $i++) {
                try {
                    $sockets[] = Socket::connect("127.0.0.1:$port", ConnectOptions::defaults()->withConnectTimeout(5.0)->withTcpNoDelay(true));
                } catch (\Throwable) {
                    $errors['connect']++;
                }
            }
            $messages = 0;
            $start = \hrtime(true);
            $deadline = $start + (int) ($seconds * 1e9);
            $wg = new WaitGroup();
            foreach ($sockets as $socket) {
                $wg->add();
                go(static function () use ($socket, $message, $deadline, $wg, &$messages, &$errors): void {
                    try {
                        while (\hrtime(true) < $deadline) {
                            $socket->write($message);
                            if ($socket->readExactly(self::MESSAGE_BYTES, 5.0) !== $message) {
                                $errors['mismatch']++;
                                break;
                            }
                            $messages++;
                        }
                    } catch (ConnectionClosed) {
                        $errors['closed']++;
                    } catch (\Weft\Coroutine\Timeout) {
                        $errors['timeout']++;
                    } finally {
                        $socket->close();
                        $wg->done();
                    }
                });
            }
            $wg->wait();
            $elapsed = (\hrtime(true) - $start) / 1e9;
            return [
                'connections' => $connections,
                'messages' => $messages,
                'seconds' => $elapsed,
                'messages_per_second' => $messages / $elapsed,
                'errors' => $errors,
            ];
        });
    }
}
