<?php

declare(strict_types=1);

namespace Weft\Line;

/*
 * @deprecated the line handler's second argument is Weft\Line\Peer: this name, beside the server's own
 * Weft\Server\Connection, said the wrong thing. Peer.php declares it as an alias, so that handlers typed
 * with it still run; this file only lets the autoloader find it by its old name.
 */
\class_exists(Peer::class);
