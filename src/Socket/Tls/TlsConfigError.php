<?php

declare(strict_types=1);

namespace Weft\Socket\Tls;

/**
 * A certificate or key given to the server cannot be used: unreadable, not PEM, or a key that does not
 * match its certificate. Raised at start-up (the start stops) and in a reloading worker (the reload
 * fails and the running generation, with the old certificates, goes on serving).
 */
final class TlsConfigError extends \RuntimeException implements \Weft\WeftException
{
}
