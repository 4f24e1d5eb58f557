<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Mysql;

use PHPUnit\Framework\Attributes\RequiresPhpExtension;
use PHPUnit\Framework\TestCase;
use Weft\Client\Mysql\AuthenticationFailed;
use Weft\Client\Mysql\Config;
use Weft\Client\Mysql\Connection;
use Weft\Client\Mysql\Internal\Protocol;
use Weft\Client\Mysql\Internal\Wire;
use Weft\Socket\Listener;
use Weft\Socket\Socket;

/**
 * The authentication exchanges against a scripted server that checks what the client sends the way
 * MySQL 8 does. MariaDB 10.11 (the test server) has no caching_sha2_password, so these flows are
 * covered here, protocol-exact but not against a real MySQL 8.
 */
#[RequiresPhpExtension('openssl')]
final class AuthFlowTest extends TestCase
{
    private const PASSWORD = 'sesame';
    private const SCRAMBLE = 'ABCDEFGHIJKLMNOPQRST';
    private const SCRAMBLE2 = 'abcdefghijklmnopqrst';

    private static ?\OpenSSLAsymmetricKey $key = null;

    public function testCachingSha2FastPath(): void
    {
        $log = $this->withServer('caching_sha2_password', function (FakeServerSide $s): void {
            $response = $s->handshakeResponse();
            $s->log[] = 'plugin ' . $response['plugin'];
            $s->verifySha2($response['auth'], self::SCRAMBLE);
            $s->send("\x01\x03"); // fast auth success
            $s->ok();
        }, function (Connection $db): void {
            self::assertSame(99, $db->id());
            self::assertSame('8.0.36', $db->serverVersion());
            self::assertFalse($db->isMariaDb());
        });
        self::assertSame(['user app', 'database shop', 'plugin caching_sha2_password', 'sha2 scramble ok', 'quit'], $log);
    }

    public function testCachingSha2FullAuthenticationWithTheServersRsaKey(): void
    {
        $log = $this->withServer('caching_sha2_password', function (FakeServerSide $s): void {
            $s->verifySha2($s->handshakeResponse()['auth'], self::SCRAMBLE);
            $s->send("\x01\x04"); // perform full authentication
            $request = $s->receive();
            $s->log[] = 'key request ' . \bin2hex($request);
            $s->send("\x01" . \openssl_pkey_get_details(self::key())['key']);
            $s->verifyRsa($s->receive());
            $s->ok();
        });
        self::assertSame(['user app', 'database shop', 'sha2 scramble ok', 'key request 02', 'rsa password ok', 'quit'], $log);
    }

    public function testCachingSha2FullAuthenticationWithAConfiguredKey(): void
    {
        $pem = \openssl_pkey_get_details(self::key())['key'];
        $log = $this->withServer('caching_sha2_password', function (FakeServerSide $s): void {
            $s->verifySha2($s->handshakeResponse()['auth'], self::SCRAMBLE);
            $s->send("\x01\x04");
            $s->verifyRsa($s->receive()); // straight away: no key request
            $s->ok();
        }, null, static fn (Config $c): Config => $c->withServerPublicKey($pem));
        self::assertSame(['user app', 'database shop', 'sha2 scramble ok', 'rsa password ok', 'quit'], $log);
    }

    public function testAuthSwitchToCachingSha2(): void
    {
        $log = $this->withServer('mysql_native_password', function (FakeServerSide $s): void {
            $response = $s->handshakeResponse();
            $s->verifyNative($response['auth'], self::SCRAMBLE);
            $s->send("\xFEcaching_sha2_password\0" . self::SCRAMBLE2 . "\0");
            $s->verifySha2($s->receive(), self::SCRAMBLE2);
            $s->send("\x01\x03");
            $s->ok();
        });
        self::assertSame(['user app', 'database shop', 'native scramble ok', 'sha2 scramble ok', 'quit'], $log);
    }

    public function testAuthSwitchToNativePassword(): void
    {
        $log = $this->withServer('caching_sha2_password', function (FakeServerSide $s): void {
            $s->handshakeResponse();
            $s->send("\xFEmysql_native_password\0" . self::SCRAMBLE2 . "\0");
            $s->verifyNative($s->receive(), self::SCRAMBLE2);
            $s->ok();
        });
        self::assertContains('native scramble ok', $log);
    }

    public function testRefusedCredentialsAndUnknownPlugins(): void
    {
        foreach ([
            ["\xFF\x15\x04#28000Access denied for user 'app'", 1045, '28000'],
            ["\xFEclient_ed25519\0" . self::SCRAMBLE2 . "\0", AuthenticationFailed::UNSUPPORTED_PLUGIN, 'HY000'],
            ["\xFE", AuthenticationFailed::UNSUPPORTED_PLUGIN, 'HY000'], // the old pre-4.1 switch
        ] as [$answer, $code, $sqlState]) {
            try {
                $this->withServer('mysql_native_password', function (FakeServerSide $s) use ($answer): void {
                    $s->handshakeResponse();
                    $s->send($answer);
                });
                self::fail('connected although the server refused');
            } catch (AuthenticationFailed $e) {
                self::assertSame($code, $e->getCode());
                self::assertSame($sqlState, $e->sqlState());
            }
        }
    }

    public function testGreetingParsing(): void
    {
        $greeting = FakeServerSide::greeting('caching_sha2_password');
        $parsed = Connection::parseGreeting($greeting);
        self::assertSame('8.0.36', $parsed['version']);
        self::assertSame(99, $parsed['id']);
        self::assertSame(self::SCRAMBLE, $parsed['scramble']);
        self::assertSame('caching_sha2_password', $parsed['plugin']);
        self::assertSame(Protocol::SERVER_STATUS_AUTOCOMMIT, $parsed['status']);
        self::assertNotSame(0, $parsed['capabilities'] & Protocol::CLIENT_DEPRECATE_EOF);
    }

    /**
     * Runs $server on the accepted connection while the client connects (and runs $client, then closes).
     *
     * @param \Closure(FakeServerSide): void $server
     * @return list<string> what the server saw
     */
    private function withServer(string $plugin, \Closure $server, ?\Closure $client = null, ?\Closure $configure = null): array
    {
        $listener = Listener::listen('127.0.0.1:0');
        try {
            return \Weft\run(function () use ($listener, $plugin, $server, $client, $configure): array {
                $side = null;
                $serving = \Weft\go(function () use ($listener, $plugin, $server, &$side): void {
                    $side = new FakeServerSide($listener->accept(5.0), self::PASSWORD, self::key());
                    $side->send(FakeServerSide::greeting($plugin));
                    $server($side);
                    $side->expectQuit();
                });
                $config = new Config(host: '127.0.0.1', port: $listener->port(), user: 'app', password: self::PASSWORD, database: 'shop', connectTimeout: 5.0);
                $config = $configure !== null ? $configure($config) : $config;
                try {
                    $db = Connection::connect($config);
                } catch (\Throwable $e) {
                    $serving->cancel();
                    try {
                        $serving->join();
                    } catch (\Throwable) {
                    }
                    throw $e;
                }
                if ($client !== null) {
                    $client($db);
                }
                $db->close();
                $serving->join(5.0);
                return $side->log;
            });
        } finally {
            $listener->close();
        }
    }

    private static function key(): \OpenSSLAsymmetricKey
    {
        return self::$key ??= \openssl_pkey_new(['private_key_bits' => 2048, 'private_key_type' => \OPENSSL_KEYTYPE_RSA]);
    }
}

/** The server half of a scripted exchange. */
final class FakeServerSide
{
    /** @var list<string> */
    public array $log = [];
    private int $sequence = 0;

    public function __construct(private readonly Socket $socket, private readonly string $password, private readonly \OpenSSLAsymmetricKey $key)
    {
    }

    public static function greeting(string $plugin): string
    {
        $capabilities = Protocol::CLIENT_LONG_PASSWORD | Protocol::CLIENT_LONG_FLAG | Protocol::CLIENT_CONNECT_WITH_DB
            | Protocol::CLIENT_PROTOCOL_41 | Protocol::CLIENT_TRANSACTIONS | Protocol::CLIENT_SECURE_CONNECTION
            | Protocol::CLIENT_MULTI_RESULTS | Protocol::CLIENT_PLUGIN_AUTH | Protocol::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
            | Protocol::CLIENT_DEPRECATE_EOF;
        return "\x0A8.0.36\0" . \pack('V', 99) . 'ABCDEFGH' . "\0" . \pack('v', $capabilities & 0xFFFF) . "\xFF"
            . \pack('v', Protocol::SERVER_STATUS_AUTOCOMMIT) . \pack('v', $capabilities >> 16) . \chr(21) . \str_repeat("\0", 10)
            . 'IJKLMNOPQRST' . "\0" . $plugin . "\0";
    }

    public function send(string $payload): void
    {
        $this->socket->write(\pack('V', \strlen($payload) | ($this->sequence << 24)) . $payload);
        $this->sequence = ($this->sequence + 1) & 0xFF;
    }

    public function receive(): string
    {
        $header = \unpack('V', $this->socket->readExactly(4, 5.0))[1];
        if (($header >> 24) !== $this->sequence) {
            throw new \UnexpectedValueException(\sprintf('client packet with sequence %d, expected %d', $header >> 24, $this->sequence));
        }
        $this->sequence = (($header >> 24) + 1) & 0xFF;
        $length = $header & 0xFFFFFF;
        return $length === 0 ? '' : $this->socket->readExactly($length, 5.0);
    }

    /** @return array{auth: string, plugin: string} */
    public function handshakeResponse(): array
    {
        $packet = $this->receive();
        $capabilities = \unpack('V', $packet)[1];
        if (!($capabilities & Protocol::CLIENT_PROTOCOL_41) || !($capabilities & Protocol::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)) {
            throw new \UnexpectedValueException('capabilities missing');
        }
        $pos = 32;
        $end = \strpos($packet, "\0", $pos);
        $user = \substr($packet, $pos, $end - $pos);
        $pos = $end + 1;
        $auth = (string) Wire::lenencString($packet, $pos);
        $end = \strpos($packet, "\0", $pos);
        $database = \substr($packet, $pos, $end - $pos);
        $pos = $end + 1;
        $plugin = \substr($packet, $pos, \strpos($packet, "\0", $pos) - $pos);
        $this->log[] = "user $user";
        $this->log[] = "database $database";
        return ['auth' => $auth, 'plugin' => $plugin];
    }

    public function verifySha2(string $response, string $scramble): void
    {
        $stored = \hash('sha256', \hash('sha256', $this->password, true), true);
        $candidate = $response ^ \hash('sha256', $stored . $scramble, true);
        if (\hash('sha256', $candidate, true) !== $stored) {
            throw new \UnexpectedValueException('bad caching_sha2_password scramble');
        }
        $this->log[] = 'sha2 scramble ok';
    }

    public function verifyNative(string $response, string $scramble): void
    {
        $stored = \sha1(\sha1($this->password, true), true);
        if (\sha1($response ^ \sha1($scramble . $stored, true), true) !== $stored) {
            throw new \UnexpectedValueException('bad mysql_native_password scramble');
        }
        $this->log[] = 'native scramble ok';
    }

    public function verifyRsa(string $encrypted): void
    {
        if (!\openssl_private_decrypt($encrypted, $plain, $this->key, \OPENSSL_PKCS1_OAEP_PADDING)) {
            throw new \UnexpectedValueException('RSA decryption failed');
        }
        $mask = \substr(\str_repeat('ABCDEFGHIJKLMNOPQRST', 4), 0, \strlen($plain));
        if (($plain ^ $mask) !== $this->password . "\0") {
            throw new \UnexpectedValueException('RSA password mismatch');
        }
        $this->log[] = 'rsa password ok';
    }

    public function ok(): void
    {
        $this->send("\x00\x00\x00\x02\x00\x00\x00");
    }

    public function expectQuit(): void
    {
        $this->sequence = 0;
        $packet = $this->receive();
        $this->log[] = $packet === "\x01" ? 'quit' : 'unexpected ' . \bin2hex($packet);
    }
}
