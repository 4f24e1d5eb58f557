<?php

declare(strict_types=1);

namespace Weft\Client\Mysql\Internal;

/**
 * Numbers of the MySQL/MariaDB client/server protocol (capability and status flags, commands, column
 * types) as named in the protocol documentation.
 *
 * @internal
 */
final class Protocol
{
    // Capability flags.
    public const CLIENT_LONG_PASSWORD = 1;
    public const CLIENT_LONG_FLAG = 4;
    public const CLIENT_CONNECT_WITH_DB = 8;
    public const CLIENT_PROTOCOL_41 = 512;
    public const CLIENT_SSL = 2048;
    public const CLIENT_TRANSACTIONS = 8192;
    public const CLIENT_SECURE_CONNECTION = 32768;
    public const CLIENT_MULTI_STATEMENTS = 1 << 16;
    public const CLIENT_MULTI_RESULTS = 1 << 17;
    public const CLIENT_PS_MULTI_RESULTS = 1 << 18;
    public const CLIENT_PLUGIN_AUTH = 1 << 19;
    public const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21;
    public const CLIENT_DEPRECATE_EOF = 1 << 24;

    // Server status flags (in OK and EOF packets).
    public const SERVER_STATUS_IN_TRANS = 1;
    public const SERVER_STATUS_AUTOCOMMIT = 2;
    public const SERVER_MORE_RESULTS_EXISTS = 8;

    // Commands.
    public const COM_QUIT = 0x01;
    public const COM_QUERY = 0x03;
    public const COM_PING = 0x0e;
    public const COM_STMT_PREPARE = 0x16;
    public const COM_STMT_EXECUTE = 0x17;
    public const COM_STMT_CLOSE = 0x19;

    // Column types.
    public const TYPE_DECIMAL = 0;
    public const TYPE_TINY = 1;
    public const TYPE_SHORT = 2;
    public const TYPE_LONG = 3;
    public const TYPE_FLOAT = 4;
    public const TYPE_DOUBLE = 5;
    public const TYPE_NULL = 6;
    public const TYPE_TIMESTAMP = 7;
    public const TYPE_LONGLONG = 8;
    public const TYPE_INT24 = 9;
    public const TYPE_DATE = 10;
    public const TYPE_TIME = 11;
    public const TYPE_DATETIME = 12;
    public const TYPE_YEAR = 13;
    public const TYPE_NEWDATE = 14;
    public const TYPE_VARCHAR = 15;
    public const TYPE_BIT = 16;
    public const TYPE_JSON = 245;
    public const TYPE_NEWDECIMAL = 246;
    public const TYPE_ENUM = 247;
    public const TYPE_SET = 248;
    public const TYPE_TINY_BLOB = 249;
    public const TYPE_MEDIUM_BLOB = 250;
    public const TYPE_LONG_BLOB = 251;
    public const TYPE_BLOB = 252;
    public const TYPE_VAR_STRING = 253;
    public const TYPE_STRING = 254;
    public const TYPE_GEOMETRY = 255;

    // Column flags.
    public const FLAG_NOT_NULL = 1;
    public const FLAG_PRIMARY_KEY = 2;
    public const FLAG_UNIQUE_KEY = 4;
    public const FLAG_BLOB = 16;
    public const FLAG_UNSIGNED = 32;
    public const FLAG_BINARY = 128;
    public const FLAG_AUTO_INCREMENT = 512;

    /** The largest payload of one packet; a payload of exactly this length is continued in the next. */
    public const MAX_PACKET = 0xFFFFFF;

    /** Charset name -> default collation id sent in the handshake (one byte). */
    public const COLLATIONS = [
        'utf8mb4' => 45,   // utf8mb4_general_ci: on MySQL 8 (255) and MariaDB alike
        'utf8mb3' => 33,
        'utf8' => 33,
        'latin1' => 8,
        'ascii' => 11,
        'binary' => 63,
    ];

    public const TYPE_NAMES = [
        0 => 'DECIMAL', 1 => 'TINY', 2 => 'SHORT', 3 => 'LONG', 4 => 'FLOAT', 5 => 'DOUBLE', 6 => 'NULL',
        7 => 'TIMESTAMP', 8 => 'LONGLONG', 9 => 'INT24', 10 => 'DATE', 11 => 'TIME', 12 => 'DATETIME',
        13 => 'YEAR', 14 => 'NEWDATE', 15 => 'VARCHAR', 16 => 'BIT', 245 => 'JSON', 246 => 'NEWDECIMAL',
        247 => 'ENUM', 248 => 'SET', 249 => 'TINY_BLOB', 250 => 'MEDIUM_BLOB', 251 => 'LONG_BLOB',
        252 => 'BLOB', 253 => 'VAR_STRING', 254 => 'STRING', 255 => 'GEOMETRY',
    ];

    private function __construct()
    {
    }
}
