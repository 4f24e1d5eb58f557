<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/** The response goes out through PHP's own SAPI functions: what php-fpm hands to nginx. */
final class PhpSapiOutput implements SapiOutput
{
    public function status(int $status, string $reason): void
    {
        if ($reason === '') {
            \http_response_code($status);
            return;
        }
        // Under FastCGI PHP turns this into "Status: 418 Short and stout".
        \header('HTTP/1.1 ' . $status . ' ' . $reason, true, $status);
    }

    public function header(string $line): void
    {
        \header($line, false);
    }

    public function write(string $bytes): void
    {
        echo $bytes;
    }

    public function flush(): void
    {
        // User-level buffers first (output_buffering may be on in php.ini), then the SAPI's.
        while (\ob_get_level() > 0) {
            \ob_end_flush();
        }
        \flush();
    }
}
