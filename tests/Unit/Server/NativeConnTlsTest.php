<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Ext\Conn;
use Weft\Ext\Epoll;
use Weft\Http\Message\Request;
use Weft\Http\Parser\Limits;
use Weft\Loop\Loop;
use Weft\Loop\NativeDriver;
use Weft\Socket\Tls\TlsConfig;

/**
 * Weft\Ext\Conn over TLS (secure(): ext/weft_conn.c with weft_tls.c): a TLS connection's reads and
 * writes through the SSL of the PHP stream the extension set up, on real connections within this
 * process, outside and inside a coroutine. The client's bytes reach the server's socket only through a
 * relay the test drives, so records can sit inside OpenSSL (read-ahead) with nothing left on the socket:
 * what the loop can no longer see must still be read. Also run under valgrind (scripts/ext-memcheck.sh).
 */
final class NativeConnTlsTest extends TestCase
{
    private static string $dir;
    /** @var array{string, string} */
    private static array $files;
    private NativeDriver $loop;

    public static function setUpBeforeClass(): void
    {
        self::$dir = \sys_get_temp_dir() . '/weft-conn-tls-' . \bin2hex(\random_bytes(4));
        \mkdir(self::$dir, 0700);
        $key = \openssl_pkey_new(['private_key_type' => \OPENSSL_KEYTYPE_EC, 'curve_name' => 'prime256v1']);
        $cert = \openssl_csr_sign(\openssl_csr_new(['commonName' => 'conn.test'], $key), null, $key, 1);
        \openssl_x509_export_to_file($cert, self::$dir . '/cert.pem');
        \openssl_pkey_export_to_file($key, self::$dir . '/key.pem');
        self::$files = [self::$dir . '/cert.pem', self::$dir . '/key.pem'];
    }

    public static function tearDownAfterClass(): void
    {
        \array_map('unlink', \glob(self::$dir . '/*') ?: []);
        @\rmdir(self::$dir);
    }

    protected function setUp(): void
    {
        if (!\class_exists(Conn::class, false) || !\function_exists('Weft\Ext\tlsAttach')) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $driver = Loop::reset('epoll');
        if (!$driver instanceof NativeDriver) {
            self::markTestSkipped('not the native loop');
        }
        $this->loop = $driver;
        // The start-up layout check the worker makes (tlsAttach() refuses until it passed), then the context.
        [$server, $client] = $this->pair();
        self::assertSame(1, \Weft\Ext\tlsShareTickets($server, TlsConfig::METHOD, 60));
        \fclose($server);
        \fclose($client);
        \Weft\Ext\tlsContext([[null, ...self::$files]], TlsConfig::INTERMEDIATE_CIPHERS, '', 60);
    }

    protected function tearDown(): void
    {
        Loop::reset();
    }

    /** Runs $body outside, then inside a coroutine (on a fresh loop each time). */
    private function both(\Closure $body): void
    {
        self::assertNull(\Weft\current());
        $body();
        $this->loop = Loop::reset('epoll');
        \Weft\run(static function () use ($body): void {
            self::assertNotNull(\Weft\current(), 'inside a coroutine');
            $body();
        });
    }

    /** Runs the loop until $done says so, or 5 s (a stall) pass. */
    private function runUntil(\Closure $done, float $limit = 5.0): void
    {
        $check = $this->loop->repeat(0.001, function () use ($done): void {
            if ($done()) {
                $this->loop->stop();
            }
        });
        $timer = $this->loop->delay($limit, fn () => $this->loop->stop());
        $this->loop->run();
        $this->loop->cancel($check);
        $this->loop->cancel($timer);
    }

    /** @return array{resource, resource, \Closure, Conn, \ArrayObject<int, mixed>} server, client, relay, its Conn (secure), what the callback got */
    private function secured(): array
    {
        [$server, $client, $relay] = $this->relayed();
        self::assertSame(1, \Weft\Ext\tlsAttach($server));
        $this->handshake($server, $client, $relay);
        $got = new \ArrayObject();
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), static function (string|false $data, ?Request $request = null) use ($got): void {
            $got[] = $request === null ? $data : [$data, $request];
        });
        self::assertTrue($conn->secure($server));
        return [$server, $client, $relay, $conn, $got];
    }

    public function testSecureTakesOnlyAnAttachedStreamWhoseHandshakeIsDone(): void
    {
        $noop = static function (): void {
        };
        // Plain TCP.
        [$server, $client] = $this->pair();
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), $noop);
        self::assertFalse($conn->secure($server));
        $conn->close();
        // Attached, mid-handshake.
        [$server, $client, $relay] = $this->relayed();
        self::assertSame(1, \Weft\Ext\tlsAttach($server));
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), $noop);
        self::assertFalse($conn->secure($server), 'mid-handshake: the PHP path drives it');
        $conn->close();
        $this->handshake($server, $client, $relay);
        $fd = (int) Epoll::descriptorOf($server);
        // Its own copy of the descriptor: the SSL is bound to the stream's.
        $conn = new Conn($this->loop, $fd, $noop, true);
        self::assertFalse($conn->secure($server));
        $conn->close();
        // Another socket's descriptor.
        [$other] = $this->pair();
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($other), $noop);
        self::assertFalse($conn->secure($server));
        $conn->close();
        // Bytes already in PHP's read buffer would be lost to a reader below it.
        \fwrite($client, 'buffered in PHP');
        $relay(0, $relay(5 + 8 + 15 + 16));
        self::assertSame('buf', $this->readSome($server, 3));
        $conn = new Conn($this->loop, $fd, $noop);
        self::assertFalse($conn->secure($server));
        self::assertSame('fered in PHP', $this->readSome($server, 100));
        self::assertTrue($conn->secure($server), 'now it may');
        self::assertFalse($conn->secure($server), 'once');
        $conn->close();
        self::assertSame(0, $this->loop->watcherCount()['total']);
        // PHP's own TLS (its context: no read-ahead, not the extension's).
        [$server, $client] = $this->pair(['local_cert' => self::$files[0], 'local_pk' => self::$files[1]]);
        $this->handshake($server, $client);
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), $noop);
        self::assertFalse($conn->secure($server));
        $conn->close();
        try {
            $conn->secure('not a stream');
            self::fail('a string was taken');
        } catch (\TypeError) {
        }
    }

    public function testRecordsAreReadAndWrittenThroughOpenSslWhatItHoldsIncluded(): void
    {
        $this->both(function (): void {
            [$server, $client, $relay] = $this->relayed();
            self::assertSame(1, \Weft\Ext\tlsAttach($server));
            $this->handshake($server, $client, $relay);
            // Three records, taken from the socket by OpenSSL before Conn is there (as a TLS 1.3 client's
            // first requests come with its Finished): nothing on the socket tells the loop of them.
            foreach (['one,', 'two,', 'three'] as $record) {
                \fwrite($client, $record);
            }
            $relay(0, $relay(3 * 29 + 13));
            // The handshake's last read, as it were: PHP's read takes a record, OpenSSL read the others ahead.
            self::assertSame('one,', $this->readSome($server, 100));
            $got = [];
            $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), function (string|false $data) use (&$got): void {
                $got[] = $data;
            });
            self::assertTrue($conn->secure($server));
            $this->runUntil(static function () use (&$got): bool {
                return $got !== [];
            });
            self::assertSame(['two,three'], $got, 'every record OpenSSL held, in one read');

            // Then from the socket, as it comes.
            \fwrite($client, 'four');
            $relay(0, $relay(29));
            $this->runUntil(static function () use (&$got): bool {
                return \count($got) === 2;
            });
            self::assertSame('four', $got[1]);

            // Writes: an offset and a length, each call a record the client reads as such.
            self::assertSame(5, $conn->write('xxhelloyy', 2, 5));
            self::assertSame(0, $conn->write('hello', 5));
            self::assertSame(2, $conn->write('yy'));
            $answer = '';
            for ($i = 0; $i < 100 && \strlen($answer) < 7; $i++) {
                $relay(0);
                $answer .= (string) \fread($client, 100);
            }
            self::assertSame('helloyy', $answer);

            // The peer's close_notify: the end ('').
            \stream_socket_enable_crypto($client, false);
            $relay(0, $relay(29 + 2));
            $this->runUntil(static function () use (&$got): bool {
                return \count($got) === 3;
            });
            self::assertSame('', $got[2]);
            $conn->close();
            self::assertSame(-9, $conn->write('after close'), '-EBADF');
            self::assertSame(0, $this->loop->watcherCount()['total']);
            \fclose($server);
            \fclose($client);
        });
    }

    public function testReadingTurnedBackOnReadsWhatOpenSslHolds(): void
    {
        $this->both(function (): void {
            [$server, $client, $relay, $conn, $got] = $this->secured();
            $conn->read(false);
            foreach (['held', ' while', ' off'] as $record) {
                \fwrite($client, $record);
            }
            $relay(0, $relay(29 * 3 + 6 + 6));
            // Something reads the first record through the stream: OpenSSL takes the others from the socket.
            self::assertSame('held', $this->readSome($server, 4));
            $this->runUntil(static fn () => false, 0.05);
            self::assertSame([], $got->getArrayCopy(), 'reading is off');
            $conn->read(true);
            $this->runUntil(static fn () => \count($got) > 0);
            self::assertSame([' while off'], $got->getArrayCopy());
            $conn->close();
            \fclose($server);
            \fclose($client);
        });
    }

    public function testMoreThanOneReadHoldsComesInReadsOf64KiBWithoutTheSocketsHelp(): void
    {
        [$server, $client, $relay, $conn, $got] = $this->secured();
        // 200 KB in 16 KB records, all taken into the server's socket before the loop looks.
        $body = \str_repeat('0123456789abcdef', 200000 / 16);
        \stream_set_blocking($client, true);
        \fwrite($client, $body);
        \stream_set_blocking($client, false);
        $wire = '';
        while (\strlen($wire) < \strlen($body)) {
            $wire .= $relay(1);
        }
        $relay(0, $wire);
        $this->runUntil(static fn () => \strlen(\implode('', $got->getArrayCopy())) >= \strlen($body));
        $reads = $got->getArrayCopy();
        self::assertSame($body, \implode('', $reads));
        self::assertSame(65536, \strlen($reads[0]), 'a read takes 64 KiB at most');
        $conn->close();
        \fclose($server);
        \fclose($client);
    }

    public function testABigWriteGoesInPartsAndIsRetriedFromAnotherCopyOfTheSameBytes(): void
    {
        $this->both(function (): void {
            [$server, $client] = $this->pair();
            self::assertSame(1, \Weft\Ext\tlsAttach($server));
            $this->handshake($server, $client);
            $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), static function (): void {
            });
            self::assertTrue($conn->secure($server));
            $big = \str_repeat('z', 8 << 20);
            $sent = $conn->write($big);
            self::assertGreaterThan(0, $sent);
            self::assertLessThan(\strlen($big), $sent, 'the socket took all of 8 MB?');
            $received = 0;
            for ($i = 0; $i < 100000 && $received < \strlen($big); $i++) {
                if ($sent < \strlen($big)) {
                    // Another string with the same bytes, as a connection's queue may hand over: the
                    // moving-buffer mode lets a retry come from it.
                    $taken = $conn->write(\str_repeat('z', \strlen($big) - $sent));
                    self::assertGreaterThanOrEqual(0, $taken);
                    $sent += $taken;
                }
                // Drain what arrived (a TLS read gives one record at a time) before the next retry.
                $drained = 0;
                while (($data = (string) \fread($client, 1 << 20)) !== '') {
                    $drained += \strlen($data);
                    self::assertSame(\strlen($data), \substr_count($data, 'z'));
                }
                $received += $drained;
                if ($drained === 0) {
                    \usleep(100);
                }
            }
            self::assertSame(\strlen($big), $received);
            $conn->close();
            \fclose($server);
            \fclose($client);
        });
    }

    public function testTheEndsOfAConnection(): void
    {
        // A record that fails to decrypt: an error (false), once.
        [$server, $client, $relay, $conn, $got] = $this->secured();
        $relay(0, "\x17\x03\x03\x00\x20" . \str_repeat("\x55", 32));
        $this->runUntil(static fn () => \count($got) > 0);
        self::assertSame([false], $got->getArrayCopy());
        $conn->close();
        \fclose($server);
        \fclose($client);

        // The peer gone in the middle of a record: the end or an error, never a stall.
        [$server, $client, $relay, $conn, $got] = $this->secured();
        \fwrite($client, 'cut short');
        $relay(0, \substr($relay(29 + 5), 0, 20));
        $relay(-1); // closes the relay's side towards the server
        $this->runUntil(static fn () => \count($got) > 0);
        self::assertContains($got[0], ['', false]);
        $conn->close();
        \fclose($server);
        \fclose($client);

        // The stream closed behind its back: "gone", never a read of a freed SSL.
        [$server, $client, $relay, $conn, $got] = $this->secured();
        \fclose($server);
        self::assertSame(-9, $conn->write('x'), '-EBADF');
        $conn->close();
        \fclose($client);

        // Dropped without close(), a deferred read queued: nothing left on the loop, the stream still the caller's.
        [$server, $client, $relay] = $this->relayed();
        self::assertSame(1, \Weft\Ext\tlsAttach($server));
        $this->handshake($server, $client, $relay);
        \fwrite($client, 'first');
        \fwrite($client, 'pending');
        $relay(0, $relay(29 * 2 + 4));
        self::assertSame('first', $this->readSome($server, 100));
        $conn = new Conn($this->loop, (int) Epoll::descriptorOf($server), static function (): void {
        });
        self::assertTrue($conn->secure($server));
        self::assertSame(2, $this->loop->watcherCount()['total'], 'its read watcher and a deferred read');
        unset($conn);
        self::assertSame(0, $this->loop->watcherCount()['total']);
        self::assertSame('pending', $this->readSome($server, 100));
        \fclose($server);
        \fclose($client);
    }

    public function testAReadThatIsOneWholeHeadComesWithItsRequestOverTlsToo(): void
    {
        self::assertNull(\Weft\Ext\checkRequestLayout(Request::class));
        $limits = new Limits();
        [$server, $client, $relay, $conn, $got] = $this->secured();
        $conn->frameRequests($limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet, '192.0.2.7');
        $head = "GET /tls HTTP/1.1\r\nHost: x\r\n\r\n";
        \fwrite($client, $head);
        $relay(0, $relay(\strlen($head) + 24));
        $this->runUntil(static fn () => \count($got) > 0);
        // Read over TLS: the Request says "https", exactly as overTls() makes it in PHP.
        self::assertEquals([[$head, (new Request('GET', '/tls', "\r\nHost: x", '', '1.1', '192.0.2.7'))->overTls()]], $got->getArrayCopy());
        self::assertSame('https', $got[0][1]->scheme());
        $conn->close();
        \fclose($server);
        \fclose($client);
    }

    /** @return array{resource, resource} an accepted server stream and its client, both non-blocking */
    private function pair(array $serverSsl = []): array
    {
        $listener = \stream_socket_server('tcp://127.0.0.1:0', $errno, $error, \STREAM_SERVER_BIND | \STREAM_SERVER_LISTEN, \stream_context_create(['ssl' => $serverSsl]));
        $client = \stream_socket_client('tcp://' . \stream_socket_get_name($listener, false), $errno, $error, 5, \STREAM_CLIENT_CONNECT,
            \stream_context_create(['ssl' => ['verify_peer' => false, 'verify_peer_name' => false]]));
        $server = \stream_socket_accept($listener, 5);
        \fclose($listener);
        \stream_set_blocking($server, false);
        \stream_set_blocking($client, false);
        return [$server, $client];
    }

    /**
     * Like pair(), with the client's bytes going through the test: the server's socket gets only what
     * the returned relay forwards. $relay(n) waits for n bytes from the client (0: what is there, after
     * a moment) and returns them; $relay(n, $bytes) forwards $bytes to the server instead; $relay(-1)
     * closes the relay's socket towards the server. The server's answers go back to the client as they
     * come, on every call.
     *
     * @return array{resource, resource, \Closure(int, ?string=): string}
     */
    private function relayed(): array
    {
        $listener = \stream_socket_server('tcp://127.0.0.1:0');
        $middle = \stream_socket_server('tcp://127.0.0.1:0');
        $client = \stream_socket_client('tcp://' . \stream_socket_get_name($middle, false), $errno, $error, 5, \STREAM_CLIENT_CONNECT,
            \stream_context_create(['socket' => ['tcp_nodelay' => true], 'ssl' => ['verify_peer' => false, 'verify_peer_name' => false]]));
        $fromClient = \stream_socket_accept($middle, 5);
        $toServer = \stream_socket_client('tcp://' . \stream_socket_get_name($listener, false), $errno, $error, 5);
        $server = \stream_socket_accept($listener, 5);
        \fclose($listener);
        \fclose($middle);
        foreach ([$client, $fromClient, $toServer, $server] as $stream) {
            \stream_set_blocking($stream, false);
        }
        $relay = static function (int $wait, ?string $forward = null) use ($fromClient, $toServer): string {
            if ($wait < 0) {
                \fclose($toServer);
                return '';
            }
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

    /** Steps both ends until both are done (TLS 1.2: the records' sizes above are 1.2's AES-GCM ones). */
    private function handshake(mixed $server, mixed $client, ?\Closure $relay = null): void
    {
        $serverDone = $clientDone = false;
        for ($i = 0; $i < 1000 && !($serverDone && $clientDone); $i++) {
            if (!$clientDone) {
                $result = \stream_socket_enable_crypto($client, true, \STREAM_CRYPTO_METHOD_TLSv1_2_CLIENT);
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

    private function readSome(mixed $stream, int $length): string
    {
        for ($i = 0; $i < 1000; $i++) {
            $data = \fread($stream, $length);
            if ($data !== '' && $data !== false) {
                return $data;
            }
            \usleep(1000);
        }
        self::fail('nothing to read');
    }
}
