<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

/**
 * A certificate authority made for one test with the openssl command, and server certificates it signs
 * (PEM files in a directory of their own, removed at the end): what curl --cacert and openssl s_client
 * -CAfile trust.
 */
final class TestCa
{
    public readonly string $dir;
    public readonly string $caFile;
    private int $serial = 1;

    public function __construct()
    {
        $this->dir = \sys_get_temp_dir() . '/weft-test-ca-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700);
        $this->caFile = $this->dir . '/ca.pem';
        self::run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', $this->dir . '/ca.key', '-out', $this->caFile,
            '-days', '2', '-subj', '/CN=Weft Test CA']);
    }

    /**
     * A key and a certificate for $names (the first is the CN; every one a SAN, 127.0.0.1 too).
     *
     * @return array{cert: string, key: string, serial: string} the files, and the certificate's serial in hex
     */
    public function issue(string $file, array $names = ['localhost'], ?string $key = null): array
    {
        $key ??= $this->dir . "/$file.key";
        if (!\is_file($key)) {
            self::run(['openssl', 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', $key]);
        }
        // A leading 1: no leading zero for openssl to drop when it prints the serial.
        $serial = \sprintf('1%03X%s', $this->serial++, \strtoupper(\bin2hex(\random_bytes(4))));
        $extensions = $this->dir . "/$file.ext";
        \file_put_contents($extensions, 'subjectAltName=' . \implode(',', [...\array_map(static fn ($n) => "DNS:$n", $names), 'IP:127.0.0.1']) . "\n");
        self::run(['openssl', 'req', '-new', '-key', $key, '-out', $this->dir . "/$file.csr", '-subj', '/CN=' . $names[0]]);
        self::run(['openssl', 'x509', '-req', '-in', $this->dir . "/$file.csr", '-CA', $this->caFile, '-CAkey', $this->dir . '/ca.key',
            '-set_serial', '0x' . $serial, '-days', '2', '-out', $this->dir . "/$file.pem", '-extfile', $extensions]);
        return ['cert' => $this->dir . "/$file.pem", 'key' => $key, 'serial' => $serial];
    }

    /** A fresh private key that matches no certificate. */
    public function strayKey(string $file): string
    {
        $key = $this->dir . "/$file.key";
        self::run(['openssl', 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', $key]);
        return $key;
    }

    /**
     * openssl s_client against 127.0.0.1:$port with $args; what it printed (stdout and stderr) and its exit code.
     *
     * @param list<string> $args
     * @return array{int, string}
     */
    public function sClient(int $port, array $args, string $send = "Q\n"): array
    {
        $process = \proc_open(
            ['openssl', 's_client', '-connect', "127.0.0.1:$port", '-CAfile', $this->caFile, ...$args],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]],
            $pipes,
        );
        \fwrite($pipes[0], $send);
        \fclose($pipes[0]);
        $output = (string) \stream_get_contents($pipes[1]);
        \fclose($pipes[1]);
        return [\proc_close($process), $output];
    }

    /** The serial number (hex, capitals) of the certificate the server at $port sends for $serverName. */
    public function servedSerial(int $port, string $serverName = 'localhost'): string
    {
        [, $output] = $this->sClient($port, ['-servername', $serverName, '-showcerts']);
        if (\preg_match('/-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----/s', $output, $m) !== 1) {
            throw new \RuntimeException("No certificate from port $port:\n$output");
        }
        return \strtoupper(\openssl_x509_parse($m[0])['serialNumberHex']);
    }

    public function __destruct()
    {
        foreach ((array) \glob($this->dir . '/*') as $file) {
            @\unlink($file);
        }
        @\rmdir($this->dir);
    }

    /** @param list<string> $command */
    private static function run(array $command): void
    {
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        $output = (string) \stream_get_contents($pipes[1]);
        \fclose($pipes[1]);
        if (\proc_close($process) !== 0) {
            throw new \RuntimeException(\implode(' ', $command) . " failed:\n$output");
        }
    }
}
