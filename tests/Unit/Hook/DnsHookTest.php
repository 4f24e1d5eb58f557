<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Hook;

use PHPUnit\Framework\TestCase;
use Weft\Hook\Hooks;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/** gethostbyname()/gethostbynamel() resolve in a thread inside a coroutine; the originals elsewhere. */
final class DnsHookTest extends TestCase
{
    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        Loop::reset('select');
        self::assertSame(Hooks::KINDS['dns'], Hooks::enable(Hooks::KINDS['dns']));
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        Loop::reset('select');
    }

    public function testALookupInACoroutineLetsOthersRunAndGivesTheOriginalsAnswers(): void
    {
        $expected = [\gethostbyname('localhost'), \gethostbynamel('localhost'), \gethostbyname('weft-no-such-host.invalid'), \gethostbynamel('weft-no-such-host.invalid')];
        [$log, $answers] = run(static function (): array {
            $log = [];
            $lookup = go(static function () use (&$log): array {
                $answers = [\gethostbyname('localhost'), \gethostbynamel('localhost'), \gethostbyname('weft-no-such-host.invalid'), \gethostbynamel('weft-no-such-host.invalid')];
                $log[] = 'resolved';
                return $answers;
            });
            // The lookup waits for its thread through the loop: we run before it is done.
            $log[] = 'ran meanwhile';
            return [&$log, $lookup->join()];
        });
        self::assertSame(['ran meanwhile', 'resolved'], $log);
        self::assertSame($expected, $answers);
        self::assertSame('127.0.0.1', $answers[0]);
        self::assertSame('weft-no-such-host.invalid', $answers[2]);
        self::assertFalse($answers[3]);
    }

    public function testIpLiteralsAndOutsideACoroutineTakeTheOriginalPath(): void
    {
        self::assertSame('127.0.0.1', \gethostbyname('localhost'));
        $log = run(static function (): array {
            $log = [];
            go(static function () use (&$log): void {
                $log[] = \gethostbyname('10.1.2.3');
            });
            $log[] = 'after';
            return $log;
        });
        self::assertSame(['10.1.2.3', 'after'], $log, 'an IP literal is answered at once, without a thread');
    }

    public function testAStreamConnectToAHostNameLooksItUpInAThread(): void
    {
        Hooks::enable(Hooks::KINDS['dns'] | Hooks::KINDS['stream']);
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) \substr((string) \stream_socket_get_name($server, false), 10);
        [$log, $peer, $error] = run(static function () use ($port): array {
            $log = [];
            $client = go(static function () use ($port, &$log) {
                $socket = \stream_socket_client("tcp://localhost:{$port}", $errno, $error, 5);
                $log[] = 'connected';
                return $socket;
            });
            $log[] = 'ran meanwhile';
            $socket = $client->join();
            $failed = go(static function (): string {
                $socket = @\stream_socket_client('tcp://weft-no-such-host.invalid:80', $errno, $error, 5);
                return $socket === false ? $error : 'connected?';
            })->join();
            return [$log, \stream_socket_get_name($socket, true), $failed];
        });
        \fclose($server);
        self::assertSame(['ran meanwhile', 'connected'], $log);
        self::assertSame("127.0.0.1:{$port}", $peer);
        self::assertStringContainsString('getaddrinfo for weft-no-such-host.invalid failed', $error);
    }

    public function testCancellingALookupThrowsIntoTheCoroutine(): void
    {
        $outcome = run(static function (): string {
            $lookup = go(static fn () => \gethostbyname('localhost'));
            $lookup->cancel();
            try {
                return (string) $lookup->join();
            } catch (\Weft\Coroutine\Cancelled) {
                return 'cancelled';
            }
        });
        self::assertSame('cancelled', $outcome);
    }
}
