<?php

// The front controller: php-fpm runs this file for every request (nginx sends it as SCRIPT_FILENAME).
// `bin/weft serve APP.php --mode fpm` writes the configuration that points here; see FrontController.

declare(strict_types=1);

(static function (): void {
    $autoload = $_SERVER['WEFT_AUTOLOAD'] ?? '';
    if ($autoload === '') {
        // Not started by Weft: this package's own checkout, or a vendor/weft/weft install.
        foreach ([__DIR__ . '/../../../vendor/autoload.php', __DIR__ . '/../../../../../autoload.php'] as $candidate) {
            if (\is_file($candidate)) {
                $autoload = $candidate;
                break;
            }
        }
    }
    require_once $autoload;
    (new \Weft\Mode\Fpm\FrontController())->handle($_SERVER, static fn (): string => (string) \file_get_contents('php://input'));
})();
