<?php
// The in-process harnesses (inproc-http.php, inproc-line.php, inproc-h2.php, dispatch-ir.php,
// sleep-cpu.php) run one build's Weft with this checkout's harness, so that two builds do the same work:
// `$root = (require __DIR__ . '/checkout.php')($argv[1] ?? null);` loads Weft's classes and its
// src/functions.php from CHECKOUT (default: this checkout) and everything else (psr/log, nyholm) from
// this checkout's vendor/, and returns CHECKOUT's real path.
declare(strict_types=1);

return static function (?string $checkout): string {
    $root = realpath($checkout ?? dirname(__DIR__)) ?: exit("No such checkout: $checkout\n");
    // CHECKOUT's own Weft functions (Weft\sleep()...), not this checkout's: Composer skips a file of its
    // "files" list that is marked loaded under its identifier.
    require $root . '/src/functions.php';
    $GLOBALS['__composer_autoload_files']['696a92e5a3cafefadf0520da48967f50'] = true;
    require dirname(__DIR__) . '/vendor/autoload.php';
    // Registered first, so that CHECKOUT's classes win over this checkout's autoloader.
    spl_autoload_register(static function (string $class) use ($root): void {
        if (str_starts_with($class, 'Weft\\') && !str_starts_with($class, 'Weft\\Tests\\')) {
            $file = $root . '/src/' . str_replace('\\', '/', substr($class, 5)) . '.php';
            if (is_file($file)) {
                require $file;
            }
        }
    }, true, true);
    return $root;
};
