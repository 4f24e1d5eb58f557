<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use PHPUnit\Framework\TestCase;
use Weft\Mode\Fpm\PreloadScript;

final class PreloadScriptTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-preload-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        foreach (\glob($this->dir . '/*') ?: [] as $file) {
            \unlink($file);
        }
        \rmdir($this->dir);
    }

    /** @param list<string> $interfaces @param list<string> $traits */
    private function class(string $name, ?string $parent = null, array $interfaces = [], array $traits = [], ?string $file = null): array
    {
        $file ??= $this->dir . '/' . $name . '.php';
        if (\str_starts_with($file, $this->dir)) {
            \touch($file);
        }
        return ['name' => $name, 'file' => $file, 'parent' => $parent, 'interfaces' => $interfaces, 'traits' => $traits, 'anonymous' => false];
    }

    public function testDependenciesComeFirst(): void
    {
        // As reported in declaration order, which need not be dependency order.
        $plan = PreloadScript::plan([
            $this->class('Child', 'Base', ['Contract', 'Countable'], ['Helper']),
            $this->class('Base', null, ['Contract']),
            $this->class('Contract'),
            $this->class('Helper'),
            $this->class('Alone'),
        ]);
        self::assertSame(
            ['Contract', 'Base', 'Helper', 'Child', 'Alone'],
            \array_map(static fn (string $f): string => \basename($f, '.php'), \array_keys($plan->files)),
        );
        self::assertSame(5, $plan->classes);
        self::assertSame([], $plan->skipped);
    }

    public function testClassesThatCannotBePreloadedAreSkippedWithTheirDependants(): void
    {
        $anonymous = ['anonymous' => true, 'name' => "class@anonymous\0/x.php:3\$0"] + $this->class('Anonymous');
        $plan = PreloadScript::plan([
            $anonymous,
            $this->class('Evald', file: "/x.php(3) : eval()'d code"),
            $this->class('Gone', file: '/no-such-dir/Gone.php'),
            $this->class('UsesGone', 'Gone'),
            $this->class('Fine', 'Exception'),
            $this->class('Probe', file: '/probe.php'),
        ], ['/probe.php']);
        self::assertSame(['Fine'], \array_values(\array_merge(...\array_values($plan->files))));
        self::assertSame('an anonymous class', $plan->skipped["class@anonymous\0/x.php:3\$0"]);
        self::assertSame("declared in eval()'d code", $plan->skipped['Evald']);
        self::assertStringContainsString('cannot be read', $plan->skipped['Gone']);
        self::assertStringStartsWith('needs Gone, which is not preloaded', $plan->skipped['UsesGone']);
        self::assertArrayNotHasKey('Probe', $plan->skipped, "the probe's own classes are not the app's");
    }

    public function testTheScriptIsValidPhpThatSaysHowToUseIt(): void
    {
        $plan = PreloadScript::plan([$this->class('Base'), $this->class("We'ird"), ['anonymous' => true, 'name' => "class@anonymous\0?>x"] + $this->class('Anonymous')]);
        $script = $plan->render('/srv/app.php', '/srv/app-preload.php', 'www-data', ['/', '/about']);
        self::assertStringContainsString('--mode fpm --preload /srv/app-preload.php', $script);
        self::assertStringContainsString('opcache.preload_user=www-data', $script);
        self::assertStringContainsString('GET /, GET /about', $script);
        self::assertStringContainsString('$preload(' . \var_export($this->dir . '/Base.php', true) . '); // Base', $script);
        self::assertStringContainsString("// Not preloaded:\n// - class@anonymous??x: an anonymous class", $script);

        $file = $this->dir . '/preload.php';
        \file_put_contents($file, $script);
        \exec(\escapeshellarg(\PHP_BINARY) . ' -l ' . \escapeshellarg($file) . ' 2>&1', $output, $code);
        self::assertSame(0, $code, \implode("\n", $output));
        // Run without opcache: a missing file is skipped with a log line, never fatal.
        \unlink($this->dir . '/Base.php');
        \exec(\escapeshellarg(\PHP_BINARY) . ' -d error_log= -d log_errors=1 ' . \escapeshellarg($file) . ' 2>&1', $output2, $code2);
        self::assertSame(0, $code2, \implode("\n", $output2));
        self::assertStringContainsString('weft preload: skipped ' . $this->dir . '/Base.php: no such file', \implode("\n", $output2));
        \touch($this->dir . '/Base.php');
    }
}
