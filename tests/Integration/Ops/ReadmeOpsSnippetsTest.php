<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/** The snippets of the README's "Operating Weft" section run as written. */
final class ReadmeOpsSnippetsTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../..';

    public function testTheConfigurationFilesAreAccepted(): void
    {
        $section = self::section();
        self::assertSame(1, \preg_match("/```php\n(<\\?php \\/\\/ weft\\.php\n.*?)```/s", $section, $php));
        self::assertSame(1, \preg_match("/```ini\n(; weft\\.ini\n.*?)```/s", $section, $ini));
        $dir = \sys_get_temp_dir() . '/weft-readme-' . \bin2hex(\random_bytes(4));
        \mkdir("$dir/examples", 0777, true);
        \copy(self::ROOT . '/examples/hello.php', "$dir/examples/hello.php");
        \file_put_contents("$dir/weft.php", $php[1]);
        \file_put_contents("$dir/weft.ini", $ini[1]);
        try {
            [$code, $out] = ServerProcess::cli(['config', '--config', "$dir/weft.php", '--json']);
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
        self::assertSame(1, \preg_match("/```php\n\\s*(Weft\\\\logger\\(\\).*?)\n\\s*```/s", self::section(), $m));
        $script = \tempnam(\sys_get_temp_dir(), 'weft-readme-');
        \file_put_contents($script, "<?php\nrequire " . \var_export(\realpath(self::ROOT) . '/vendor/autoload.php', true) . ";\n" . $m[1] . "\n");
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
        $readme = (string) \file_get_contents(self::ROOT . '/README.md');
        $start = (int) \strpos($readme, "## Running it\n");
        $section = \substr($readme, $start, (int) \strpos($readme, "\n## ", $start + 5) - $start);
        \preg_match_all('/^\| `--([a-z0-9-]+)` \| ([^|]+) \|/m', $section, $m);
        $table = \array_combine($m[1], \array_map('trim', $m[2]));
        $options = \array_diff(\array_keys(\Weft\Cli\ServeCommand::spec()), ['help']);
        self::assertSame([], \array_values(\array_diff($options, \array_keys($table))), 'options of serve missing from the README table');
        self::assertSame([], \array_values(\array_diff(\array_keys($table), $options)), 'rows for options serve does not have');
        foreach ($table as $option => $default) {
            self::assertNotSame('', $default, "--$option has a default column");
        }
    }

    private static function section(): string
    {
        $readme = (string) \file_get_contents(self::ROOT . '/README.md');
        $start = \strpos($readme, "## Operating Weft\n");
        self::assertNotFalse($start);
        return \substr($readme, $start, (int) \strpos($readme, "\n## ", $start + 5) - $start);
    }
}
