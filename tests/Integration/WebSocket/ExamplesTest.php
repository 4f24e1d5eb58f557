<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\WebSocket;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Docs;
use Weft\Tests\Support\RawWebSocket;
use Weft\Tests\Support\ServerProcess;
use Weft\WebSocket\Frame;

/** The WebSocket examples the docs show, run as a user would: bin/weft serve examples/... */
final class ExamplesTest extends TestCase
{
    private const EXAMPLES = __DIR__ . '/../../../examples/';

    public function testTheEchoExampleEchoesTextAndBinary(): void
    {
        $server = new ServerProcess([self::EXAMPLES . 'websocket-echo.php', '--workers', '1']);
        $ws = new RawWebSocket($server->address());
        $ws->sendText('héllo');
        self::assertSame([Frame::TEXT, 'héllo', true], $ws->read());
        $ws->send(Frame::encodeMasked(Frame::BINARY, "\x00\xff"));
        self::assertSame([Frame::BINARY, "\x00\xff", true], $ws->read());
        // Messages sent at once (one fragmented) come back whole and in order.
        $ws->send(Frame::encodeMasked(Frame::TEXT, 'a') . Frame::encodeMasked(Frame::TEXT, 'b', false)
            . Frame::encodeMasked(Frame::CONTINUATION, 'c') . Frame::encodeMasked(Frame::TEXT, 'd'));
        self::assertSame(['a', 'bc', 'd'], [$ws->read()[1] ?? null, $ws->read()[1] ?? null, $ws->read()[1] ?? null]);
        $ws->close();
        $server->stop();
    }

    /** docs/static-and-websocket.md shows the echo example as it is: every code line of the snippet, in order. */
    public function testTheDocsShowTheEchoExampleAsItIs(): void
    {
        $snippet = Docs::afterFirstLine(Docs::snippet('static-and-websocket', 'php', "<?php // examples/websocket-echo.php\n"));
        Docs::assertExcerptOf(self::EXAMPLES . 'websocket-echo.php', $snippet, 'the echo example of docs/static-and-websocket.md', exact: true);
        self::assertStringContainsString('implements Handler', $snippet, 'the first example is the event form');
    }

    public function testTheChatExampleWithPythonClients(): void
    {
        if (\shell_exec('/usr/bin/python3 -c "import websockets" 2>&1') !== null) {
            self::markTestSkipped('python3-websockets is not installed (scripts/setup.sh installs it)');
        }
        $server = new ServerProcess([self::EXAMPLES . 'websocket-chat.php', '--workers', '1']);
        $out = \shell_exec('/usr/bin/python3 ' . \escapeshellarg(__DIR__ . '/python_client.py') . ' chat_example ' . $server->port . ' 2>&1');
        $result = \json_decode(\trim((string) $out), true);
        self::assertIsArray($result, (string) $out);
        self::assertSame([
            '* alice joined (1 here)',
            '* bob joined (2 here)', '* bob joined (2 here)',
            'alice: hi all', 'alice: hi all',
            '* bob left',
        ], $result['seen']);
        $server->stop();
    }

    public function testTheBroadcastExampleReachesEveryClient(): void
    {
        $server = new ServerProcess([self::EXAMPLES . 'websocket-broadcast.php', '--workers', '1']);
        $clients = [];
        for ($i = 0; $i < 20; $i++) {
            $clients[] = new RawWebSocket($server->address());
        }
        // onOpen runs when each has connected; one more round trip makes sure all have joined.
        $clients[0]->sendText('first');
        self::assertSame('first', $clients[0]->read()[1] ?? null);
        $clients[19]->sendText('to all');
        foreach ($clients as $i => $ws) {
            $frame = $ws->read();
            if ($i === 0) {
                $frame = $frame[1] === 'first' ? $ws->read() : $frame;
            } elseif ($frame !== null && $frame[1] === 'first') {
                $frame = $ws->read();
            }
            self::assertSame([Frame::TEXT, 'to all', true], $frame, "client $i");
            $ws->close();
        }
        $server->stop();
    }
}
