<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Process\ServicePin;

/**
 * The bench moves a local database off the server's CPU for the rows that use it: tried on a real
 * listening process of this user (every thread of it), and put back.
 */
final class ServicePinTest extends TestCase
{
    /** @var resource|null */
    private $process = null;
    private int $pid = 0;

    protected function tearDown(): void
    {
        if (\is_resource($this->process)) {
            \proc_terminate($this->process);
            \proc_close($this->process);
        }
    }

    public function testEveryThreadOfTheListenerMovesToTheCpuAndBack(): void
    {
        $taskset = self::taskset();
        $cpu = (string) \max(0, (int) \shell_exec('nproc') - 1);
        $port = $this->listen();
        $before = self::allowed($this->pid);
        self::assertCount(3, self::threads($this->pid));

        $pin = ServicePin::toCpu('Test service', "mysql://u:p@127.0.0.1:$port/db", $cpu, $taskset);

        self::assertTrue($pin->pinned(), $pin->note());
        self::assertStringContainsString("pid {$this->pid}", $pin->note());
        foreach (self::threads($this->pid) as $tid) {
            self::assertSame($cpu, self::allowed($tid), "thread $tid");
        }
        $pin->restore();
        self::assertSame($before, self::allowed($this->pid));
    }

    public function testAServiceElsewhereOrNotListeningIsLeftAloneWithTheReason(): void
    {
        $taskset = self::taskset();
        $remote = ServicePin::toCpu('MariaDB', 'mysql://u:p@db.example.com:3306/db', '1', $taskset);
        self::assertFalse($remote->pinned());
        self::assertStringContainsString('not on this machine', $remote->note());

        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        self::assertNotFalse($socket);
        $port = (int) \substr((string) \stream_socket_get_name($socket, false), \strlen('127.0.0.1:'));
        \fclose($socket);
        $nobody = ServicePin::toCpu('MariaDB', "mysql://u:p@127.0.0.1:$port/db", '1', $taskset);
        self::assertFalse($nobody->pinned());
        self::assertStringContainsString('could not be found', $nobody->note());
        $nobody->restore();

        $none = ServicePin::toCpu('MariaDB', 'mysql://u:p@127.0.0.1:3306/db', '1', null);
        self::assertStringContainsString('no taskset', $none->note());
    }

    private static function taskset(): string
    {
        $path = \trim((string) \shell_exec('command -v taskset'));
        if ($path === '') {
            self::fail('taskset (util-linux) is missing');
        }
        return $path;
    }

    /** Starts a listening process with three threads (as a database has many) and returns its port. */
    private function listen(): int
    {
        $code = 'import socket, sys, threading, time' . "\n"
            . 's = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()' . "\n"
            . 'for _ in range(2): threading.Thread(target=time.sleep, args=(30,), daemon=True).start()' . "\n"
            . 'print(s.getsockname()[1], flush=True); time.sleep(30)';
        $this->process = \proc_open(['python3', '-c', $code], [1 => ['pipe', 'w']], $pipes);
        self::assertIsResource($this->process);
        $port = (int) \fgets($pipes[1]);
        self::assertGreaterThan(0, $port);
        $this->pid = \proc_get_status($this->process)['pid'];
        return $port;
    }

    /** @return list<int> */
    private static function threads(int $pid): array
    {
        return \array_map('intval', \array_map('basename', \glob("/proc/$pid/task/*") ?: []));
    }

    private static function allowed(int $tid): string
    {
        \preg_match('/^Cpus_allowed_list:\s*(\S+)/m', (string) \file_get_contents("/proc/$tid/status"), $m);
        return $m[1] ?? '?';
    }
}
