<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/** Close status codes (RFC 6455 7.4) and which of them may travel in a close frame. */
final class CloseCode
{
    public const NORMAL = 1000;
    /** The server is stopping or reloading, or the connection sat idle too long. */
    public const GOING_AWAY = 1001;
    public const PROTOCOL_ERROR = 1002;
    public const UNSUPPORTED_DATA = 1003;
    /** Never sent: the close frame carried no code. */
    public const NO_STATUS = 1005;
    /** Never sent: the connection ended without a close frame. */
    public const ABNORMAL = 1006;
    public const INVALID_DATA = 1007;
    public const POLICY_VIOLATION = 1008;
    public const TOO_BIG = 1009;
    public const INTERNAL_ERROR = 1011;
    public const TRY_AGAIN_LATER = 1013;

    /** Whether $code may appear in a close frame: the defined codes, and 3000-4999 (libraries and applications). */
    public static function isSendable(int $code): bool
    {
        return ($code >= 1000 && $code <= 1003) || ($code >= 1007 && $code <= 1014) || ($code >= 3000 && $code <= 4999);
    }
}
