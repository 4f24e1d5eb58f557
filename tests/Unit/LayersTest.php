<?php

declare(strict_types=1);

namespace Weft\Tests\Unit;

use PHPUnit\Framework\TestCase;

/**
 * DESIGN.md's dependency direction, enforced: which folder of src/ may name which. Every `use` statement
 * and every qualified class name in code (comments aside), every class name written as a string, and
 * every path into tests/ is an edge; an edge the table below does not allow fails with its file, line
 * and the name that made it.
 *
 * A unit is a folder under src/ (Http's sub-folders are units of their own: Message and Parser are
 * pure and must not know the server). The root files (WeftException, TimeoutException, Version,
 * functions.php) and the extension's Weft\Ext are below everything: any unit may name them.
 */
final class LayersTest extends TestCase
{
    /**
     * Unit => the units it may name, besides itself, the root and Weft\Ext. Read down: a unit names only
     * what sits lower.
     */
    private const ALLOWED = [
        'Loop' => [],
        'Coroutine' => ['Loop'],
        'Hook' => ['Loop', 'Coroutine'],
        'Socket' => ['Loop', 'Coroutine'],
        'Pool' => ['Loop', 'Coroutine'],
        // Knows a Protocol (its ConnectionHandler), never HTTP; installs the hooks in each worker.
        'Server' => ['Loop', 'Coroutine', 'Hook', 'Socket'],
        // The metrics port reads and writes HTTP with the server's own parser and encoder.
        'Observe' => ['Loop', 'Coroutine', 'Socket', 'Server', 'Http/Message', 'Http/Parser'],
        'Http/Message' => [],
        'Http/Parser' => ['Http/Message'],
        'Http/Psr' => ['Http/Message'],
        'Http/Server' => ['Loop', 'Coroutine', 'Socket', 'Server', 'Observe', 'Http/Message', 'Http/Parser', 'Http/Psr'],
        'Http/Compression' => ['Coroutine', 'Http/Message', 'Http/Psr', 'Http/Server'],
        'Http/Static' => ['Loop', 'Coroutine', 'Http/Message', 'Http/Psr', 'Http/Compression'],
        // The oracles drive the parser, and whole in-process connections (Server + Http/Server) on every path.
        'Http/Fuzz' => ['Loop', 'Coroutine', 'Server', 'Http/Message', 'Http/Parser', 'Http/Server'],
        // HTTPS answers around an application: the redirect from plain HTTP, the HSTS header.
        'Http/Tls' => ['Http/Message', 'Http/Psr'],
        // HTTP/2 on the connection core, as Http/Server does HTTP/1.1; its Hpack/ codec names nothing.
        'Http2' => ['Loop', 'Coroutine', 'Socket', 'Server', 'Observe', 'Http/Message', 'Http/Parser', 'Http/Psr', 'Http/Server'],
        'Line' => ['Loop', 'Coroutine', 'Socket', 'Server'],
        // The HTTP client reads responses with Http's pure parser.
        'Client' => ['Loop', 'Coroutine', 'Socket', 'Pool', 'Http/Message', 'Http/Parser'],
        // An upgrade from HTTP; rooms across workers through the Redis client.
        'WebSocket' => ['Loop', 'Coroutine', 'Socket', 'Pool', 'Server', 'Client', 'Http/Message', 'Http/Parser', 'Http/Server'],
        'Mode' => ['Loop', 'Coroutine', 'Hook', 'Socket', 'Server', 'Observe', 'Http/Message', 'Http/Parser', 'Http/Psr', 'Http/Server', 'Http/Compression', 'Http/Static'],
        'Bridge' => ['Loop', 'Coroutine', 'Hook', 'Pool', 'Server', 'Http/Message', 'Http/Psr', 'Http/Server'],
        'Bench' => ['Loop', 'Coroutine', 'Hook', 'Socket', 'Pool', 'Server', 'Client', 'WebSocket', 'Http/Message', 'Http/Parser', 'Line', 'Mode'],
        'Cli' => ['*'],
    ];

    public function testEverySrcFileNamesOnlyTheLayersBelowIt(): void
    {
        $src = \dirname(__DIR__, 2) . '/src';
        $forbidden = [];
        foreach (self::files($src) as $file) {
            $relative = \substr($file, \strlen($src) + 1);
            $from = self::unitOf($relative);
            if ($from === null) {
                continue; // the root files
            }
            self::assertArrayHasKey($from, self::ALLOWED, "src/$relative is in a folder the table does not know: add its unit to LayersTest::ALLOWED");
            foreach (self::references((string) \file_get_contents($file)) as [$line, $name, $to]) {
                if ($to === $from || self::allowed($from, $to)) {
                    continue;
                }
                $forbidden[] = \sprintf(
                    'src/%s:%d: %s -> %s (%s); %s may name only: %s',
                    $relative,
                    $line,
                    $from,
                    $to,
                    $name,
                    $from,
                    self::ALLOWED[$from] === ['*'] ? 'anything in src/' : (\implode(', ', self::ALLOWED[$from]) ?: 'nothing but the root and Weft\\Ext'),
                );
            }
        }
        self::assertSame([], $forbidden, "Edges DESIGN.md's dependency direction forbids:\n" . \implode("\n", $forbidden));
    }

    /** The scanner itself: each kind of reference it must see, and what it must not count. */
    public function testTheScannerSeesUseStatementsQualifiedNamesStringsAndTestPaths(): void
    {
        $code = <<<'PHP'
            <?php
            namespace Weft\Hook;
            use Weft\Server\ServerConfig;
            use Weft\Coroutine\{Channel, WaitGroup};
            // Weft\Cli\Application in a comment does not count
            $a = new \Weft\Http\Message\Request('GET', '/');
            $b = 'Weft\\Bench\\Runner';
            $c = __DIR__ . '/../../tests/fixtures/app.php';
            $d = "Weft\\sleep() is fine: a message, not a class";
            PHP;
        $found = \array_map(static fn (array $r): string => $r[0] . ':' . $r[2], self::references($code));
        self::assertSame(['3:Server', '4:Coroutine', '6:Http/Message', '7:Bench', '8:tests'], $found);
    }

    private static function allowed(string $from, string $to): bool
    {
        // Nothing in src/ may reach into tests/ (not shipped, not an API): not even the CLI.
        return $to !== 'tests' && (\in_array('*', self::ALLOWED[$from], true) || \in_array($to, self::ALLOWED[$from], true));
    }

    /** The unit of a file (relative to src/), null for the root files. */
    private static function unitOf(string $relative): ?string
    {
        $parts = \explode('/', $relative);
        if (\count($parts) === 1) {
            return null;
        }
        return $parts[0] === 'Http' && \count($parts) > 2 ? 'Http/' . $parts[1] : $parts[0];
    }

    /** The unit a Weft name belongs to, null for the root (a class or function directly in Weft\) and Weft\Ext. */
    private static function unitOfName(string $name): ?string
    {
        $parts = \explode('\\', \trim($name, '\\'));
        if ($parts[0] !== 'Weft' || \count($parts) < 2) {
            return null;
        }
        if ($parts[1] === 'Tests') {
            return 'tests';
        }
        if (!\is_dir(\dirname(__DIR__, 2) . '/src/' . $parts[1])) {
            return null; // Weft\Ext (the extension's), Weft\Version, Weft\go, ...
        }
        return $parts[1] === 'Http' && \count($parts) > 2 ? 'Http/' . $parts[2] : $parts[1];
    }

    /** @return list<array{int, string, string}> line, the name as written, the unit it names */
    private static function references(string $code): array
    {
        $found = [];
        $inNamespace = false;
        foreach (\PhpToken::tokenize($code) as $token) {
            if ($token->is(\T_NAMESPACE)) {
                $inNamespace = true; // the file's own namespace is no edge
                continue;
            }
            if ($inNamespace) {
                $inNamespace = !$token->is([';', '{']);
                continue;
            }
            $name = null;
            if ($token->is([\T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED])) {
                $name = $token->text; // a group use ("use Weft\Coroutine\{A, B}") arrives as its prefix
            } elseif ($token->is(\T_CONSTANT_ENCAPSED_STRING)) {
                $text = \stripslashes(\substr($token->text, 1, -1));
                if (\preg_match('#(^|/)tests/#', $text) === 1) {
                    $found[] = [$token->line, $token->text, 'tests'];
                    continue;
                }
                // A class name as a string, whole: "Weft\\sleep() ..." in a message is not one.
                if (\preg_match('/^\\\\?Weft\\\\(\w+\\\\)+\w+$/', $text) === 1) {
                    $name = $text;
                }
            }
            if ($name !== null && ($unit = self::unitOfName($name)) !== null) {
                $found[] = [$token->line, \ltrim($name, '\\'), $unit];
            }
        }
        return $found;
    }

    /** @return list<string> every PHP file under $dir */
    private static function files(string $dir): array
    {
        $files = [];
        foreach (new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS)) as $file) {
            if ($file->getExtension() === 'php') {
                $files[] = $file->getPathname();
            }
        }
        \sort($files);
        return $files;
    }
}
