<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Socket\Tls;

use Weft\Socket\Listener;
use Weft\Socket\Socket;
use Weft\Socket\Tls\TlsConfig;
use Weft\Socket\TlsException;
use Weft\Tests\Unit\Coroutine\CoroutineTestCase;

use function Weft\go;
use function Weft\run;

/** The coroutine-style API: Listener::useTls() and Socket::enableServerTls() in the coroutine serving each connection. */
final class ListenerTlsTest extends CoroutineTestCase
{
    public function testEachHandshakeRunsInItsOwnCoroutineAndAStalledOneTimesOut(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-listener-tls-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        $key = \openssl_pkey_new(['private_key_type' => \OPENSSL_KEYTYPE_EC, 'curve_name' => 'prime256v1']);
        \openssl_x509_export_to_file(\openssl_csr_sign(\openssl_csr_new(['commonName' => 'localhost'], $key), null, $key, 1), "$dir/cert.pem");
        \openssl_pkey_export_to_file($key, "$dir/key.pem");
        try {
            $outcome = run(static function () use ($dir): array {
                $listener = Listener::listen('127.0.0.1:0');
                $listener->useTls(TlsConfig::fromOptions(["$dir/cert.pem"], ["$dir/key.pem"]));
                $outcome = [];
                $server = go(static function () use ($listener, &$outcome): void {
                    $handlers = [];
                    for ($i = 0; $i < 2; $i++) {
                        $connection = $listener->accept();
                        $handlers[] = go(static function () use ($connection, &$outcome): void {
                            try {
                                $session = $connection->enableServerTls(0.5);
                                $outcome[] = 'served ' . $connection->readLine() . " over {$session->version}";
                                $connection->write("pong\n");
                            } catch (TlsException $e) {
                                $outcome[] = $e->getMessage();
                            }
                            $connection->close();
                        });
                    }
                    foreach ($handlers as $handler) {
                        $handler->join();
                    }
                });
                $stalled = Socket::connect($listener->address()); // says nothing
                $client = Socket::connect($listener->address());
                $client->enableClientTls('localhost', ['cafile' => "$dir/cert.pem"]);
                $client->write("ping\n");
                $outcome[] = 'client got ' . $client->readLine();
                $server->join();
                $stalled->close();
                $client->close();
                $listener->close();
                return $outcome;
            });
        } finally {
            \array_map('unlink', \glob("$dir/*") ?: []);
            \rmdir($dir);
        }
        self::assertSame(['served ping over TLSv1.3', 'client got pong', 'TLS handshake timed out'], $outcome);
    }
}
