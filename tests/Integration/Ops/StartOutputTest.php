<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Curl;
use Weft\Tests\Support\ServerProcess;

/**
 * What `bin/weft serve` prints as it starts, as a script or an operator reads it: the loop it really
 * runs, READY where it does not mix with the access log, and where an application failed to load.
 */
final class StartOutputTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/access-app.php';

    private string $dir;

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-start-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700);
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->dir));
    }

    public function testTheStartLineNamesTheLoopThatStatusShows(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        \preg_match('/Weft listening on \S+: 1 coroutine worker\(s\), loop (\w+), master pid/', $server->output(), $m);
        $status = $server->status();
        $server->stop();
        self::assertSame($status['workers'][0]['loop'], $m[1] ?? null, $server->output());
        self::assertSame($status['workers'][0]['loop'], $status['master']['loop']);

        $server = new ServerProcess([self::APP, '--workers', '1', '--loop', 'select']);
        self::assertStringContainsString('1 coroutine worker(s), loop select, master pid', $server->output());
        $server->stop();
    }

    public function testWithAccessLogToStdoutReadyGoesToStderrAndStdoutHoldsOnlyAccessLines(): void
    {
        $stderr = "$this->dir/stderr";
        $command = ['setsid', \PHP_BINARY, \dirname(__DIR__, 3) . '/bin/weft', 'serve', self::APP,
            '--workers', '1', '--port', '0', '--pid-file', "$this->dir/weft.pid", '--access-log', '-'];
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $stderr, 'w']], $pipes);
        try {
            $port = (int) ServerProcess::waitFor(static fn () => \preg_match('/^READY (\d+)$/m', (string) \file_get_contents($stderr), $m) ? $m[1] : null, 20, 'READY on stderr');
            self::assertSame(200, Curl::get("http://127.0.0.1:$port/first")['status']);
            \stream_set_blocking($pipes[1], false);
            $stdout = (string) ServerProcess::waitFor(static function () use ($pipes) {
                static $out = '';
                $out .= (string) \fread($pipes[1], 65536);
                return \str_contains($out, "\n") ? $out : null;
            }, 10, 'the access line on stdout');
            self::assertMatchesRegularExpression('~\A127\.0\.0\.1 - - \[[^]]+\] "GET /first HTTP/1\.1" 200 \d+ ~', $stdout, 'no READY before it');
            self::assertStringNotContainsString('READY', $stdout);
        } finally {
            ServerProcess::cli(['stop', '--pid-file', "$this->dir/weft.pid"]);
            @\posix_kill(-\proc_get_status($process)['pid'], \SIGKILL);
            \proc_close($process);
        }
    }

    public function testAnAppThatCannotLoadIsReportedWithFileAndLine(): void
    {
        \file_put_contents("$this->dir/throws.php", "<?php\nfunction boot(): void\n{\n    throw new RuntimeException('no database configured');\n}\nboot();\n");
        \file_put_contents("$this->dir/syntax.php", "<?php\n\$x = ;\n");
        foreach (['throws' => "RuntimeException: no database configured in $this->dir/throws.php:4", 'syntax' => "ParseError: syntax error, unexpected token \";\" in $this->dir/syntax.php:2"] as $name => $expected) {
            [$code, $out] = ServerProcess::cli(['serve', "$this->dir/$name.php", '--daemon', '--port', '0', '--workers', '1',
                '--pid-file', "$this->dir/$name.pid", '--log-file', "$this->dir/$name.log"], 30);
            self::assertSame(1, $code, $out);
            self::assertStringContainsString("weft: the server could not start: $expected (log: ", $out);
        }
    }
}
