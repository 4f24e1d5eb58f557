<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Docs;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Docs;

/** The PHP snippets of the docs that stand alone run as written, against the test services. */
final class DocsSnippetsTest extends TestCase
{
    public function testThePoolExampleRunsAsWritten(): void
    {
        $snippet = Docs::snippet('applications', 'php', '// The test instance of scripts/services.sh');
        self::assertStringContainsString('new Weft\Client\Mysql\Pool(', $snippet);
        $env = \getenv();
        unset($env['DATABASE_URL']);
        [$code, $out, $err] = self::runPhp($snippet . "\necho json_encode(\$rows);\n", $env);
        self::assertSame(0, $code, $out . $err);
        self::assertSame([['id' => 1, 'text' => 'hello']], \json_decode($out, true), $out . $err);
    }

    /**
     * The example of an application's own state that follows the coroutine (docs/frameworks.md) runs
     * as written, and does what it says: two requests' coroutines bound to their instances' sets each
     * read their own value after the other wrote its.
     */
    public function testTheFollowedStaticExampleRunsAsWritten(): void
    {
        $snippet = Docs::afterFirstLine(Docs::snippet('frameworks', 'php', '<?php // in the entry file'));
        self::assertStringContainsString('ProcessState::followStatic(', $snippet);
        [$code, $out, $err] = self::runPhp($snippet . <<<'PHP'
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
     * The framework entry files of docs/frameworks.md are the fixture apps' weft.php, which the bridge
     * tests serve: every code line of the snippet is a line of the file, in the same order.
     */
    public function testTheFrameworkEntryFilesAreTheOnesTheTestsServe(): void
    {
        foreach (['a Symfony application' => 'symfony-app', 'a Laravel application' => 'laravel-app'] as $marker => $app) {
            $snippet = Docs::snippet('frameworks', 'php', "<?php // weft.php, $marker");
            Docs::assertExcerptOf(Docs::ROOT . "/tests/Fixtures/$app/weft.php", Docs::afterFirstLine($snippet), "the $app entry file of docs/frameworks.md", exact: true);
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
        $script = \tempnam(\sys_get_temp_dir(), 'weft-docs-');
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
