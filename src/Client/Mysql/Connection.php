<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

use Weft\Client\Mysql\Internal\Auth;
use Weft\Client\Mysql\Internal\PacketStream;
use Weft\Client\Mysql\Internal\Protocol;
use Weft\Client\Mysql\Internal\ProtocolViolation;
use Weft\Client\Mysql\Internal\Wire;
use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\Timeout;
use Weft\Socket\ConnectException;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\ConnectOptions;
use Weft\Socket\ConnectTimeout;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

/**
 * One connection to a MySQL or MariaDB server, speaking the client/server protocol over a Weft socket.
 *
 * Every call that waits for the server suspends only the calling coroutine; outside of any coroutine it
 * blocks (sync mode). The same code works in both.
 *
 * A connection carries one command at a time: a second coroutine calling in while a command is in
 * flight gets a Weft\Coroutine\ConcurrentUse error (share connections through Weft\Client\Mysql\Pool).
 * Results are read completely before a call returns (like PDO's buffered queries), so a Result never
 * holds the connection.
 *
 * Failures: an ERR packet from the server -> QueryError (the connection stays usable); the connection
 * lost, killed, reset or out of sync -> ConnectionLost, after which it stays unusable. A command
 * interrupted while waiting (a Weft\timeout(), a cancel) rethrows that exception and also leaves the
 * connection unusable, since its reply would arrive later and desynchronise the stream.
 */
final class Connection
{
    /** Server-side statements kept by query($sql, $params), least recently used evicted first. */
    private const STATEMENT_CACHE_SIZE = 32;
    private const COLUMN_CACHE_SIZE = 512;
    private const MAX_PACKET_SIZE = 0x1000000;
    /** Server errors after which the server closes the connection. */
    private const FATAL_ERRORS = [
        1053 => true, // ER_SERVER_SHUTDOWN
        1927 => true, // ER_CONNECTION_KILLED (MariaDB)
        4031 => true, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
    ];
    private const AUTH_ERRORS = [1045 => true, 1698 => true];
    private const WANTED_CAPABILITIES = Protocol::CLIENT_LONG_PASSWORD | Protocol::CLIENT_LONG_FLAG
        | Protocol::CLIENT_PROTOCOL_41 | Protocol::CLIENT_TRANSACTIONS | Protocol::CLIENT_SECURE_CONNECTION
        | Protocol::CLIENT_MULTI_RESULTS | Protocol::CLIENT_PS_MULTI_RESULTS | Protocol::CLIENT_PLUGIN_AUTH
        | Protocol::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | Protocol::CLIENT_DEPRECATE_EOF;

    private readonly PacketStream $io;
    private int $capabilities = 0;
    private bool $deprecateEof = false;
    private int $status = 0;
    private int $id = 0;
    private string $serverVersion = '';
    private bool $tls = false;
    /** The coroutine running a command ({main}'s handle for code outside of coroutines); null when idle. */
    private ?Coroutine $owner = null;
    /** A command was written and its reply is not completely read yet. */
    private bool $inFlight = false;
    private ?string $lost = null;
    private bool $closed = false;
    /** Commands whose reply was read in full (Pool tells a task's first command from later ones). */
    private int $completed = 0;
    /** @var array<string, Statement> */
    private array $statements = [];
    /** @var array<string, Column> column definition packet -> Column: repeated queries parse it once */
    private array $columnCache = [];

    private function __construct(private readonly Socket $socket, private readonly Config $config)
    {
        $this->io = new PacketStream($socket);
    }

    /**
     * Connects and authenticates. The connect timeout covers the TCP connect, the TLS upgrade and the
     * authentication together.
     *
     * @throws ConnectException|ConnectTimeout when the server cannot be reached or does not answer in time
     * @throws AuthenticationFailed|QueryError when the server refuses (1045 bad password, 1049 unknown database, ...)
     */
    public static function connect(Config|string $config): self
    {
        if (\is_string($config)) {
            $config = Config::fromUrl($config);
        }
        $address = $config->address();
        $deadline = \hrtime(true) / 1e9 + $config->connectTimeout;
        $socket = Socket::connect($address, ConnectOptions::defaults()->withConnectTimeout($config->connectTimeout));
        $connection = new self($socket, $config);
        try {
            $connection->handshake($deadline);
        } catch (\Throwable $e) {
            $connection->closed = true;
            $connection->io->close();
            $socket->close();
            if ($e instanceof Timeout && \hrtime(true) / 1e9 >= $deadline) {
                throw ConnectTimeout::after($address, $config->connectTimeout, "waiting for the MySQL server's handshake", $e);
            }
            if ($e instanceof ConnectionClosed || $e instanceof ProtocolViolation) {
                throw new ConnectException(\sprintf(
                    'MySQL handshake with "%s" failed: %s',
                    $address,
                    $e->getMessage(),
                ), 0, $e);
            }
            throw $e;
        }
        return $connection;
    }

    /**
     * Runs $sql. Without $params: one COM_QUERY (text protocol; several statements only with
     * multi_statements). With $params ("?" placeholders, a list): a server-side prepared statement,
     * cached per connection, executed with the binary protocol.
     *
     * @param list<mixed> $params
     * @throws QueryError|ConnectionLost
     */
    public function query(string $sql, array $params = []): Result
    {
        if ($params !== []) {
            return $this->executeCached($sql, $params);
        }
        $this->enter();
        try {
            $this->send(\chr(Protocol::COM_QUERY) . $sql);
            return $this->readResults(false);
        } catch (\Throwable $e) {
            throw $this->failed($e);
        } finally {
            $this->owner = null;
        }
    }

    /** Same as query(): reads better for statements that change data. @param list<mixed> $params */
    public function execute(string $sql, array $params = []): Result
    {
        return $this->query($sql, $params);
    }

    /** Prepares a server-side statement; it lives until close() or the end of the connection. */
    public function prepare(string $sql): Statement
    {
        $this->enter();
        try {
            return $this->prepareStatement($sql);
        } catch (\Throwable $e) {
            throw $this->failed($e);
        } finally {
            $this->owner = null;
        }
    }

    public function begin(): void
    {
        $this->query('START TRANSACTION');
    }

    public function commit(): void
    {
        $this->query('COMMIT');
    }

    public function rollback(): void
    {
        $this->query('ROLLBACK');
    }

    /**
     * Runs $fn($this) in a transaction: commits when it returns, rolls back when it throws (and rethrows).
     *
     * @template T
     * @param \Closure(self): T $fn
     * @return T
     */
    public function transaction(\Closure $fn): mixed
    {
        if ($this->inTransaction()) {
            throw new \LogicException('A transaction is already open on this connection; nested transactions are not supported (use SAVEPOINT)');
        }
        $this->begin();
        try {
            $result = $fn($this);
        } catch (\Throwable $e) {
            if ($this->isUsable() && $this->owner === null) {
                try {
                    $this->rollback();
                } catch (\Throwable) {
                    // The original failure is what matters; a lost connection rolls back by itself.
                }
            }
            throw $e;
        }
        $this->commit();
        return $result;
    }

    /** Whether a transaction is open, as the server reported in its last reply. */
    public function inTransaction(): bool
    {
        return ($this->status & Protocol::SERVER_STATUS_IN_TRANS) !== 0;
    }

    /** COM_PING. False (and the connection unusable) when the connection turns out to be lost. */
    public function ping(): bool
    {
        if (!$this->isUsable()) {
            return false;
        }
        $this->enter();
        try {
            $this->send(\chr(Protocol::COM_PING));
            $packet = $this->io->read();
            if ($packet[0] !== "\x00") {
                throw $packet[0] === "\xFF" ? $this->serverError($packet) : ProtocolViolation::unexpected('in reply to COM_PING', $packet);
            }
            $this->status = Wire::ok($packet)[2];
            $this->inFlight = false;
            return true;
        } catch (\Throwable $e) {
            $e = $this->failed($e);
            if ($e instanceof ConnectionLost) {
                return false;
            }
            throw $e;
        } finally {
            $this->owner = null;
        }
    }

    /** Sends COM_QUIT and closes the socket. Later calls throw ConnectionLost. */
    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $me = self::caller();
        if ($this->owner !== null && $this->owner !== $me) {
            throw self::busy($this->id, $this->owner, $me);
        }
        $this->closed = true;
        $this->statements = [];
        if ($this->lost === null && !$this->inFlight) {
            try {
                $this->io->writeCommand(\chr(Protocol::COM_QUIT));
            } catch (\Throwable) {
                // Closing anyway.
            }
        }
        $this->io->close();
        $this->socket->close();
    }

    /** False once the connection was closed or lost. */
    public function isUsable(): bool
    {
        return $this->lost === null && !$this->closed;
    }

    /** The server's id of this connection (CONNECTION_ID(), the Id in SHOW PROCESSLIST, what KILL takes). */
    public function id(): int
    {
        return $this->id;
    }

    /** E.g. "10.11.6-MariaDB-0+deb12u1" or "8.0.36". */
    public function serverVersion(): string
    {
        return $this->serverVersion;
    }

    public function isMariaDb(): bool
    {
        return \stripos($this->serverVersion, 'mariadb') !== false;
    }

    public function isTls(): bool
    {
        return $this->tls;
    }

    /** The server status flags of the last reply (Protocol::SERVER_STATUS_*). */
    public function serverStatus(): int
    {
        return $this->status;
    }

    public function config(): Config
    {
        return $this->config;
    }

    /** How many commands completed on this connection (their replies read in full, errors included). */
    public function completedCommands(): int
    {
        return $this->completed;
    }

    /**
     * @internal Statement::execute()
     * @param list<mixed> $params
     */
    public function executeStatement(Statement $statement, array $params): Result
    {
        $payload = self::executePayload($statement, $params);
        $this->enter();
        try {
            $this->send($payload);
            return $this->readResults(true);
        } catch (\Throwable $e) {
            throw $this->failed($e);
        } finally {
            $this->owner = null;
        }
    }

    /** @internal Statement::close() */
    public function closeStatement(Statement $statement): void
    {
        if (!$this->isUsable()) {
            return;
        }
        $this->enter();
        try {
            $this->send(\pack('CV', Protocol::COM_STMT_CLOSE, $statement->id));
            $this->inFlight = false; // COM_STMT_CLOSE has no reply
        } catch (\Throwable $e) {
            $e = $this->failed($e);
            if (!$e instanceof ConnectionLost) {
                throw $e;
            }
        } finally {
            $this->owner = null;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Connection phase

    private function handshake(float $deadline): void
    {
        $io = $this->io;
        $io->deadline = $deadline;
        $io->sequence = 0;
        $packet = $io->read();
        if ($packet[0] === "\xFF") {
            throw $this->serverError($packet);
        }
        $greeting = self::parseGreeting($packet);
        $this->id = $greeting['id'];
        $this->serverVersion = \str_starts_with($greeting['version'], '5.5.5-')
            ? \substr($greeting['version'], 6) // MariaDB's replication-compatibility prefix
            : $greeting['version'];
        $this->status = $greeting['status'];

        $config = $this->config;
        $server = $greeting['capabilities'];
        foreach ([Protocol::CLIENT_PROTOCOL_41 => 'PROTOCOL_41', Protocol::CLIENT_SECURE_CONNECTION => 'SECURE_CONNECTION'] as $flag => $name) {
            if (($server & $flag) === 0) {
                throw new ConnectException("The MySQL server at {$config->address()} does not support $name (server too old)");
            }
        }
        $capabilities = self::WANTED_CAPABILITIES;
        if ($config->database !== null) {
            $capabilities |= Protocol::CLIENT_CONNECT_WITH_DB;
        }
        if ($config->multiStatements) {
            $capabilities |= Protocol::CLIENT_MULTI_STATEMENTS;
        }
        if ($config->tls) {
            if (($server & Protocol::CLIENT_SSL) === 0) {
                throw new ConnectException("TLS was asked for, but the MySQL server at {$config->address()} does not offer it (no ssl_cert/ssl_key configured?)");
            }
            $capabilities |= Protocol::CLIENT_SSL;
        }
        $capabilities &= $server;
        $this->capabilities = $capabilities;
        $this->deprecateEof = ($capabilities & Protocol::CLIENT_DEPRECATE_EOF) !== 0;
        $collation = Protocol::COLLATIONS[\strtolower($config->charset)] ?? Protocol::COLLATIONS['utf8mb4'];
        $head = \pack('VVC', $capabilities, self::MAX_PACKET_SIZE, $collation) . \str_repeat("\0", 23);

        if ($config->tls) {
            $io->write($head); // SSLRequest: the first 32 bytes of the response, then the TLS handshake
            $this->socket->enableClientTls(null, $config->sslContextOptions(), \max(0.001, $deadline - \hrtime(true) / 1e9));
            $this->tls = true;
        }

        $scramble = $greeting['scramble'];
        $plugin = Auth::supports($greeting['plugin']) ? $greeting['plugin'] : Auth::NATIVE;
        $auth = Auth::response($plugin, $config->password, $scramble);
        $payload = $head . $config->user . "\0";
        $payload .= ($capabilities & Protocol::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
            ? Wire::encodeLenenc(\strlen($auth)) . $auth
            : \chr(\strlen($auth)) . $auth;
        if ($capabilities & Protocol::CLIENT_CONNECT_WITH_DB) {
            $payload .= $config->database . "\0";
        }
        if ($capabilities & Protocol::CLIENT_PLUGIN_AUTH) {
            $payload .= $plugin . "\0";
        }
        $io->write($payload);
        $this->authenticate($plugin, $scramble);
        $io->deadline = null;

        if (!isset(Protocol::COLLATIONS[\strtolower($config->charset)])) {
            $this->query('SET NAMES ' . $config->charset);
        }
    }

    /** Reads the server's answers to our credentials until OK; follows auth switches and caching_sha2 rounds. */
    private function authenticate(string $plugin, string $scramble): void
    {
        $io = $this->io;
        $config = $this->config;
        while (true) {
            $packet = $io->read();
            $header = \ord($packet[0]);
            if ($header === 0x00) {
                $this->status = Wire::ok($packet)[2];
                return;
            }
            if ($header === 0xFF) {
                [$code, $sqlState, $message] = Wire::error($packet);
                if (isset(self::AUTH_ERRORS[$code])) {
                    throw AuthenticationFailed::rejected($config->user, $config->address(), $code, $sqlState, $message);
                }
                throw QueryError::fromServer($code, $sqlState, $message);
            }
            if ($header === 0xFE) {
                // Auth switch request: plugin name, NUL, the plugin's challenge (scramble + NUL).
                $end = \strpos($packet, "\0", 1);
                if ($end === false) {
                    throw AuthenticationFailed::unsupportedPlugin('mysql_old_password', $config->address());
                }
                $plugin = \substr($packet, 1, $end - 1);
                if (!Auth::supports($plugin)) {
                    throw AuthenticationFailed::unsupportedPlugin($plugin, $config->address());
                }
                $scramble = \substr($packet, $end + 1, 20);
                $io->write(Auth::response($plugin, $config->password, $scramble));
                continue;
            }
            if ($header === 0x01 && $plugin === Auth::CACHING_SHA2 && \strlen($packet) === 2) {
                $state = \ord($packet[1]);
                if ($state === Auth::FAST_AUTH_SUCCESS) {
                    continue; // the OK packet follows
                }
                if ($state === Auth::PERFORM_FULL_AUTH) {
                    $this->fullSha2Authentication($scramble);
                    continue;
                }
            }
            throw ProtocolViolation::unexpected('during authentication', $packet);
        }
    }

    /**
     * caching_sha2_password when the server has no cached hash: the password in clear over TLS or a Unix
     * socket, else RSA-encrypted with the server's public key (configured, or asked for).
     */
    private function fullSha2Authentication(string $scramble): void
    {
        $config = $this->config;
        if ($this->tls || $config->unixSocket !== null) {
            $this->io->write($config->password . "\0");
            return;
        }
        if (!\extension_loaded('openssl')) {
            throw AuthenticationFailed::fullAuthNeedsSecureChannel($config->address(), 'the openssl extension is needed for RSA; or connect with tls=1');
        }
        $key = $config->serverPublicKey;
        if ($key === null) {
            $this->io->write(Auth::REQUEST_PUBLIC_KEY);
            $packet = $this->io->read();
            if ($packet[0] === "\xFF") {
                [$code, $sqlState, $message] = Wire::error($packet);
                throw AuthenticationFailed::rejected($config->user, $config->address(), $code, $sqlState, $message);
            }
            if ($packet[0] !== "\x01") {
                throw ProtocolViolation::unexpected('instead of the server\'s public key', $packet);
            }
            $key = \substr($packet, 1);
        }
        $this->io->write(Auth::rsaEncryptPassword($config->password, $scramble, $key));
    }

    /**
     * Protocol::HandshakeV10.
     *
     * @internal public for the tests
     *
     * @return array{version: string, id: int, scramble: string, capabilities: int, status: int, plugin: string}
     */
    public static function parseGreeting(string $packet): array
    {
        if (\ord($packet[0]) !== 10) {
            throw ProtocolViolation::unexpected('as the server greeting (protocol version ' . \ord($packet[0]) . ', expected 10)', $packet);
        }
        $end = \strpos($packet, "\0", 1);
        if ($end === false || \strlen($packet) < $end + 16) {
            throw ProtocolViolation::truncated('server greeting');
        }
        $version = \substr($packet, 1, $end - 1);
        $pos = $end + 1;
        $id = \unpack('V', $packet, $pos)[1];
        $scramble = \substr($packet, $pos + 4, 8);
        $pos += 13; // id, scramble part 1, filler
        $capabilities = \unpack('v', $packet, $pos)[1];
        $pos += 2;
        $status = 0;
        $plugin = Auth::NATIVE;
        if (\strlen($packet) >= $pos + 16) {
            $f = \unpack('Ccharset/vstatus/vcapabilities/CauthLength', $packet, $pos);
            $status = $f['status'];
            $capabilities |= $f['capabilities'] << 16;
            $pos += 6 + 10; // the fields above, then 10 reserved bytes (MariaDB keeps extended capabilities there)
            if ($capabilities & Protocol::CLIENT_SECURE_CONNECTION) {
                $length = \max(13, $f['authLength'] - 8);
                // The second part ends with a NUL that is not part of the scramble.
                $scramble .= \substr($packet, $pos, \max(12, $length - 1));
                $pos += $length;
            }
            if ($capabilities & Protocol::CLIENT_PLUGIN_AUTH) {
                $end = \strpos($packet, "\0", $pos);
                $plugin = $end === false ? \substr($packet, $pos) : \substr($packet, $pos, $end - $pos);
            }
        }
        return ['version' => $version, 'id' => $id, 'scramble' => $scramble, 'capabilities' => $capabilities, 'status' => $status, 'plugin' => $plugin];
    }

    // ---------------------------------------------------------------------------------------------
    // Command phase

    /** Claims the connection for the calling coroutine, or refuses. */
    private function enter(): void
    {
        if ($this->lost !== null || $this->closed) {
            throw ConnectionLost::unusable($this->id, $this->closed ? 'it was closed' : $this->lost);
        }
        if ($this->owner !== null) {
            throw self::busy($this->id, $this->owner, self::caller());
        }
        $this->owner = self::caller();
    }

    /** The coroutine calling in ({main}'s handle outside of any). */
    private static function caller(): Coroutine
    {
        return Scheduler::get()->self();
    }

    private static function busy(int $id, Coroutine $owner, Coroutine $intruder): ConcurrentUse
    {
        return ConcurrentUse::of("MySQL connection #$id", $owner, $intruder, 'share connections through Weft\\Client\\Mysql\\Pool');
    }

    /**
     * Writes a command. Before that, an idle connection that has something to read is dead: the server
     * closed it (killed, restarted, timed out) and possibly said why. Then nothing has been sent, which
     * is what makes ConnectionLost::isSafeToRetry() true.
     */
    private function send(string $payload): void
    {
        $why = $this->peerSpokeWhileIdle();
        if ($why !== null) {
            throw ConnectionLost::beforeSend($this->id, $why, $this->inTransaction());
        }
        $this->inFlight = true;
        try {
            $this->io->writeCommand($payload);
        } catch (ConnectionClosed $e) {
            throw ConnectionLost::writeFailed($this->id, $e, $this->inTransaction());
        }
    }

    /** Null when the idle connection has nothing to say (as it should), else what the server said or did. */
    private function peerSpokeWhileIdle(): ?string
    {
        if ($this->io->pending() > 0) {
            return 'unexpected data before the command';
        }
        $resource = $this->socket->resource();
        $read = [$resource];
        $write = $except = null;
        if (@\stream_select($read, $write, $except, 0) !== 1) {
            return null;
        }
        $data = @\fread($resource, 65536);
        if ($data === '' && !\feof($resource)) {
            return null; // e.g. a TLS record without application data
        }
        if (\is_string($data) && \strlen($data) > 7 && $data[4] === "\xFF") {
            [$code, , $message] = Wire::error(\substr($data, 4));
            return "it sent error $code: $message";
        }
        return $data === false || $data === '' ? 'end of stream' : 'unexpected data before the command';
    }

    /**
     * Maps what a command threw: server errors pass (the stream is in sync); I/O failures and protocol
     * errors mark the connection lost; anything else that interrupted a command in flight (a timeout, a
     * cancel) also marks it lost, since the reply would still arrive.
     */
    private function failed(\Throwable $e): \Throwable
    {
        if ($e instanceof QueryError) {
            $this->inFlight = false;
            $this->completed++;
            return $e;
        }
        if ($e instanceof ConnectionLost) {
            $this->markLost($e->getMessage());
            return $e;
        }
        if (!$this->inFlight) {
            return $e; // e.g. invalid parameters, refused before anything was sent
        }
        if ($e instanceof ProtocolViolation) {
            $e = ConnectionLost::desync($this->id, $e);
        } elseif ($e instanceof SocketException) {
            $e = ConnectionLost::duringCommand($this->id, $e);
        } else {
            $this->markLost(\sprintf('a command was interrupted while waiting for its reply (%s: %s)', $e::class, $e->getMessage()));
            return $e;
        }
        $this->markLost($e->getMessage());
        return $e;
    }

    private function markLost(string $why): void
    {
        $this->lost ??= $why;
        $this->inFlight = false;
        $this->statements = [];
        $this->io->close();
        $this->socket->close();
    }

    /** An ERR packet as an exception: QueryError, or ConnectionLost when the server ends the connection. */
    private function serverError(string $packet): QueryError|ConnectionLost
    {
        [$code, $sqlState, $message] = Wire::error($packet);
        if (isset(self::FATAL_ERRORS[$code])) {
            return ConnectionLost::byServer($this->id, $code, $sqlState, $message);
        }
        return QueryError::fromServer($code, $sqlState, $message);
    }

    /**
     * Reads a command's reply: one result, or a chain of them while the server says more follow
     * (multi-statements, CALL). An error after the first result is kept for nextResult() to throw.
     */
    private function readResults(bool $binary): Result
    {
        $io = $this->io;
        $first = $last = null;
        do {
            $packet = $io->read();
            $header = $packet === '' ? -1 : \ord($packet[0]);
            if ($header === 0x00) {
                [$affected, $insertId, $this->status, $warnings, $info] = Wire::ok($packet);
                $result = new Result([], [], $affected, $insertId, $warnings, $info);
            } elseif ($header === 0xFF) {
                $error = $this->serverError($packet);
                if ($first === null || $error instanceof ConnectionLost) {
                    throw $error;
                }
                $last->setNext($error);
                break;
            } elseif ($header > 0 && $header !== 0xFB) {
                $pos = 0;
                $result = $this->readResultSet((int) Wire::lenencInt($packet, $pos), $binary);
            } else {
                throw ProtocolViolation::unexpected('at the start of a result', $packet);
            }
            if ($last === null) {
                $first = $result;
            } else {
                $last->setNext($result);
            }
            $last = $result;
        } while ($this->status & Protocol::SERVER_MORE_RESULTS_EXISTS);
        $this->inFlight = false;
        $this->completed++;
        return $first;
    }

    private function readResultSet(int $count, bool $binary): Result
    {
        $io = $this->io;
        $columns = $this->readColumns($count);
        if (!$this->deprecateEof) {
            $this->expectEof();
        }
        $names = [];
        foreach ($columns as $column) {
            $names[] = $column->name;
        }
        $rows = [];
        if ($binary) {
            while (($packet = $io->read())[0] === "\x00") {
                $rows[] = Wire::binaryRow($packet, $columns, $names);
            }
        } else {
            $kinds = [];
            foreach ($columns as $column) {
                $kinds[] = Wire::kind($column);
            }
            while (true) {
                $packet = $io->read();
                $header = $packet[0];
                if (($header === "\xFE" && \strlen($packet) < Protocol::MAX_PACKET) || $header === "\xFF") {
                    break;
                }
                $rows[] = Wire::textRow($packet, $names, $kinds);
            }
        }
        if ($packet[0] === "\xFF") {
            throw $this->serverError($packet); // e.g. the query was killed while sending rows
        }
        if ($packet[0] !== "\xFE") {
            throw ProtocolViolation::unexpected('after the rows', $packet);
        }
        if ($this->deprecateEof) {
            [, , $this->status, $warnings] = Wire::ok($packet);
        } else {
            [$warnings, $this->status] = Wire::eof($packet);
        }
        return new Result($columns, $rows, \count($rows), 0, $warnings);
    }

    /** @return list<Column> */
    private function readColumns(int $count): array
    {
        $columns = [];
        for ($i = 0; $i < $count; $i++) {
            $packet = $this->io->read();
            $column = $this->columnCache[$packet] ?? null;
            if ($column === null) {
                if (\count($this->columnCache) >= self::COLUMN_CACHE_SIZE) {
                    $this->columnCache = [];
                }
                $column = $this->columnCache[$packet] = Wire::column($packet);
            }
            $columns[] = $column;
        }
        return $columns;
    }

    private function expectEof(): void
    {
        $packet = $this->io->read();
        if ($packet[0] !== "\xFE" || \strlen($packet) >= 9) {
            throw ProtocolViolation::unexpected('instead of EOF', $packet);
        }
        $this->status = Wire::eof($packet)[1];
    }

    private function prepareStatement(string $sql): Statement
    {
        $this->send(\chr(Protocol::COM_STMT_PREPARE) . $sql);
        $packet = $this->io->read();
        if ($packet[0] === "\xFF") {
            throw $this->serverError($packet);
        }
        if ($packet[0] !== "\x00" || \strlen($packet) < 12) {
            throw ProtocolViolation::unexpected('in reply to COM_STMT_PREPARE', $packet);
        }
        $f = \unpack('Vid/vcolumns/vparams', $packet, 1);
        if ($f['params'] > 0) {
            $this->readColumns($f['params']);
            if (!$this->deprecateEof) {
                $this->expectEof();
            }
        }
        $columns = [];
        if ($f['columns'] > 0) {
            $columns = $this->readColumns($f['columns']);
            if (!$this->deprecateEof) {
                $this->expectEof();
            }
        }
        $this->inFlight = false;
        return new Statement($this, $f['id'], $f['params'], $columns, $sql);
    }

    /** query() with parameters: a cached prepared statement, executed. @param list<mixed> $params */
    private function executeCached(string $sql, array $params): Result
    {
        $this->enter();
        try {
            $statement = $this->statements[$sql] ?? null;
            if ($statement === null) {
                $statement = $this->prepareStatement($sql);
                if (\count($this->statements) >= self::STATEMENT_CACHE_SIZE) {
                    $evicted = $this->statements[\array_key_first($this->statements)];
                    unset($this->statements[$evicted->sql]);
                    $this->send(\pack('CV', Protocol::COM_STMT_CLOSE, $evicted->id));
                    $this->inFlight = false;
                }
            } else {
                unset($this->statements[$sql]); // most recently used goes last
            }
            $this->statements[$sql] = $statement;
            $payload = self::executePayload($statement, $params);
            $this->send($payload);
            return $this->readResults(true);
        } catch (\Throwable $e) {
            throw $this->failed($e);
        } finally {
            $this->owner = null;
        }
    }

    /** @param array<mixed> $params */
    private static function executePayload(Statement $statement, array $params): string
    {
        if (\count($params) !== $statement->paramCount) {
            throw new \InvalidArgumentException(\sprintf(
                'The statement has %d placeholder(s) but %d parameter(s) were given',
                $statement->paramCount,
                \count($params),
            ));
        }
        if (!\array_is_list($params)) {
            throw new \InvalidArgumentException('Parameters must be a list (positional "?" placeholders); named parameters are not supported');
        }
        return Wire::execute($statement->id, $params);
    }
}
