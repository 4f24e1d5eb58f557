<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Server;

use PHPUnit\Framework\TestCase;
use Psr\Log\NullLogger;
use Weft\Http\Message\Response;
use Weft\Http\Message\Upgrade;
use Weft\Http\Server\HttpOptions;
use Weft\Http\Server\HttpProtocol;
use Weft\Http\Server\ProtocolSwitch;
use Weft\Loop\Loop;
use Weft\Server\Connection;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;

/**
 * A 101 hands the connection over only to an upgrade that takes one (ProtocolSwitch, in the server's
 * layer: a message knows no connection); any other Upgrade is the application's error, a 500.
 */
final class UpgradeHandoverTest extends TestCase
{
    private const REQUEST = "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n";

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    public function testAProtocolSwitchIsHandedTheConnectionAfterTheRequest(): void
    {
        $switch = new class () implements ProtocolSwitch {
            public ?string $buffered = null;

            public function cost(): int
            {
                return 0;
            }

            public function switchProtocols(Connection $connection, Response $response, string $buffered, array $defaults): void
            {
                $this->buffered = $buffered;
                $connection->write("HTTP/1.1 101 Switching Protocols\r\n\r\nswitched");
                $connection->closeAfterFlush();
                $connection->flush();
            }
        };
        $answer = self::exchange(static fn (): Response => Response::switchingProtocols($switch), self::REQUEST . 'after');
        self::assertSame("HTTP/1.1 101 Switching Protocols\r\n\r\nswitched", $answer);
        self::assertSame('after', $switch->buffered);
    }

    public function testAnUpgradeThatTakesNoConnectionIsA500(): void
    {
        $upgrade = new class () implements Upgrade {
            public function cost(): int
            {
                return 0;
            }
        };
        $answer = self::exchange(static fn (): Response => Response::switchingProtocols($upgrade), self::REQUEST, end: true);
        self::assertStringStartsWith("HTTP/1.1 500 Internal Server Error\r\n", $answer);
    }

    /** One connection over a socket pair, through the real core and HTTP session: what the server sent. */
    private static function exchange(\Closure $application, string $request, bool $end = false): string
    {
        $driver = Loop::reset('select');
        $logger = new NullLogger();
        $connections = new Connections(new HttpProtocol($application, $logger, new HttpOptions()), new Dispatcher($driver, $logger), $driver, $logger, 4);
        [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $connections->add($server, '127.0.0.1:40000');
        \fwrite($client, $request);
        if ($end) {
            \stream_socket_shutdown($client, \STREAM_SHUT_WR); // the server closes once it has answered
        }
        \stream_set_blocking($client, false);
        $received = '';
        $driver->onReadable($client, static function (string $id) use ($client, &$received, $driver): void {
            $data = @\fread($client, 65536);
            if ($data === false || ($data === '' && \feof($client))) {
                $driver->cancel($id);
                $driver->stop();
                return;
            }
            $received .= $data;
        });
        $driver->unreference($driver->delay(5.0, static fn () => $driver->stop()));
        $driver->run();
        $connections->closeAll();
        \fclose($client);
        return $received;
    }
}
