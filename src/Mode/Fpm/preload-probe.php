<?php

// Run by `bin/weft preload` in a fresh PHP process: loads the application the way the front
// controller does under php-fpm, answers a few synthetic GET requests, then prints as JSON every
// class, interface and trait that got loaded, with its file and what it extends. Output the app
// makes is swallowed; its errors go to stderr.
//
// Usage: php preload-probe.php AUTOLOAD APP '["/", "/other"]'

declare(strict_types=1);

[, $autoload, $app, $paths] = $argv + [null, '', '', '["/"]'];
if ($autoload !== '') {
    require $autoload;
}
if (!\class_exists(\Weft\Mode\Fpm\FrontController::class)) {
    \fwrite(\STDERR, "Weft's classes cannot be autoloaded (autoload file: '$autoload')\n");
    exit(1);
}
try {
    \Weft\Mode\AppLoader::load($app);
} catch (\Throwable $e) {
    \fwrite(\STDERR, $e->getMessage() . "\n");
    exit(1);
}

$discard = new class implements \Weft\Mode\Fpm\SapiOutput {
    public int $status = 0;

    public function status(int $status, string $reason): void
    {
        $this->status = $status;
    }

    public function header(string $line): void
    {
    }

    public function write(string $bytes): void
    {
    }

    public function flush(): void
    {
    }
};
$front = new \Weft\Mode\Fpm\FrontController($discard);
\ob_start();
foreach ((array) \json_decode($paths, true) as $path) {
    $path = (string) $path;
    $query = (string) \parse_url($path, \PHP_URL_QUERY);
    $front->handle([
        'REQUEST_METHOD' => 'GET', 'REQUEST_URI' => $path, 'QUERY_STRING' => $query,
        'SERVER_PROTOCOL' => 'HTTP/1.1', 'HTTP_HOST' => 'localhost', 'HTTP_ACCEPT' => '*/*',
        'HTTP_USER_AGENT' => 'weft-preload', 'REMOTE_ADDR' => '127.0.0.1', 'CONTENT_TYPE' => '',
        'CONTENT_LENGTH' => '', 'WEFT_APP' => $app, 'WEFT_LOG' => 'php://stderr',
    ], static fn (): string => '');
    if ($discard->status >= 500) {
        \fwrite(\STDERR, "GET $path answered {$discard->status}\n");
    }
}
\ob_end_clean();
// Under php-fpm the response goes through this one; the probe used its own.
\class_exists(\Weft\Mode\Fpm\PhpSapiOutput::class);

$classes = [];
foreach ([...\get_declared_interfaces(), ...\get_declared_traits(), ...\get_declared_classes()] as $name) {
    $class = new \ReflectionClass($name);
    if ($class->isInternal()) {
        continue;
    }
    $classes[] = [
        'name' => $class->getName(),
        'file' => (string) $class->getFileName(),
        'parent' => $class->getParentClass() === false ? null : $class->getParentClass()->getName(),
        'interfaces' => $class->getInterfaceNames(),
        'traits' => $class->getTraitNames(),
        'anonymous' => $class->isAnonymous(),
    ];
}
\fwrite(\STDOUT, \json_encode(['probe' => __FILE__, 'classes' => $classes], \JSON_THROW_ON_ERROR | \JSON_INVALID_UTF8_SUBSTITUTE));
