<?php

// The Telnet-like echo server of the line benchmark: bin/weft serve examples/echo-line.php --protocol line
// Try it: telnet 127.0.0.1 8080 (or nc), type a line, get it back.

declare(strict_types=1);

use Weft\Line\Peer;

return static function (string $line, Peer $peer): ?string {
    if ($line === 'quit') {
        $peer->close();
        return 'bye';
    }
    return $line;
};
