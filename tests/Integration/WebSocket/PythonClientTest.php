<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\WebSocket;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/**
 * Weft's WebSocket server against real, independent clients: Python's `websockets` (Debian
 * python3-websockets, run with /usr/bin/python3; scripts/setup.sh installs it), and Node's built-in
 * WebSocket where the installed Node has one.
 */
final class PythonClientTest extends TestCase
{
    private const PYTHON = '/usr/bin/python3';
    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        if (\shell_exec(self::PYTHON . ' -c "import websockets" 2>&1') !== null) {
            self::markTestSkipped('python3-websockets is not installed (scripts/setup.sh installs it)');
        }
        self::$server = new ServerProcess([__DIR__ . '/fixtures/ws.php', '--workers', '1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    public function testEchoOfTextBinaryFragmentedLargeAndManyMessagesWithPingAndNormalClose(): void
    {
        $result = self::client('echo');
        self::assertSame('héllo ☃', $result['text']);
        self::assertSame([0, 1, 254, 255], $result['binary']);
        self::assertSame('fragmented', $result['fragmented']);
        self::assertTrue($result['big_ok'], 'a 1 MB message comes back whole');
        self::assertTrue($result['pong']);
        self::assertTrue($result['ordered'], '500 messages come back in order');
        self::assertSame(1000, $result['close_code']);
    }

    public function testAMessageOverTheLimitClosesWith1009(): void
    {
        self::assertSame(1009, self::client('too_big')['code']);
    }

    public function testTheHandlerClosesWithItsCodeAndReason(): void
    {
        self::assertSame(['code' => 4001, 'reason' => 'bye'], self::client('server_close'));
    }

    public function testAFailingHandlerClosesWith1011AndIsLogged(): void
    {
        self::assertSame(['code' => 1011, 'reason' => 'internal error'], self::client('throws'));
        self::assertStringContainsString('the handler failed', self::$server->output());
    }

    public function testSubprotocolSelectionPrefersTheServersOrder(): void
    {
        self::assertSame(['negotiated' => 'chat.v2', 'told' => 'chat.v2', 'none' => ''], self::client('protocols'));
    }

    public function testABroadcastReachesEveryMemberOfTheRoom(): void
    {
        self::assertSame(['got' => ['hi from a', 'hi from a']], self::client('chat'));
    }

    /**
     * A second independent client where one is available without installing anything: Node's built-in
     * WebSocket (Node 20.10+ behind --experimental-websocket, Node 22+ by default).
     */
    public function testNodesBuiltInWebSocketClient(): void
    {
        $probe = \shell_exec('node --experimental-websocket -e "process.stdout.write(typeof WebSocket)" 2>/dev/null');
        if ($probe !== 'function') {
            self::markTestSkipped('no Node.js with a built-in WebSocket client here');
        }
        $out = (string) \shell_exec('node --experimental-websocket ' . \escapeshellarg(__DIR__ . '/node_client.mjs') . ' ' . self::$server->port . ' 2>/dev/null');
        $result = \json_decode(\trim($out), true);
        self::assertIsArray($result, $out);
        self::assertSame(['hello from node ☃', [0, 1, 2, 253, 254, 255], 'big:200000'], $result['got']);
        self::assertSame(4321, $result['code']);
        self::assertSame('', $result['reason'], 'the server echoes the code, not the reason');
        self::assertTrue($result['clean'], 'a clean closing handshake');
    }

    /** @return array<string, mixed> */
    private static function client(string $scenario): array
    {
        $command = [self::PYTHON, __DIR__ . '/python_client.py', $scenario, (string) self::$server->port];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = \stream_get_contents($pipes[1]);
        $err = \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        self::assertSame(0, $code, "python client '$scenario' failed:\n$out\n$err");
        return \json_decode(\trim((string) $out), true, 512, \JSON_THROW_ON_ERROR);
    }
}
