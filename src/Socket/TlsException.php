<?php

declare(strict_types=1);

namespace Weft\Socket;

/** The TLS handshake failed (certificate, protocol or peer name). */
final class TlsException extends SocketException
{
}
