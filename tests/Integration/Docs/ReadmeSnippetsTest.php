<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Docs;

use PHPUnit\Framework\TestCase;

/** The README's PHP snippets that stand alone run as written, against the test services. */
final class ReadmeSnippetsTest extends TestCase
{
    public function testThePoolExampleRunsAsWritten(): void
    {
        $readme = (string) \file_get_contents(\dirname(__DIR__, 3) . '/README.md');
        self::assertSame(1, \preg_match('/```php\n((?:(?!```).)*Mysql\\\\Pool(?:(?!```).)*)```/s', $readme, $m), 'the pool example is in the README');
        $env = \getenv();
        unset($env['DATABASE_URL']);
        [$code, $out, $err] = self::runPhp($m[1] . "\necho json_encode(\$rows);\n", $env);
        self::assertSame(0, $code, $out . $err);
        self::assertSame([['id' => 1, 'text' => 'hello']], \json_decode($out, true), $out . $err);
    }

    /**
     * The README's example of an application's own state that follows the coroutine runs as written,
     * and does what it says: two requests' coroutines bound to their instances' sets each read their
     * own value after the other wrote its.
     */
    public function testTheFollowedStaticExampleRunsAsWritten(): void
    {
        $readme = (string) \file_get_contents(\dirname(__DIR__, 3) . '/README.md');
        self::assertSame(1, \preg_match('/```php\n<\?php \/\/ in the entry file[^\n]*\n((?:(?!```).)*ProcessState::followStatic(?:(?!```).)*)```/s', $readme, $m), 'the example is in the README');
        [$code, $out, $err] = self::runPhp($m[1] . <<<'PHP'
            $seen = Weft\run(function (): array {
                $seen = [];
                $wg = new Weft\Coroutine\WaitGroup();
                foreach (['acme' => 'UTF-8', 'globex' => 'ISO-8859-1'] as $tenant => $encoding) {
                    $wg->add();
                    Weft\go(function () use ($tenant, $encoding, &$seen, $wg): void {
                        Weft\Coroutine\Scheduler::get()->bind(Weft\Coroutine\StateSet::capture());
                        CurrentTenant::$id = $tenant;
                        mb_internal_encoding($encoding);
                        Weft\sleep(0.01);
                        $seen[$tenant] = [CurrentTenant::$id, mb_internal_encoding()];
                        $wg->done();
                    });
                }
                $wg->wait();
                return $seen;
            });
            echo json_encode($seen);
            PHP);
        self::assertSame(0, $code, $out . $err);
        self::assertSame(['acme' => ['acme', 'UTF-8'], 'globex' => ['globex', 'ISO-8859-1']], \json_decode($out, true), $out . $err);
    }

    /**
     * The README's framework entry files are the fixture apps' weft.php, which the bridge tests
     * serve: every code line of the snippet is in the file, in the same order.
     */
    public function testTheFrameworkEntryFilesAreTheOnesTheTestsServe(): void
    {
        $root = \dirname(__DIR__, 3);
        $readme = (string) \file_get_contents("$root/README.md");
        foreach (['a Symfony application' => 'symfony-app', 'a Laravel application' => 'laravel-app'] as $marker => $app) {
            self::assertSame(1, \preg_match('/```php\n<\?php \/\/ weft\.php, ' . \preg_quote($marker, '/') . '[^\n]*\n((?:(?!```).)*)```/s', $readme, $m), "the $app entry file is in the README");
            $file = (string) \file_get_contents("$root/tests/Fixtures/$app/weft.php");
            $offset = 0;
            foreach (\explode("\n", $m[1]) as $line) {
                if (\trim($line) === '') {
                    continue;
                }
                $found = \strpos($file, $line . "\n", $offset);
                self::assertNotFalse($found, "tests/Fixtures/$app/weft.php has the README's line, after the previous one: $line");
                $offset = $found + \strlen($line);
            }
        }
    }

    /**
     * Runs $code after the autoloader in a PHP process of its own.
     *
     * @param array<string, string>|null $env
     * @return array{int, string, string} exit code, stdout, stderr
     */
    private static function runPhp(string $code, ?array $env = null): array
    {
        $script = \tempnam(\sys_get_temp_dir(), 'weft-readme-');
        \file_put_contents($script, "<?php\nrequire " . \var_export(\dirname(__DIR__, 3) . '/vendor/autoload.php', true) . ";\n" . $code);
        try {
            $process = \proc_open([\PHP_BINARY, $script], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
            $out = (string) \stream_get_contents($pipes[1]);
            $err = (string) \stream_get_contents($pipes[2]);
            return [\proc_close($process), $out, $err];
        } finally {
            @\unlink($script);
        }
    }
}
