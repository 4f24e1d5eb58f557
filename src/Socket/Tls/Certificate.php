<?php

declare(strict_types=1);

namespace Weft\Socket\Tls;

/**
 * One certificate (chain) and its private key, PEM files, and the server name it answers for (null:
 * the default, sent to a client that names no host or one no other certificate is for).
 */
final class Certificate
{
    public function __construct(
        public readonly ?string $name,
        public readonly string $certFile,
        public readonly string $keyFile,
    ) {
    }

    /**
     * Reads both files and checks that they belong together, the way OpenSSL will use them: the first
     * certificate of the chain file against the private key.
     *
     * @return array{notAfter: int, subject: string} what the log says about it
     * @throws TlsConfigError naming the file and what is wrong with it
     */
    public function check(): array
    {
        return $this->checkContents(...$this->contents());
    }

    /**
     * The files' contents, read once: what is checked is what is served (PinnedFiles).
     *
     * @return array{string, string} the certificate file's and the key file's
     * @throws TlsConfigError
     */
    public function contents(): array
    {
        $for = $this->name === null ? '' : " (for {$this->name})";
        $pem = self::read($this->certFile, 'certificate' . $for);
        return [$pem, $this->keyFile === $this->certFile ? $pem : self::read($this->keyFile, 'key' . $for)];
    }

    /**
     * check() on contents already read.
     *
     * @return array{notAfter: int, subject: string}
     * @throws TlsConfigError
     */
    public function checkContents(string $pem, string $keyPem): array
    {
        $for = $this->name === null ? '' : " (for {$this->name})";
        $certificate = @\openssl_x509_read($pem);
        if ($certificate === false) {
            self::clearErrors();
            throw new TlsConfigError("TLS certificate {$this->certFile}{$for} holds no PEM certificate");
        }
        $key = @\openssl_pkey_get_private($keyPem);
        if ($key === false) {
            self::clearErrors();
            throw new TlsConfigError(\str_contains($keyPem, 'ENCRYPTED')
                ? "TLS key {$this->keyFile}{$for} is encrypted: give it without a passphrase (openssl pkey -in KEY -out KEY.plain)"
                : "TLS key {$this->keyFile}{$for} holds no PEM private key");
        }
        if (!\openssl_x509_check_private_key($certificate, $key)) {
            self::clearErrors();
            throw new TlsConfigError("TLS key {$this->keyFile} does not match certificate {$this->certFile}{$for}");
        }
        $info = \openssl_x509_parse($certificate) ?: [];
        return ['notAfter' => (int) ($info['validTo_time_t'] ?? 0), 'subject' => (string) ($info['subject']['CN'] ?? '')];
    }

    private static function read(string $file, string $what): string
    {
        if (!\is_file($file)) {
            throw new TlsConfigError("TLS $what file $file not found");
        }
        $contents = @\file_get_contents($file);
        if ($contents === false) {
            throw new TlsConfigError("TLS $what file $file is not readable");
        }
        return $contents;
    }

    private static function clearErrors(): void
    {
        while (\openssl_error_string() !== false) {
        }
    }
}
