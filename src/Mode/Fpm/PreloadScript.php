<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * An opcache.preload script: one opcache_compile_file() per file, parents, interfaces and traits
 * before the classes that use them, each call guarded so that a file that has gone or fails to
 * compile is logged and skipped rather than stopping php-fpm from starting.
 */
final class PreloadScript
{
    /**
     * @param array<string, list<string>> $files file => the classes it declares, in preload order
     * @param array<string, string> $skipped class name => why it is not preloaded
     * @param int $classes classes, interfaces and traits the files hold
     */
    private function __construct(public readonly array $files, public readonly array $skipped, public readonly int $classes)
    {
    }

    /**
     * @param list<array{name: string, file: string, parent: ?string, interfaces: list<string>, traits: list<string>, anonymous?: bool}> $classes
     *        in the order they were declared, as the probe reports them
     * @param list<string> $exclude files never to preload (the probe's own)
     */
    public static function plan(array $classes, array $exclude = []): self
    {
        $byName = [];
        foreach ($classes as $class) {
            $byName[\strtolower($class['name'])] = $class;
        }
        $excluded = \array_fill_keys($exclude, true);
        $reasons = [];
        $files = [];
        $count = 0;
        $visit = static function (string $name) use (&$visit, &$reasons, &$files, &$count, $byName, $excluded): ?string {
            $key = \strtolower($name);
            if (\array_key_exists($key, $reasons)) {
                return $reasons[$key];
            }
            $class = $byName[$key] ?? null;
            if ($class === null) {
                return $reasons[$key] = null; // internal: always there
            }
            $reasons[$key] = 'depends on itself'; // not reachable for real classes; guards a cycle
            $file = $class['file'];
            $reason = match (true) {
                $class['anonymous'] ?? false => 'an anonymous class',
                $file === '' => 'declared without a file',
                \str_contains($file, "eval()'d code") => "declared in eval()'d code",
                isset($excluded[$file]) => 'declared by the preload probe',
                !\is_file($file) || !\is_readable($file) => "its file '$file' cannot be read",
                default => null,
            };
            if ($reason === null) {
                foreach ([$class['parent'], ...$class['interfaces'], ...$class['traits']] as $dependency) {
                    if ($dependency !== null && ($why = $visit($dependency)) !== null) {
                        $reason = "needs $dependency, which is not preloaded ($why)";
                        break;
                    }
                }
            }
            if ($reason === null) {
                $files[$file] ??= [];
                $files[$file][] = $class['name'];
                $count++;
            }
            return $reasons[$key] = $reason;
        };
        $skipped = [];
        foreach ($classes as $class) {
            if (isset($excluded[$class['file']])) {
                continue; // the probe's own, not the application's
            }
            if (($why = $visit($class['name'])) !== null) {
                $skipped[$class['name']] = $why;
            }
        }
        return new self($files, $skipped, $count);
    }

    /** @param list<string> $paths the requests the probe made, for the header */
    public function render(string $app, string $out, string $user, array $paths = ['/']): string
    {
        $comment = static fn (string $text): string => \preg_replace('/[^\x20-\x7e]|\?>/', '?', $text) ?? '';
        $lines = [];
        foreach ($this->files as $file => $names) {
            $lines[] = '$preload(' . \var_export($file, true) . '); // ' . $comment(\implode(', ', $names));
        }
        $skipped = '';
        foreach ($this->skipped as $name => $why) {
            $skipped .= '// - ' . $comment($name) . ': ' . $comment($why) . "\n";
        }
        $skipped = $skipped === '' ? '' : "\n// Not preloaded:\n" . \rtrim($skipped);
        $requests = $comment(\implode(', ', \array_map(static fn (string $p): string => "GET $p", $paths)));
        $date = \date('Y-m-d H:i:s T');
        $appComment = $comment($app);
        $outComment = $comment($out);
        $userComment = $comment($user);
        $body = \implode("\n", $lines);
        $files = \count($this->files);
        return <<<PHP
            <?php

            // opcache.preload script for {$appComment},
            // written by `bin/weft preload` on {$date}.
            //
            // Use it with:   bin/weft serve {$appComment} --mode fpm --preload {$outComment}
            // or in php.ini: opcache.preload={$outComment}
            //                opcache.preload_user={$userComment}
            //
            // It compiles the {$this->classes} classes, interfaces and traits ({$files} files) the application loaded
            // while answering {$requests}; parents, interfaces and traits come first. Write it again after
            // changing the application: a file that has gone is skipped with a line in php-fpm's log.

            \$preload = static function (string \$file): void {
                if (!\\is_file(\$file)) {
                    \\error_log("weft preload: skipped \$file: no such file");
                    return;
                }
                try {
                    \\opcache_compile_file(\$file);
                } catch (\\Throwable \$e) {
                    \\error_log("weft preload: skipped \$file: " . \$e->getMessage());
                }
            };

            {$body}
            {$skipped}
            PHP . "\n";
    }
}
