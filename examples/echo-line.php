<?php

// The Telnet-like echo server of the line benchmark: bin/weft serve examples/echo-line.php --protocol line
// Try it: telnet 127.0.0.1 8080 (or nc), type a line, get it back.

declare(strict_types=1);

use Weft\Line\Connection;

return static function (string $line, Connection $connection): ?string {
    if ($line === 'quit') {
        $connection->close();
        return 'bye';
    }
    return $line;
};
