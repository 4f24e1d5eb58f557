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
        $script = \tempnam(\sys_get_temp_dir(), 'weft-readme-');
        \file_put_contents($script, "<?php\nrequire " . \var_export(\dirname(__DIR__, 3) . '/vendor/autoload.php', true) . ";\n"
            . $m[1] . "\necho json_encode(\$rows);\n");
        try {
            $env = \getenv();
            unset($env['DATABASE_URL']);
            $process = \proc_open([\PHP_BINARY, $script], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
            $out = \stream_get_contents($pipes[1]);
            $err = \stream_get_contents($pipes[2]);
            $code = \proc_close($process);
        } finally {
            @\unlink($script);
        }
        self::assertSame(0, $code, $out . $err);
        self::assertSame([['id' => 1, 'text' => 'hello']], \json_decode($out, true), $out . $err);
    }
}
