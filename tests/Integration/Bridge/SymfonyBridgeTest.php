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

    /** The README's entry file loads .env as symfony/runtime does (real environment variables win). */
    public function testTheEntryFileLoadsDotenv(): void
    {
        $base = $this->serve();
        $json = json_decode(Curl::get("$base/json")['body'], true);
        self::assertSame('hello from .env', $json['dotenv']);
    }

    /**
     * Native PHP sessions (session_start() underneath Symfony's session): each client keeps its
     * own, a client without a cookie gets a new one, never the previous client's, even when the
     * application printed something outside a response (here while it boots), which under the CLI
     * SAPI would mark the headers as sent for the worker's life and make session_start() throw.
     */
    public function testNativeSessionsBelongToTheirClient(): void
    {
        $entry = \dirname(__DIR__, 3) . '/var/fixtures/symfony-app/weft-noisy.php';
        file_put_contents($entry, "<?php\necho \"booting the kernel\\n\";\nreturn require __DIR__ . '/weft.php';\n");
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(mode: $mode, entryFile: 'weft-noisy.php');
            $alice = Curl::get("$base/session?visitor=alice");
            self::assertSame(200, $alice['status'], $mode . ': ' . $alice['body']);
            self::assertNull(json_decode($alice['body'], true)['before']);
            $cookie = null;
            foreach ($alice['headers']['set-cookie'] ?? [] as $line) {
                if (preg_match('/^(PHPSESSID=[^;]+)/', $line, $m) === 1) {
                    $cookie = $m[1];
                }
            }
            self::assertNotNull($cookie, 'the session cookie is set: ' . json_encode($alice['headers']));
            $id = json_decode($alice['body'], true)['id'];
            self::assertSame("PHPSESSID=$id", $cookie);

            // Another client, right after, on the same worker: a session of its own.
            $bob = Curl::get("$base/session?visitor=bob");
            self::assertSame(200, $bob['status'], $bob['body']);
            $seen = json_decode($bob['body'], true);
            self::assertNull($seen['before'], "$mode: a new client does not see the last client's session");
            self::assertNotSame($id, $seen['id']);

            $again = json_decode(Curl::get("$base/session", ['Cookie' => $cookie])['body'], true);
            self::assertSame(['id' => $id, 'before' => 'alice'], $again, $mode);
            self::assertStringContainsString('booting the kernel', $this->serverOutput(), 'what the entry file printed is in the log');
        }
    }
}
