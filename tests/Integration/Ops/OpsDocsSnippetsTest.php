<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Docs;
use Weft\Tests\Support\ServerProcess;

/** The snippets of the operators' pages (docs/running-and-options.md, docs/operating.md) run as written. */
final class OpsDocsSnippetsTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../..';

    public function testTheConfigurationFilesAreAccepted(): void
    {
        $section = Docs::section('running-and-options', '## Configuration');
        $php = Docs::snippet('running-and-options', 'php', "<?php // weft.config.php\n", $section);
        $ini = Docs::snippet('running-and-options', 'ini', "; weft.ini\n", $section);
        $dir = \sys_get_temp_dir() . '/weft-docs-' . \bin2hex(\random_bytes(4));
        \mkdir("$dir/examples", 0777, true);
        \copy(self::ROOT . '/examples/hello.php', "$dir/examples/hello.php");
        \file_put_contents("$dir/weft.config.php", $php);
        \file_put_contents("$dir/weft.ini", $ini);
        try {
            [$code, $out] = ServerProcess::cli(['config', '--config', "$dir/weft.config.php", '--json']);
            self::assertSame(0, $code, $out);
            $config = \json_decode($out, true, 512, \JSON_THROW_ON_ERROR);
            self::assertSame(\realpath("$dir/examples/hello.php"), $config['app']);
            self::assertSame('json', $config['options']['log-format']['value']);
            [$code, $out] = ServerProcess::cli(['config', '--config', "$dir/weft.ini", '--json']);
            self::assertSame(0, $code, $out);
            self::assertSame(10000, \json_decode($out, true, 512, \JSON_THROW_ON_ERROR)['options']['max-requests']['value']);
        } finally {
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
    }

    public function testTheLoggerSnippetRunsOutsideAServer(): void
    {
        $snippet = Docs::snippet('operating', 'php', 'Weft\logger()->', Docs::section('operating', '## Logs'));
        $script = \tempnam(\sys_get_temp_dir(), 'weft-docs-');
        \file_put_contents($script, "<?php\nrequire " . \var_export(\realpath(self::ROOT) . '/vendor/autoload.php', true) . ";\n" . $snippet . "\n");
        try {
            $process = \proc_open([\PHP_BINARY, $script], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            $out = (string) \stream_get_contents($pipes[1]);
            $err = (string) \stream_get_contents($pipes[2]);
            self::assertSame(0, \proc_close($process), $out . $err);
        } finally {
            \unlink($script);
        }
        self::assertMatchesRegularExpression('/\] warning: Payment 42 declined\n$/', $err);
    }

    public function testEveryServeOptionIsInTheOptionsTable(): void
    {
        $section = Docs::section('running-and-options', '## The options of `serve`');
        \preg_match_all('/^\| `--([a-z0-9-]+)` \| ([^|]+) \|/m', $section, $m);
        $table = \array_combine($m[1], \array_map('trim', $m[2]));
        $options = \array_diff(\array_keys(\Weft\Cli\ServeCommand::spec()), ['help']);
        self::assertSame([], \array_values(\array_diff($options, \array_keys($table))), 'options of serve missing from the table of docs/running-and-options.md');
        self::assertSame([], \array_values(\array_diff(\array_keys($table), $options)), 'rows for options serve does not have');
        foreach ($table as $option => $default) {
            self::assertNotSame('', $default, "--$option has a default column");
        }
    }
}
