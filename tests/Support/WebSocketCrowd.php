<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

/** tests/Integration/WebSocket/crowd.py (Python `websockets` clients) as a child process: its first line is what opening the crowd gave, then one answer per command. */
final class WebSocketCrowd
{
    /** @var resource */
    private $process;
    /** @var array<int, resource> */
    private array $pipes = [];
    /** @var array{open: int, refused: array<string, int>, errors: list<string>} */
    public readonly array $opened;

    /** @param int $parallel handshakes under way at once (1: one after the other) */
    public function __construct(string $uri, int $count, int $parallel = 32)
    {
        $this->process = \proc_open(['/usr/bin/python3', __DIR__ . '/../Integration/WebSocket/crowd.py', $uri, (string) $count, (string) $parallel], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $this->pipes);
        $this->opened = $this->line(120);
    }

    /** @return array<string, mixed> */
    public function command(string $command): array
    {
        \fwrite($this->pipes[0], "$command\n");
        return $this->line(60);
    }

    public function end(): void
    {
        @\fwrite($this->pipes[0], "quit\n");
        @\fclose($this->pipes[0]);
        $deadline = \microtime(true) + 10;
        while (\proc_get_status($this->process)['running'] && \microtime(true) < $deadline) {
            \usleep(20_000);
        }
        \proc_terminate($this->process, 9);
        \proc_close($this->process);
    }

    public function __destruct()
    {
        if (\is_resource($this->process)) {
            $this->end();
        }
    }

    /** @return array<string, mixed> */
    private function line(float $timeout): array
    {
        $read = [$this->pipes[1]];
        $w = $e = null;
        if (@\stream_select($read, $w, $e, (int) $timeout) !== 1) {
            throw new \RuntimeException('crowd.py did not answer in time');
        }
        $line = \fgets($this->pipes[1]);
        if ($line === false) {
            throw new \RuntimeException('crowd.py ended');
        }
        return \json_decode($line, true, 512, \JSON_THROW_ON_ERROR);
    }
}
