<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

use Weft\Tests\Support\Curl;

/** A Symfony HttpKernel application (tests/Fixtures/symfony-app) under `bin/weft serve`. */
final class SymfonyBridgeTest extends FrameworkBridgeTestCase
{
    protected static function app(): string
    {
        return 'symfony-app';
    }

    protected static function errorPageMarker(): string
    {
        return '<title>An Error Occurred: Internal Server Error</title>';
    }

    /**
     * Booting a framework blocks the worker (container compiled, classes autoloaded) before any
     * request is served: the blocking-call detector does not report it, only what blocks a request.
     * The boot here holds the worker for 300 ms, six times the threshold; what a report of it would
     * name (its file) is looked for, not any report: the first request's own work (autoloading what
     * the boot did not) may take longer than 50 ms on a loaded machine, and is a request's.
     */
    public function testBootingIsNotReportedAsABlockingCall(): void
    {
        $entry = \dirname(__DIR__, 3) . '/var/fixtures/symfony-app/weft-slow-boot.php';
        file_put_contents($entry, "<?php\nusleep(300_000); // a long boot: a cold cache, a big container\nreturn require __DIR__ . '/weft.php';\n");
        $base = $this->serve(entryFile: 'weft-slow-boot.php');
        self::assertSame('Hello World', Curl::get("$base/")['body']);
        $reports = array_filter(explode("\n", $this->serverOutput()), static fn (string $line): bool => str_contains($line, 'held the worker'));
        $boot = array_filter($reports, static fn (string $line): bool => str_contains($line, 'weft-slow-boot.php') || str_contains($line, 'outside any coroutine'));
        self::assertSame([], array_values($boot), 'the boot was reported as a blocking call');
    }

    /**
     * A native session (session_start()) on workers the foreground master forks after READY
     * (--max-requests, a reload): the master printed nothing through PHP's output, so no worker
     * starts with the headers marked as sent.
     */
    public function testSessionsWorkOnReplacementWorkers(): void
    {
        $base = $this->serve(options: ['--max-requests', '2']);
        $first = Curl::get("$base/session?visitor=alice");
        self::assertSame(200, $first['status'], $first['body']);
        self::assertSame(1, preg_match('/^([^=;]*sess[^=;]*=[^;]+)/im', implode("\n", $first['headers']['set-cookie'] ?? []), $m));
        $cookie = $m[1];
        $firstWorkers = $this->server()->workerPids();
        // Four more requests: two replacement workers serve them.
        for ($i = 0; $i < 4; $i++) {
            $again = Curl::get("$base/session", ['Cookie' => $cookie]);
            self::assertSame(200, $again['status'], "request $i: " . $again['body']);
            self::assertSame('alice', json_decode($again['body'], true)['before']);
            $fresh = Curl::get("$base/session?visitor=bob$i");
            self::assertSame(200, $fresh['status'], "request $i (new client): " . $fresh['body']);
            self::assertNull(json_decode($fresh['body'], true)['before']);
        }
        [$code, $out] = $this->server()->control('reload');
        self::assertSame(0, $code, $out);
        $afterReload = Curl::get("$base/session", ['Cookie' => $cookie]);
        self::assertSame(200, $afterReload['status'], $afterReload['body']);
        self::assertSame('alice', json_decode($afterReload['body'], true)['before']);
        self::assertNotSame($firstWorkers, $this->server()->workerPids(), 'replacement workers served');
        self::assertStringNotContainsString('headers have already been sent', $this->serverOutput());
        self::assertStringNotContainsString('marked the headers as sent', $this->serverOutput());
    }

    /** The entry file of docs/frameworks.md loads .env as symfony/runtime does (real environment variables win). */
    public function testTheEntryFileLoadsDotenv(): void
    {
        $base = $this->serve();
        $json = json_decode(Curl::get("$base/json")['body'], true);
        self::assertSame('hello from .env', $json['dotenv']);
    }
}
