<?php

declare(strict_types=1);

namespace Weft\Socket\Tls;

/**
 * What the server's TLS needs: its certificates (the first is the default, the others are chosen by the
 * server name the client sends, SNI), the handshake timeout, the protocols offered by ALPN and the
 * cipher policy. Immutable; checked (check()) in the master at start-up and again in every worker that
 * loads it, so a reload picks up renewed files and refuses a key that does not match.
 */
final class TlsConfig
{
    public const DEFAULT_HANDSHAKE_TIMEOUT = 10.0;

    /**
     * Mozilla's "intermediate" configuration (v5.7) for TLS 1.2; TLS 1.3 uses OpenSSL's three default
     * suites, which are that policy's list. The DHE suites use the RFC 7919 ffdhe2048 group shipped here.
     */
    public const INTERMEDIATE_CIPHERS = 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:'
        . 'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:'
        . 'ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305';

    /** TLS 1.2 and 1.3, nothing older (the intermediate policy). */
    public const METHOD = \STREAM_CRYPTO_METHOD_TLSv1_2_SERVER | \STREAM_CRYPTO_METHOD_TLSv1_3_SERVER;

    /**
     * @param list<Certificate> $certificates the default first (name null), then one per server name
     * @param list<string> $alpn protocols offered, most preferred first: only what is served
     */
    public function __construct(
        public readonly array $certificates,
        public readonly float $handshakeTimeout = self::DEFAULT_HANDSHAKE_TIMEOUT,
        public readonly array $alpn = ['http/1.1'],
        public readonly string $ciphers = self::INTERMEDIATE_CIPHERS,
        /** One per server instance: what lets a ticket from one worker resume on another (TicketKeys). */
        public readonly ?TicketKeys $tickets = null,
    ) {
        if ($certificates === [] || $certificates[0]->name !== null) {
            throw new \InvalidArgumentException('TLS needs a default certificate (one without a server name) first');
        }
        if ($handshakeTimeout <= 0) {
            throw new \InvalidArgumentException('The TLS handshake timeout must be positive');
        }
    }

    /**
     * From --tls-cert and --tls-key: each entry is FILE (the default certificate) or NAME=FILE (the one
     * for server name NAME, "*.example.org" for its subdomains). A certificate without a key entry of
     * the same name holds its key in the same file.
     *
     * @param list<string> $certs
     * @param list<string> $keys
     * @param list<string> $alpn the protocols served, most preferred first (["h2", "http/1.1"] with HTTP/2)
     * @throws \InvalidArgumentException naming the entry at fault
     */
    public static function fromOptions(array $certs, array $keys, float $handshakeTimeout = self::DEFAULT_HANDSHAKE_TIMEOUT, ?string $ciphers = null, array $alpn = ['http/1.1']): self
    {
        $certFiles = self::byName($certs, '--tls-cert');
        $keyFiles = self::byName($keys, '--tls-key');
        if (!isset($certFiles[''])) {
            throw new \InvalidArgumentException("option '--tls-cert' needs a default certificate: a FILE without NAME=");
        }
        foreach ($keyFiles as $name => $file) {
            if (!isset($certFiles[$name])) {
                throw new \InvalidArgumentException($name === ''
                    ? "option '--tls-key' gives a default key ($file) but '--tls-cert' no default certificate"
                    : "option '--tls-key' gives a key for $name, which '--tls-cert' has no certificate for");
            }
        }
        $list = [];
        foreach ($certFiles as $name => $file) {
            $list[] = new Certificate($name === '' ? null : (string) $name, $file, $keyFiles[$name] ?? $file);
        }
        return new self($list, $handshakeTimeout, $alpn, $ciphers ?? self::INTERMEDIATE_CIPHERS, TicketKeys::generate());
    }

    /**
     * Checks every certificate against its key.
     *
     * @return list<string> one line per certificate, for the log
     * @throws TlsConfigError
     */
    public function check(): array
    {
        $lines = [];
        foreach ($this->certificates as $certificate) {
            $info = $certificate->check();
            $lines[] = \sprintf('%s: %s (CN %s, valid until %s)', $certificate->name ?? 'default', $certificate->certFile, $info['subject'] ?: '-', \gmdate('Y-m-d', $info['notAfter']));
        }
        return $lines;
    }

    /**
     * One handshake through PHP's own TLS layer on a loopback connection, with these options: what the
     * file checks cannot see (a --tls-ciphers list OpenSSL refuses, a certificate it cannot use with
     * TLS 1.2 and 1.3) stops the start instead of failing every connection.
     *
     * @throws TlsConfigError
     */
    public function selfTest(): void
    {
        $server = @\stream_socket_server('tcp://127.0.0.1:0', $errno, $error, \STREAM_SERVER_BIND | \STREAM_SERVER_LISTEN, \stream_context_create(['ssl' => $this->contextOptions()]));
        if ($server === false) {
            return; // no loopback: nothing to learn here
        }
        $client = @\stream_socket_client('tcp://' . \stream_socket_get_name($server, false), $errno, $error, 2.0, \STREAM_CLIENT_CONNECT,
            \stream_context_create(['ssl' => ['verify_peer' => false, 'verify_peer_name' => false]]));
        $accepted = $client === false ? false : @\stream_socket_accept($server, 2.0);
        \fclose($server);
        if ($accepted === false) {
            return;
        }
        \stream_set_blocking($client, false);
        \stream_set_blocking($accepted, false);
        $failure = null;
        $serverDone = $clientDone = false;
        $deadline = \microtime(true) + 5.0;
        while (!($serverDone && $clientDone) && $failure === null && \microtime(true) < $deadline) {
            foreach ([[$client, \STREAM_CRYPTO_METHOD_TLS_CLIENT, &$clientDone], [$accepted, self::METHOD, &$serverDone]] as [$stream, $method, &$done]) {
                if (!$done) {
                    \error_clear_last();
                    $result = @\stream_socket_enable_crypto($stream, true, $method);
                    if ($result === false) {
                        // A cipher list OpenSSL refuses fails PHP's setup without a warning.
                        $failure = \error_get_last()['message']
                            ?? ($this->ciphers !== self::INTERMEDIATE_CIPHERS ? "OpenSSL refused it: check --tls-ciphers '{$this->ciphers}'" : 'OpenSSL refused it');
                        break;
                    }
                    $done = $result === true;
                }
            }
            unset($done);
            if (!($serverDone && $clientDone)) {
                \usleep(1000);
            }
        }
        \fclose($client);
        \fclose($accepted);
        while (\openssl_error_string() !== false) {
        }
        \error_clear_last();
        if ($failure !== null || !$serverDone) {
            throw new TlsConfigError('A TLS handshake with these certificates and settings fails: ' . \preg_replace('/^stream_socket_enable_crypto\(\): /', '', $failure ?? 'it did not complete'));
        }
    }

    /**
     * The "ssl" stream context options that PHP's OpenSSL layer applies to each accepted connection
     * (it builds an SSL_CTX per connection from them, reading the files each time). With $pinned, the
     * files are read and checked once and private copies are served (see PinnedFiles).
     *
     * @throws TlsConfigError
     * @return array<string, mixed>
     */
    public function contextOptions(?PinnedFiles $pinned = null): array
    {
        $files = [];
        foreach ($this->certificates as $i => $certificate) {
            if ($pinned === null) {
                $files[$i] = [$certificate->certFile, $certificate->keyFile];
                continue;
            }
            [$pem, $keyPem] = $certificate->contents();
            $certificate->checkContents($pem, $keyPem);
            $files[$i] = [$pinned->pin($pem, "$i.crt"), $pinned->pin($keyPem, "$i.key")];
        }
        $options = [
            'local_cert' => $files[0][0],
            'local_pk' => $files[0][1],
            // A server does not ask for client certificates.
            'verify_peer' => false,
            'verify_peer_name' => false,
            'ciphers' => $this->ciphers,
            // Mozilla intermediate: the client's order (it knows whether it has AES hardware).
            'honor_cipher_order' => false,
            'disable_compression' => true,
            'single_dh_use' => true,
            'dh_param' => __DIR__ . '/ffdhe2048.pem',
            'alpn_protocols' => \implode(',', $this->alpn),
            'crypto_method' => self::METHOD,
            'SNI_enabled' => true,
        ];
        $named = [];
        foreach (\array_slice($this->certificates, 1, null, true) as $i => $certificate) {
            $named[$certificate->name] = ['local_cert' => $files[$i][0], 'local_pk' => $files[$i][1]];
        }
        if ($named !== []) {
            $options['SNI_server_certs'] = $named;
        }
        return $options;
    }

    /** @return array<string, string> file by server name ('' for the default) */
    private static function byName(array $entries, string $option): array
    {
        $files = [];
        foreach ($entries as $entry) {
            $name = '';
            $file = $entry;
            $equals = \strpos($entry, '=');
            if ($equals !== false) {
                $name = \strtolower(\substr($entry, 0, $equals));
                $file = \substr($entry, $equals + 1);
                if ($name === '' || !\preg_match('/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/', $name)) {
                    throw new \InvalidArgumentException("option '$option': '$entry' does not start with a server name (NAME=FILE)");
                }
            }
            if ($file === '') {
                throw new \InvalidArgumentException("option '$option': '$entry' names no file");
            }
            if (isset($files[$name])) {
                throw new \InvalidArgumentException("option '$option' gives two files for " . ($name === '' ? 'the default' : $name));
            }
            // Absolute now: a daemon's workers do not run from the directory the command was typed in.
            $files[$name] = \str_starts_with($file, '/') ? $file : \getcwd() . '/' . $file;
        }
        return $files;
    }
}
