<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\WebSocket;

use PHPUnit\Framework\TestCase;
use Weft\Client\Redis\Connection;
use Weft\Tests\Support\Docs;
use Weft\Tests\Support\ServerProcess;

/**
 * Weft\WebSocket\Hub through examples/websocket-hub-chat.php, with real processes: two `bin/weft serve`
 * instances sharing rooms through the real Redis (WEFT_TEST_REDIS_URL), Python `websockets` clients
 * (hub_client.py), a Redis connection killed with CLIENT KILL, and an outage made by a proxy
 * (redis_proxy.py) so that the Redis other engineers share never goes down.
 */
final class HubTest extends TestCase
{
    private const PYTHON = '/usr/bin/python3';
    private const EXAMPLE = __DIR__ . '/../../../examples/websocket-hub-chat.php';

    private string $prefix;
    /** @var list<ServerProcess> */
    private array $servers = [];
    /** @var resource|null */
    private $proxy = null;

    protected function setUp(): void
    {
        if (\shell_exec(self::PYTHON . ' -c "import websockets" 2>&1') !== null) {
            self::markTestSkipped('python3-websockets is not installed (scripts/setup.sh installs it)');
        }
        // Our own keys and channel on the shared Redis.
        $this->prefix = 'weft-test-hub:' . \bin2hex(\random_bytes(6)) . ':';
    }

    protected function tearDown(): void
    {
        foreach ($this->servers as $server) {
            $server->stop();
        }
        $this->servers = [];
        if ($this->proxy !== null) {
            \proc_terminate($this->proxy);
            \proc_close($this->proxy);
            $this->proxy = null;
        }
        if (isset($this->prefix) && \getenv('WEFT_TEST_REDIS_URL')) {
            $redis = Connection::connect((string) \getenv('WEFT_TEST_REDIS_URL'));
            $keys = $redis->keys($this->prefix . '*');
            if (\is_array($keys) && $keys !== []) {
                $redis->del(...$keys);
            }
            $redis->close();
        }
    }

    public function testWithoutRedisTheHubCoversTheWorkersOwnConnections(): void
    {
        $server = $this->serve(null);
        $result = $this->client('cross', $server->port, $server->port);
        self::assertSame('* a1 joined r (1 here)', $result['a1_joined']);
        self::assertSame('* b1 joined r (2 here)', $result['b1_joined']);
        self::assertSame('* 3 here', $result['a1_who']);
        self::assertSame('* 2 here', $result['b1_who_after_leave']);
        self::assertSame(1, $result['a1_copies_of_own']);
        self::assertSame('local', $this->stats($server)['backend']);
    }

    public function testTwoInstancesShareRoomsMessagesAndPresenceThroughRedis(): void
    {
        $redis = $this->redisUrl();
        $a = $this->serve($redis);
        $b = $this->serve($redis);
        $result = $this->client('cross', $a->port, $b->port);
        self::assertSame('* a1 joined r (1 here)', $result['a1_joined']);
        self::assertSame('* b1 joined r (2 here)', $result['b1_joined'], 'presence counts members of both instances');
        self::assertSame('* a2 joined r (3 here)', $result['b1_saw_a2_join']);
        self::assertSame('b1: hello from B', $result['a1_got'], 'a client of instance A gets what one of B published');
        self::assertSame('a1: hello from A', $result['b1_got']);
        self::assertSame('* 3 here', $result['a1_who']);
        self::assertSame('* 3 here', $result['b1_who']);
        self::assertSame('* 2 here', $result['b1_who_after_leave'], 'a leave on A lowers the count B sees');
        self::assertSame(1, $result['a1_copies_of_own'], 'the publishing worker delivers its own message once');
        self::assertSame(1, $result['a1_copies_of_b1']);
        self::assertSame(1, $result['b1_copies_of_a1']);
        $stats = $this->stats($a);
        self::assertSame(['redis', 0, 0, 0], [$stats['backend'], $stats['unsent'], $stats['uncertain'], $stats['missed']]);
    }

    public function testOneInstancesWorkersShareRoomsThroughRedis(): void
    {
        // Which worker takes which client is the kernel's choice: the outcome must not depend on it.
        $server = $this->serve($this->redisUrl(), 2);
        $result = $this->client('cross', $server->port, $server->port);
        self::assertSame('* b1 joined r (2 here)', $result['b1_joined']);
        self::assertSame('b1: hello from B', $result['a1_got']);
        self::assertSame('a1: hello from A', $result['b1_got']);
        self::assertSame('* 3 here', $result['a1_who']);
        self::assertSame('* 2 here', $result['b1_who_after_leave']);
        self::assertSame([1, 1, 1], [$result['a1_copies_of_own'], $result['a1_copies_of_b1'], $result['b1_copies_of_a1']]);
    }

    public function testAKilledRedisConnectionIsReopenedAndDeliveryGoesOn(): void
    {
        $redis = $this->redisUrl();
        $a = $this->serve($redis);
        $b = $this->serve($redis);
        $worker = $a->workerPids()[0];
        $redisPort = (int) (\parse_url($redis, \PHP_URL_PORT) ?? 6379);
        $result = $this->client('killed', $a->port, $b->port, $redisPort, $worker);
        self::assertNotEmpty($result['killed']);
        self::assertSame(\array_fill(0, \count($result['killed']), ':1'), $result['killed'], 'CLIENT KILL ADDR found each connection');
        self::assertGreaterThanOrEqual(1, $result['stats_a']['reconnects']);
        self::assertSame('a1: local after kill', $result['b1_got_a1']);
        self::assertSame('b1: from B after kill', $result['a1_got_b1']);
        ServerProcess::waitFor(fn () => \str_contains($a->output(), 'Hub: subscribed to Redis again'), 10, 'the reconnect log line');
        self::assertStringContainsString('Hub: the Redis subscription is lost', $a->output());
    }

    public function testWhatIsPublishedWhileRedisIsUnreachableIsReportedAndLocalDeliveryGoesOn(): void
    {
        $redis = $this->redisUrl();
        [$proxyPid, $proxyPort] = $this->startProxy((int) (\parse_url($redis, \PHP_URL_PORT) ?? 6379));
        $a = $this->serve("redis://127.0.0.1:$proxyPort");
        $b = $this->serve($redis);
        $result = $this->client('outage', $a->port, $b->port, $proxyPid);

        // While down: instance A's members still get each other's messages, the sender is told.
        self::assertSame('a1: from A during outage', $result['a1_local']);
        self::assertSame('a1: from A during outage', $result['a2_local']);
        self::assertStringStartsWith('* only this server got that: ', $result['a1_told']);
        self::assertSame('* 2 here on this server; the others cannot be counted now', $result['a1_who_during']);
        // After: delivery across instances again, and both sides report what did not cross.
        self::assertSame('b1: from B after outage', $result['a1_after']);
        self::assertSame('a1: from A after outage', $result['b1_after']);
        self::assertFalse($result['a1_saw_b_during']);
        self::assertFalse($result['b1_saw_a_during']);
        self::assertSame(1, $result['stats_a']['unsent'] + $result['stats_a']['uncertain'], 'the publish that could not reach Redis');
        self::assertSame(1, $result['stats_a']['missed'], "B's message published while A was cut off");
        self::assertSame(1, $result['stats_b']['missed'], "A's message that never reached Redis");
        ServerProcess::waitFor(fn () => \str_contains($a->output(), 'Hub: Redis takes publishes again; 1 message(s) published meanwhile did not reach the other workers'), 10, "A's log of its unsent publish");
        self::assertStringContainsString('did not reach Redis, so no other worker got it', $a->output());
        self::assertMatchesRegularExpression('/Hub: 1 message\(s\) of worker [0-9a-f]{16} never reached this worker/', $a->output());
        ServerProcess::waitFor(fn () => \preg_match('/Hub: 1 message\(s\) of worker [0-9a-f]{16} never reached this worker/', $b->output()) === 1, 10, "B's log of the gap");
    }

    public function testTheDocsHubSnippetIsTheExamplesCode(): void
    {
        $snippet = Docs::afterFirstLine(Docs::snippet('static-and-websocket', 'php', "<?php // examples/websocket-hub-chat.php\n"));
        Docs::assertExcerptOf(self::EXAMPLE, $snippet, 'the Hub example of docs/static-and-websocket.md');
    }

    private function redisUrl(): string
    {
        $url = \getenv('WEFT_TEST_REDIS_URL');
        if (!$url) {
            self::markTestSkipped('WEFT_TEST_REDIS_URL is not set (eval "$(bash scripts/services.sh env)")');
        }
        return $url;
    }

    private function serve(?string $redis, int $workers = 1): ServerProcess
    {
        $env = ['WEFT_HUB_PREFIX' => $this->prefix, 'WEFT_HUB_REDIS' => $redis ?? ''];
        $phpOptions = \extension_loaded('weft') ? ['-d', 'extension=' . \dirname(__DIR__, 3) . '/ext/modules/weft.so'] : [];
        return $this->servers[] = new ServerProcess([self::EXAMPLE, '--workers', (string) $workers], $env, 20.0, $phpOptions);
    }

    /** @return array<string, mixed> */
    private function stats(ServerProcess $server): array
    {
        $body = (string) \file_get_contents("http://{$server->address()}/hub/stats");
        return \json_decode($body, true, 512, \JSON_THROW_ON_ERROR);
    }

    /** @return array<string, mixed> */
    private function client(string $scenario, int ...$args): array
    {
        $command = [self::PYTHON, __DIR__ . '/hub_client.py', $scenario, ...\array_map('strval', $args)];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = \stream_get_contents($pipes[1]);
        $err = \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        $logs = \implode("\n---\n", \array_map(static fn (ServerProcess $s): string => $s->output(), $this->servers));
        self::assertSame(0, $code, "hub_client.py $scenario failed:\n$out\n$err\nservers:\n$logs");
        return \json_decode((string) $out, true, 512, \JSON_THROW_ON_ERROR);
    }

    /** @return array{int, int} the proxy's pid and port */
    private function startProxy(int $redisPort): array
    {
        $this->proxy = \proc_open([self::PYTHON, __DIR__ . '/redis_proxy.py', (string) $redisPort], [1 => ['pipe', 'w']], $pipes);
        $line = \fgets($pipes[1]);
        self::assertIsString($line);
        self::assertMatchesRegularExpression('/^READY \d+$/', \trim($line));
        return [\proc_get_status($this->proxy)['pid'], (int) \substr(\trim($line), 6)];
    }
}
