<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Cancelled;
use Weft\Ext\Epoll;
use Weft\Hook\Hooks;
use Weft\Loop\NativeDriver;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/**
 * A hooked stream keeps one loop watcher for its descriptor between waits (disabled in between) and the
 * extension drops it when the stream closes. These are the ways that could go wrong: a descriptor number
 * that comes back for another connection, a wait that times out or is cancelled, and a kept watcher
 * holding the loop open.
 */
final class KeptWatcherTest extends TestCase
{
    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        Loop::reset('select');
    }

    /** @return iterable<string, array{string}> */
    public static function backends(): iterable
    {
        yield 'select' => ['select'];
        yield 'epoll' => ['epoll'];
    }

    private function useLoop(string $backend): void
    {
        if ($backend === 'epoll' && !\Weft\Loop\DriverFactory::epollAvailable()) {
            self::markTestSkipped('no epoll backend');
        }
        Loop::reset($backend);
        Hooks::enable(Hooks::KINDS['stream'] | Hooks::KINDS['sleep']);
    }

    /**
     * A connected pair of hooked TCP streams (stream_socket_pair() streams are not the socket
     * transports' and are not hooked).
     *
     * @return array{resource, resource}
     */
    private static function tcpPair(): array
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $client = \stream_socket_client('tcp://' . \stream_socket_get_name($server, false), $errno, $error, 5);
        $peer = \stream_socket_accept($server, 5);
        \fclose($server);
        return [$client, $peer];
    }

    /** Reads once after the peer answers a little later: the read waits through the loop. */
    private static function readAfterADelay(mixed $client, mixed $peer, string $data): string
    {
        go(static function () use ($peer, $data): void {
            \usleep(20_000);
            \fwrite($peer, $data);
        });
        return (string) \fread($client, 100);
    }

    #[DataProvider('backends')]
    public function testADescriptorNumberThatComesBackForAnotherConnectionWaitsAfresh(string $backend): void
    {
        $this->useLoop($backend);
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $address = 'tcp://' . \stream_socket_get_name($server, false);
        $result = run(static function () use ($server, $address): array {
            $first = \stream_socket_client($address, $errno, $error, 5);
            \stream_set_timeout($first, 5);
            $firstPeer = \stream_socket_accept($server, 5);
            $got = [self::readAfterADelay($first, $firstPeer, 'one'), self::readAfterADelay($first, $firstPeer, 'two')];
            $fd = Epoll::descriptorOf($first);
            \fclose($first);
            // New sockets take the lowest free number: open until one gets the closed one's.
            $extra = [];
            $second = null;
            for ($i = 0; $i < 64 && $second === null; $i++) {
                $client = \stream_socket_client($address, $errno, $error, 5);
                $peer = \stream_socket_accept($server, 5);
                if (Epoll::descriptorOf($client) === $fd) {
                    $second = [$client, $peer];
                } else {
                    $extra[] = [$client, $peer];
                }
            }
            if ($second === null) {
                return ['reused' => false];
            }
            \stream_set_timeout($second[0], 5);
            $start = \hrtime(true);
            $got[] = self::readAfterADelay($second[0], $second[1], 'three');
            $seconds = (\hrtime(true) - $start) / 1e9;
            $timedOut = \stream_get_meta_data($second[0])['timed_out'];
            foreach ([$second, ...$extra] as [$client, $peer]) {
                \fclose($client);
                \fclose($peer);
            }
            \fclose($firstPeer);
            \fclose($server);
            return ['reused' => true, 'got' => $got, 'seconds' => $seconds, 'timed_out' => $timedOut, 'watchers' => Loop::get()->watcherCount()];
        });
        self::assertTrue($result['reused'], 'a new connection got the closed descriptor number');
        self::assertSame(['one', 'two', 'three'], $result['got']);
        self::assertFalse($result['timed_out'], 'the read on the reused number was woken by its data, not by its 5 s timeout');
        self::assertLessThan(4.0, $result['seconds']);
        self::assertSame(0, $result['watchers']['total'], 'closing the streams dropped their kept watchers');
    }

    #[DataProvider('backends')]
    public function testATimedOutWaitThenAWokenOneOnTheSameStream(string $backend): void
    {
        $this->useLoop($backend);
        $result = run(static function (): array {
            [$a, $b] = self::tcpPair();
            \stream_set_timeout($a, 0, 100_000);
            $first = \fread($a, 10);
            $firstTimedOut = \stream_get_meta_data($a)['timed_out'];
            \stream_set_timeout($a, 5);
            $second = self::readAfterADelay($a, $b, 'late');
            $result = [$first, $firstTimedOut, $second, \stream_get_meta_data($a)['timed_out']];
            \fclose($a);
            \fclose($b);
            return $result;
        });
        self::assertSame(['', true, 'late', false], $result);
    }

    /**
     * Waits on one stream keep one timeout timer between them and only move its deadline. A shorter
     * timeout than the one the timer was set for must still end its wait on time (the timer is replaced),
     * and a timer set by an earlier, shorter wait that fires while a longer one is in progress must not
     * end it (it is set again for the rest).
     */
    #[DataProvider('backends')]
    public function testTheKeptTimeoutFollowsEachWaitsOwnDeadline(string $backend): void
    {
        $this->useLoop($backend);
        $result = run(static function (): array {
            [$a, $b] = self::tcpPair();
            \stream_set_timeout($a, 30);
            $woken = [self::readAfterADelay($a, $b, 'one'), self::readAfterADelay($a, $b, 'two')];
            // A timer for about 30 s from now is armed; this wait allows 0.1 s.
            \stream_set_timeout($a, 0, 100_000);
            $start = \hrtime(true);
            $short = \fread($a, 10);
            $shortTimedOut = \stream_get_meta_data($a)['timed_out'];
            $shortSeconds = (\hrtime(true) - $start) / 1e9;
            // A 0.15 s wait woken early leaves its timer armed; the next wait allows 2 s and its data
            // comes after 0.4 s, past where that timer fires.
            \stream_set_timeout($a, 0, 150_000);
            $early = self::readAfterADelay($a, $b, 'early');
            \stream_set_timeout($a, 2);
            go(static function () use ($b): void {
                \usleep(400_000);
                \fwrite($b, 'late');
            });
            $late = \fread($a, 10);
            $lateTimedOut = \stream_get_meta_data($a)['timed_out'];
            \fclose($a);
            \fclose($b);
            return [$woken, $short, $shortTimedOut, $shortSeconds, $early, $late, $lateTimedOut];
        });
        [$woken, $short, $shortTimedOut, $shortSeconds, $early, $late, $lateTimedOut] = $result;
        self::assertSame(['one', 'two'], $woken);
        self::assertSame('', $short);
        self::assertTrue($shortTimedOut, 'the 0.1 s wait timed out');
        self::assertLessThan(10.0, $shortSeconds, 'the 0.1 s wait ended by its own deadline, not the 30 s one armed before it');
        self::assertSame('early', $early);
        self::assertSame('late', $late, 'the 2 s wait was woken by its data, not ended by the 0.15 s timer armed before it');
        self::assertFalse($lateTimedOut);
        self::assertSame(0, Loop::get()->watcherCount()['referenced'], 'the kept timeout timer does not hold the loop');
    }

    #[DataProvider('backends')]
    public function testACancelledWaitAndTheKeptWatcherNeitherHangNorHoldTheLoop(string $backend): void
    {
        $this->useLoop($backend);
        $start = \hrtime(true);
        $streams = [];
        $outcome = run(static function () use (&$streams): array {
            $streams = [...self::tcpPair(), ...self::tcpPair()];
            [$a, , $c, $d] = $streams;
            \stream_set_timeout($a, 30);
            $reader = go(static fn () => \fread($a, 10));
            \usleep(10_000);
            $reader->cancel();
            try {
                $reader->join();
                $cancelled = 'not cancelled';
            } catch (Cancelled) {
                $cancelled = 'cancelled';
            }
            // Another stream waits and wakes as usual meanwhile.
            return [$cancelled, self::readAfterADelay($c, $d, 'other')];
        });
        // run() came back: the watcher kept for $a (disabled) does not keep the loop alive.
        self::assertSame(['cancelled', 'other'], $outcome);
        self::assertLessThan(20.0, (\hrtime(true) - $start) / 1e9);
        self::assertSame(0, Loop::get()->watcherCount()['referenced']);
        foreach ($streams as $stream) {
            \fclose($stream);
        }
        self::assertSame(0, Loop::get()->watcherCount()['total'], 'closing the streams dropped their kept watchers');
    }
}
