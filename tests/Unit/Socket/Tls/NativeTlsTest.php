<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Socket\Tls;

use PHPUnit\Framework\TestCase;
use Weft\Loop\NativeDriver;
use Weft\Loop\StreamSelectDriver;
use Weft\Socket\Tls\TicketKeys;
use Weft\Socket\Tls\TlsConfig;

/**
 * The extension's TLS functions (ext/weft_tls.c) on real connections within this process: both ends
 * non-blocking, the handshake stepped by hand. Also run under valgrind (scripts/ext-memcheck.sh).
 */
final class NativeTlsTest extends TestCase
{
    private static string $dir;
    /** @var array<string, array{string, string}> cert and key files by CN */
    private static array $files = [];

    public static function setUpBeforeClass(): void
    {
        self::$dir = \sys_get_temp_dir() . '/weft-native-tls-' . \bin2hex(\random_bytes(4));
        \mkdir(self::$dir, 0700);
        foreach (['default.test', 'other.test'] as $cn) {
            $key = \openssl_pkey_new(['private_key_type' => \OPENSSL_KEYTYPE_EC, 'curve_name' => 'prime256v1']);
            $cert = \openssl_csr_sign(\openssl_csr_new(['commonName' => $cn], $key), null, $key, 1);
            \openssl_x509_export_to_file($cert, self::$dir . "/$cn.pem");
            \openssl_pkey_export_to_file($key, self::$dir . "/$cn.key");
            self::$files[$cn] = [self::$dir . "/$cn.pem", self::$dir . "/$cn.key"];
        }
    }

    public static function tearDownAfterClass(): void
    {
        \array_map('unlink', \glob(self::$dir . '/*') ?: []);
        @\rmdir(self::$dir);
    }

    protected function setUp(): void
    {
        if (!\function_exists('Weft\Ext\tlsAttach')) {
            self::markTestSkipped('needs the native extension');
        }
    }

    public function testTheLayoutCheckPassesAndAttachedStreamsHandshakeWithAlpnSniAndResumption(): void
    {
        [$server, $client] = $this->pair();
        self::assertSame(1, \Weft\Ext\tlsShareTickets($server, TlsConfig::METHOD, 60), 'the layout of this PHP is the one the build knows');
        \fclose($server);
        \fclose($client);

        \Weft\Ext\tlsTicketKeys((new TicketKeys(\random_bytes(32)))->keysFor(1));
        \Weft\Ext\tlsContext([[null, ...self::$files['default.test']], ['other.test', ...self::$files['other.test']]], TlsConfig::INTERMEDIATE_CIPHERS, "\x08http/1.1", 60);

        [$server, $client] = $this->pair(['peer_name' => 'other.test', 'alpn_protocols' => 'h2,http/1.1']);
        self::assertSame(1, \Weft\Ext\tlsAttach($server));
        self::assertSame(0, \Weft\Ext\tlsAttach($server), 'set up already');
        $this->handshake($server, $client);
        self::assertSame('other.test', \openssl_x509_parse(\stream_context_get_options($client)['ssl']['peer_certificate'])['subject']['CN']);
        self::assertSame('http/1.1', \stream_get_meta_data($server)['crypto']['alpn_protocol']);
        self::assertFalse(\Weft\Ext\tlsSessionReused($server));
        \fwrite($client, 'ping');
        self::assertSame('ping', $this->readSome($server));
        \fwrite($server, 'pong');
        self::assertSame('pong', $this->readSome($client));

        // A second connection resumes the first one's session (TLS 1.2: the ticket comes with the handshake).
        [$server2, $client2] = $this->pair(['peer_name' => 'other.test']);
        self::assertSame(1, \Weft\Ext\tlsAttach($server2));
        $this->handshake($server2, $client2, $client);
        self::assertTrue(\Weft\Ext\tlsSessionReused($server2));
        foreach ([$server, $client, $server2, $client2] as $stream) {
            \fclose($stream);
        }
    }

    public function testInsideAFiberToo(): void
    {
        \Weft\Ext\tlsContext([[null, ...self::$files['default.test']]], TlsConfig::INTERMEDIATE_CIPHERS, '', 60);
        $fiber = new \Fiber(function (): string {
            [$server, $client] = $this->pair(['peer_name' => 'default.test']);
            self::assertSame(1, \Weft\Ext\tlsAttach($server));
            \Fiber::suspend();
            $this->handshake($server, $client);
            \fwrite($client, 'in a fiber');
            return $this->readSome($server);
        });
        $fiber->start();
        $fiber->resume();
        self::assertSame('in a fiber', $fiber->getReturn());
    }

    public function testAnAttachedStreamReadsAheadAndTlsUnreadShowsWhatOpenSslHolds(): void
    {
        [$server, $client] = $this->pair();
        self::assertSame(1, \Weft\Ext\tlsShareTickets($server, TlsConfig::METHOD, 60), 'the layout check, which tlsAttach() needs');
        \fclose($server);
        \fclose($client);
        \Weft\Ext\tlsContext([[null, ...self::$files['default.test']]], TlsConfig::INTERMEDIATE_CIPHERS, '', 60);
        [$server, $client, $relay] = $this->relayed(['peer_name' => 'default.test']);
        $raw = \socket_import_stream($server); // before the handshake: PHP refuses it on a TLS stream
        self::assertSame(1, \Weft\Ext\tlsAttach($server));
        $this->handshake($server, $client, null, $relay);
        self::assertSame(0, \Weft\Ext\tlsUnread([$server, $client]), 'nothing held; a stream of PHP\'s own TLS is never looked at');

        // Three records (one per fwrite()), in the server's socket before it reads.
        foreach (['one,', 'two,', 'three'] as $record) {
            \fwrite($client, $record);
        }
        $bytes = $relay(3 * (5 + 8 + 16) + 4 + 4 + 5); // TLS 1.2 AES-GCM records: header, explicit nonce, tag
        self::assertSame(3 * 29 + 13, \strlen($bytes));
        $relay(0, $bytes);
        self::assertSame('one,', \fread($server, 100), 'one record per read');
        // Read ahead: that one read() took all three records from the socket.
        self::assertFalse(@\socket_recv($raw, $peek, 1, \MSG_PEEK | \MSG_DONTWAIT), 'the socket still holds records');
        // select alone cannot see the two records inside OpenSSL; after tlsUnread() it does.
        $read = [$server];
        $write = $except = null;
        self::assertSame(0, \stream_select($read, $write, $except, 0));
        self::assertSame(1, \Weft\Ext\tlsUnread([$server, 'not a stream', \fopen('php://memory', 'r')]));
        $read = [$server];
        self::assertSame(1, \stream_select($read, $write, $except, 0));
        // select's cast moved 'two,' into PHP's buffer; the read goes on into OpenSSL's next record.
        self::assertSame('two,three', \fread($server, 100));
        self::assertSame(0, \Weft\Ext\tlsUnread([$server]), 'all read');

        // A record and part of the next: only the whole one counts. The rest has to come from the
        // socket (where select sees it); a reader woken for the part would find nothing and spin.
        \fwrite($client, 'first');
        \fwrite($client, 'second');
        $bytes = $relay(2 * 29 + 11);
        $relay(0, \substr($bytes, 0, -10));
        self::assertSame('first', $this->readSome($server));
        self::assertSame(0, \Weft\Ext\tlsUnread([$server]));
        $read = [$server];
        self::assertSame(0, \stream_select($read, $write, $except, 0));
        $relay(0, \substr($bytes, -10));
        $read = [$server];
        self::assertSame(1, \stream_select($read, $write, $except, 1));
        self::assertSame('second', \fread($server, 100));

        // The peer's end (close_notify) held in OpenSSL counts too: the reader must come and find it.
        \fwrite($client, 'last');
        \stream_socket_enable_crypto($client, false); // sends close_notify
        $bytes = $relay(2 * 29 + 4 + 2);
        $relay(0, $bytes);
        self::assertSame('last', $this->readSome($server));
        self::assertSame(1, \Weft\Ext\tlsUnread([$server]));
        self::assertSame('', \fread($server, 100));
        foreach ([$server, $client] as $stream) {
            \fclose($stream);
        }
    }

    /** The same rule inside the native loop (weft_epoll.c's sweep), and for the select loop: records already taken from the socket wake the reader. */
    public function testBothLoopsWakeTheReaderForRecordsOpenSslHolds(): void
    {
        [$server, $client] = $this->pair();
        self::assertSame(1, \Weft\Ext\tlsShareTickets($server, TlsConfig::METHOD, 60));
        \fclose($server);
        \fclose($client);
        \Weft\Ext\tlsContext([[null, ...self::$files['default.test']]], TlsConfig::INTERMEDIATE_CIPHERS, '', 60);
        foreach ([new NativeDriver(), new StreamSelectDriver()] as $loop) {
            [$server, $client, $relay] = $this->relayed(['peer_name' => 'default.test']);
            self::assertSame(1, \Weft\Ext\tlsAttach($server));
            $this->handshake($server, $client, null, $relay);
            foreach (['one,', 'two,', 'three'] as $record) {
                \fwrite($client, $record);
            }
            $relay(0, $relay(3 * 29 + 13));
            // Taken by the handshake's last read, as with a TLS 1.3 client's Finished and first request.
            self::assertSame('one,', \fread($server, 100));
            $got = '';
            $loop->onReadable($server, function (string $id) use ($loop, $server, &$got): void {
                $got .= \fread($server, 100);
                if ($got === 'two,three') {
                    $loop->cancel($id);
                    $loop->stop();
                }
            });
            $timer = $loop->delay(5.0, static fn () => $loop->stop()); // a stall ends here
            $loop->run();
            self::assertSame('two,three', $got, $loop->name() . ': woken for what OpenSSL held, with nothing more on the socket');
            $loop->cancel($timer);
            \fclose($server);
            \fclose($client);
        }
    }

    public function testTlsReadAndTlsWriteGoStraightThroughOpenSsl(): void
    {
        [$server, $client] = $this->pair();
        self::assertSame(1, \Weft\Ext\tlsShareTickets($server, TlsConfig::METHOD, 60));
        \fclose($server);
        \fclose($client);
        \Weft\Ext\tlsContext([[null, ...self::$files['default.test']]], TlsConfig::INTERMEDIATE_CIPHERS, '', 60);
        [$server, $client, $relay] = $this->relayed(['peer_name' => 'default.test']);
        self::assertNull(\Weft\Ext\tlsRead($server, 100), 'not set up yet: fread() applies');
        self::assertSame(1, \Weft\Ext\tlsAttach($server));
        self::assertNull(\Weft\Ext\tlsWrite($server, 'x'), 'mid-handshake: PHP drives it');
        $this->handshake($server, $client, null, $relay);
        self::assertNull(\Weft\Ext\tlsRead($client, 100), "a stream of PHP's own TLS");

        self::assertSame('', \Weft\Ext\tlsRead($server, 100), 'nothing yet');
        foreach (['one,', 'two,', 'three'] as $record) {
            \fwrite($client, $record);
        }
        $relay(0, $relay(3 * 29 + 13));
        self::assertSame('one,', \Weft\Ext\tlsRead($server, 65536), 'a record per call');
        self::assertSame('tw', \Weft\Ext\tlsRead($server, 2));
        // select's cast moves what OpenSSL decrypted into PHP's read buffer: read from there first.
        $read = [$server];
        $write = $except = null;
        self::assertSame(1, \stream_select($read, $write, $except, 0));
        self::assertSame('o,', \Weft\Ext\tlsRead($server, 100));
        self::assertSame('three', \Weft\Ext\tlsRead($server, 100));
        self::assertSame('', \Weft\Ext\tlsRead($server, 100));

        // Writes: from an offset, a length, a record the client reads as such.
        self::assertSame(5, \Weft\Ext\tlsWrite($server, 'xxhelloyy', 2, 5));
        self::assertSame(0, \Weft\Ext\tlsWrite($server, 'hello', 5));
        self::assertSame(2, \Weft\Ext\tlsWrite($server, 'yy', 0));
        $relay(0);
        self::assertSame('hello', $this->readSome($client));
        self::assertSame('yy', $this->readSome($client));
        // A big write goes in part when the socket is full (PHP's partial-write mode), the rest later.
        $big = \str_repeat('z', 8 << 20);
        $sent = \Weft\Ext\tlsWrite($server, $big);
        self::assertGreaterThan(0, $sent);
        self::assertLessThan(\strlen($big), $sent, 'the socket took all of 8 MB?');
        self::assertIsInt(\Weft\Ext\tlsWrite($server, $big, $sent), 'the rest, later: what OpenSSL holds of it first');
        try {
            \Weft\Ext\tlsWrite($server, 'abc', 4);
            self::fail('an offset past the end was taken');
        } catch (\ValueError $e) {
            self::assertStringContainsString('must be within the data', $e->getMessage());
        }

        // The peer's close_notify: the end of the stream.
        \stream_socket_enable_crypto($client, false);
        $relay(0, $relay(29 + 2));
        self::assertFalse(\Weft\Ext\tlsRead($server, 100));
        \fclose($server);
        \fclose($client);
    }

    public function testWhatDoesNotApplyIsRefusedAndABadPairThrows(): void
    {
        \Weft\Ext\tlsContext([[null, ...self::$files['default.test']]], TlsConfig::INTERMEDIATE_CIPHERS, '', 60);
        [$server, $client] = $this->pair();
        \stream_set_blocking($server, true);
        self::assertSame(0, \Weft\Ext\tlsAttach($server), 'a blocking stream');
        $file = \fopen('php://memory', 'r+');
        self::assertSame(0, \Weft\Ext\tlsAttach($file), 'not a socket');
        try {
            \Weft\Ext\tlsContext([[null, self::$files['default.test'][0], self::$files['other.test'][1]]], TlsConfig::INTERMEDIATE_CIPHERS, '', 60);
            self::fail('a key of another certificate was taken');
        } catch (\Exception $e) {
            self::assertStringContainsString('OpenSSL refused the private key', $e->getMessage());
        }
        // The previous context still serves.
        \stream_set_blocking($server, false);
        self::assertSame(1, \Weft\Ext\tlsAttach($server));
    }

    /** @return array{resource, resource} an accepted server stream and its client, both non-blocking */
    private function pair(array $clientSsl = []): array
    {
        $listener = \stream_socket_server('tcp://127.0.0.1:0');
        $client = \stream_socket_client('tcp://' . \stream_socket_get_name($listener, false), $errno, $error, 5, \STREAM_CLIENT_CONNECT,
            \stream_context_create(['ssl' => $clientSsl + ['verify_peer' => false, 'verify_peer_name' => false, 'capture_peer_cert' => true]]));
        $server = \stream_socket_accept($listener, 5);
        \fclose($listener);
        \stream_set_blocking($server, false);
        \stream_set_blocking($client, false);
        return [$server, $client];
    }

    /**
     * Like pair(), with the client's bytes going through the test: the server's socket gets only what
     * the returned relay forwards. $relay(n) waits for n bytes from the client (0: what is there, after
     * a moment) and returns them; $relay(n, $bytes) forwards $bytes to the server instead. The server's
     * answers go back to the client as they come, on every call.
     *
     * @return array{resource, resource, \Closure(int, ?string=): string}
     */
    private function relayed(array $clientSsl): array
    {
        $listener = \stream_socket_server('tcp://127.0.0.1:0');
        $middle = \stream_socket_server('tcp://127.0.0.1:0');
        $client = \stream_socket_client('tcp://' . \stream_socket_get_name($middle, false), $errno, $error, 5, \STREAM_CLIENT_CONNECT,
            // No Nagle: each record leaves at once, as the test writes it.
            \stream_context_create(['socket' => ['tcp_nodelay' => true], 'ssl' => $clientSsl + ['verify_peer' => false, 'verify_peer_name' => false]]));
        $fromClient = \stream_socket_accept($middle, 5);
        $toServer = \stream_socket_client('tcp://' . \stream_socket_get_name($listener, false), $errno, $error, 5);
        $server = \stream_socket_accept($listener, 5);
        \socket_set_option(\socket_import_stream($server), \SOL_TCP, \TCP_NODELAY, 1); // as Weft's own
        \fclose($listener);
        \fclose($middle);
        foreach ([$client, $fromClient, $toServer, $server] as $stream) {
            \stream_set_blocking($stream, false);
        }
        $relay = static function (int $wait, ?string $forward = null) use ($fromClient, $toServer): string {
            for ($i = 0; $i < 50 && ($answer = \fread($toServer, 65536)) !== '' && $answer !== false; $i++) {
                \fwrite($fromClient, $answer);
            }
            if ($forward !== null) {
                \stream_set_blocking($toServer, true);
                \fwrite($toServer, $forward);
                \stream_set_blocking($toServer, false);
                return $forward;
            }
            \usleep(2000);
            $bytes = '';
            for ($i = 0; $i < 1000; $i++) {
                $bytes .= (string) \fread($fromClient, 65536);
                if ($wait > 0 ? \strlen($bytes) >= $wait : $i > 0) {
                    break;
                }
                \usleep(1000);
            }
            return $bytes;
        };
        return [$server, $client, $relay];
    }

    /** Steps both ends until both are done. TLS 1.2 for the client: its session comes with the handshake. */
    private function handshake(mixed $server, mixed $client, mixed $session = null, ?\Closure $relay = null): void
    {
        $serverDone = $clientDone = false;
        for ($i = 0; $i < 1000 && !($serverDone && $clientDone); $i++) {
            if (!$clientDone) {
                $result = \stream_socket_enable_crypto($client, true, \STREAM_CRYPTO_METHOD_TLSv1_2_CLIENT, $session);
                self::assertNotFalse($result, 'client handshake');
                $clientDone = $result === true;
            }
            if ($relay !== null && ($bytes = $relay(0)) !== '') {
                $relay(0, $bytes);
            }
            if (!$serverDone) {
                $result = \stream_socket_enable_crypto($server, true, TlsConfig::METHOD);
                self::assertNotFalse($result, 'server handshake');
                $serverDone = $result === true;
            }
            \usleep(1000);
        }
        self::assertTrue($serverDone && $clientDone);
    }

    private function readSome(mixed $stream): string
    {
        for ($i = 0; $i < 1000; $i++) {
            $data = \fread($stream, 100);
            if ($data !== '' && $data !== false) {
                return $data;
            }
            \usleep(1000);
        }
        self::fail('nothing to read');
    }
}
