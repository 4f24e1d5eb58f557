<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

use Weft\Http\Message\HeaderField;
use Weft\Http\Message\Response;

/**
 * Sends a Weft Response through the SAPI, as ResponseEncoder does on a socket. nginx owns the
 * connection, so the hop-by-hop framing fields (Connection, Transfer-Encoding, Keep-Alive) are its
 * business and never passed on; a string body gets its real Content-Length, and a streamed body
 * goes out chunk by chunk with "X-Accel-Buffering: no", which tells nginx not to hold it back.
 */
final class SapiEmitter
{
    private const DROPPED = ['content-length' => true, 'transfer-encoding' => true, 'connection' => true, 'keep-alive' => true];

    private readonly SapiOutput $output;

    public function __construct(?SapiOutput $output = null)
    {
        $this->output = $output ?? new PhpSapiOutput();
    }

    /**
     * @param bool $isHead the request was HEAD: the fields describe the body, which is not sent
     * @throws \InvalidArgumentException before anything is sent, when a header could not go on the wire
     * @throws StreamFailed when a streamed response's producer throws, after the head was sent
     */
    public function emit(Response $response, bool $isHead = false): void
    {
        $status = $response->status();
        if ($status < 200) {
            // 1xx are interim answers of the server's own (100-continue), never a final response.
            throw new \InvalidArgumentException("Status $status is not a final response");
        }
        $lines = self::lines($response);
        $hasBody = $status >= 200 && $status !== 204 && $status !== 304;
        $length = $response->header('content-length');
        if ($length !== null && \preg_match('/\A\d{1,19}\z/', $length) !== 1) {
            throw new \InvalidArgumentException(\sprintf('Invalid Content-Length "%s"', \addcslashes($length, "\0..\37\177..\377")));
        }
        if ($response->isStreamed()) {
            $lines[] = 'X-Accel-Buffering: no';
            if ($length !== null && $status >= 200 && $status !== 204) {
                $lines[] = 'Content-Length: ' . $length;
            }
        } elseif ($hasBody) {
            $lines[] = 'Content-Length: ' . ($isHead && $length !== null ? $length : \strlen($response->body()));
        } elseif ($status === 304 && $length !== null) {
            $lines[] = 'Content-Length: ' . $length;
        }

        $this->output->status($status, $response->hasCustomReason() ? $response->reason() : '');
        foreach ($lines as $line) {
            $this->output->header($line);
        }
        if ($isHead || !$hasBody) {
            return;
        }
        if (!$response->isStreamed()) {
            $body = $response->body();
            if ($body !== '') {
                $this->output->write($body);
            }
            return;
        }
        $this->output->flush();
        $declared = $length === null ? null : (int) $length;
        $writer = new SapiBodyWriter($this->output, $declared);
        try {
            ($response->producer())($writer);
        } catch (\Throwable $e) {
            throw StreamFailed::after($e);
        }
        if ($declared !== null && $writer->dropped() > 0) {
            throw StreamFailed::framing(\sprintf(
                'The streamed body exceeded its Content-Length of %d by %d byte(s); the excess was not sent',
                $declared,
                $writer->dropped(),
            ));
        }
        if ($declared !== null && $writer->written() < $declared) {
            // nginx sees the upstream response end short and closes the client's connection.
            throw StreamFailed::framing(\sprintf(
                'The streamed body ended after %d of its %d declared byte(s); the connection is closed',
                $writer->written(),
                $declared,
            ));
        }
    }

    /** @return list<string> */
    private static function lines(Response $response): array
    {
        $lines = [];
        foreach ($response->headerFields() as $name => $value) {
            $name = (string) $name;
            if (isset(self::DROPPED[\strtolower($name)])) {
                continue;
            }
            foreach (\is_array($value) ? $value : [$value] as $item) {
                $lines[] = HeaderField::line($name, \trim((string) $item, " \t"));
            }
        }
        return $lines;
    }
}
