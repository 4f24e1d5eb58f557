<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * Turns a Response into HTTP/1.x bytes. No I/O: the server writes what this returns.
 *
 * One instance per worker; it caches status lines, so keep it. The caller decides keep-alive
 * (see keepAlive()) and passes the Date value, which the server formats once a second
 * (httpDate()). The encoder owns the framing fields: a handler's Content-Length is replaced by the
 * real body length (except for HEAD and 304, where it describes the body not sent), its Connection
 * field by the caller's decision, and its Transfer-Encoding is only honoured on a string body
 * (taken as already encoded). A handler's Server or Date field replaces the default one.
 *
 * With the extension, the common response (a string body, not HEAD, a final status other than 204 and
 * 304, plain valid fields without Transfer-Encoding or Connection) is encoded in C
 * (Weft\Ext\encodeResponse(), ext/weft_encode.c) into the same bytes; everything else, and every error,
 * stays here. WEFT_NATIVE_HTTP=0 in the environment (or a false $native) keeps all of it in PHP.
 */
final class ResponseEncoder
{
    public const CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";
    public const LAST_CHUNK = "0\r\n\r\n";

    private const CONTENT_LENGTH = 1;
    private const TRANSFER_ENCODING = 2;
    private const CONNECTION = 3;
    private const SERVER = 4;
    private const DATE = 5;
    private const MANAGED = [
        'content-length' => self::CONTENT_LENGTH,
        'transfer-encoding' => self::TRANSFER_ENCODING,
        'connection' => self::CONNECTION,
        'server' => self::SERVER,
        'date' => self::DATE,
    ];
    /** The lengths of the MANAGED names: a field of another length needs no lower-casing to be told apart. */
    private const MANAGED_LENGTHS = [14 => true, 17 => true, 10 => true, 6 => true, 4 => true];
    /** HeaderField's rule over all the field lines at once (the hot path): one match, not one a field. */
    private const FIELDS = '/\A(?:' . HeaderBlock::TOKEN . '++: ' . HeaderField::VALUE . '\r\n)*+\z/';

    /** @var array<int, string> */
    private array $lines11 = [];
    /** @var array<int, string> */
    private array $lines10 = [];
    /** The Date field for the last date value seen: it changes once a second, not per response. */
    private string $date = '';
    private string $dateField = '';
    /** @internal "Server: name\r\n" ("" for none), for the extension's encoder (HttpSession calls it directly) */
    public readonly string $serverField;
    /** @internal whether the extension encodes the common response (encode() and HttpSession ask it first) */
    public readonly bool $native;
    /** Whether new encoders use the extension; null until first asked (then: the environment and the layout check). */
    private static ?bool $nativeEncode = null;
    /** Whether the extension accepted Response's layout; null until asked. */
    private static ?bool $layoutAccepted = null;
    /**
     * The last field lines that passed the check below: an application answers with the same few
     * header sets again and again, and comparing a short string costs a fraction of the pattern.
     */
    private string $checkedFields = '';
    private int $checkedLines = 0;
    /** @var array<string, mixed>|null the header fields analyse() read last, and what it made of them: */
    private ?array $analysed = null;
    private string $fields = '';
    private ?string $length = null;
    private ?string $coding = null;
    private string $connection = 'Connection: ';
    /** The response names its own Server or Date: the default one is left out. */
    private bool $ownServer = false;
    private bool $ownDate = false;
    /** A Connection field of the response names "close" (keepAlive()). */
    private bool $closes = false;

    /**
     * @param string $serverName value of the Server field; "" sends none
     * @param bool|null $native whether the extension encodes the common response (null: nativeEncode(); true
     *        is ignored without the extension or when its layout check failed)
     */
    public function __construct(string $serverName = 'weft', ?bool $native = null)
    {
        if ($serverName !== '' && preg_match('/\A[\x20-\x7e]++\z/', $serverName) !== 1) {
            throw new \InvalidArgumentException('Invalid server name');
        }
        $this->serverField = $serverName === '' ? '' : 'Server: ' . $serverName . "\r\n";
        $this->native = $native === null ? self::nativeEncode() : $native && self::layoutAccepted();
    }

    /**
     * Whether encoders created from now on let the extension encode the common response (null: as the
     * environment says, nativeEncode()). Tests and the connection oracle switch it to run both paths in
     * one process; asking for it without the extension leaves it off.
     */
    public static function useNativeEncode(?bool $on): void
    {
        self::$nativeEncode = $on === null ? null : $on && self::layoutAccepted();
    }

    /**
     * Whether encoders created from now on let the extension encode the common response: when the
     * extension is loaded, WEFT_NATIVE_HTTP is not "0" and the extension accepted Response's layout.
     */
    public static function nativeEncode(): bool
    {
        return self::$nativeEncode ??= getenv('WEFT_NATIVE_HTTP') !== '0' && self::layoutAccepted();
    }

    /**
     * Whether the extension reads Response's layout as it is (Weft\Ext\checkResponseLayout(), asked once per
     * process). A failed check is said in the log (stderr, which the master logs) and PHP encodes every response.
     */
    private static function layoutAccepted(): bool
    {
        if (self::$layoutAccepted === null) {
            self::$layoutAccepted = false;
            if (\function_exists('Weft\Ext\checkResponseLayout')) {
                $problem = \Weft\Ext\checkResponseLayout(Response::class);
                if ($problem !== null) {
                    \error_log("weft: the extension does not encode responses itself ({$problem}); PHP encodes them");
                }
                self::$layoutAccepted = $problem === null;
            }
        }
        return self::$layoutAccepted;
    }

    /** An IMF-fixdate for the Date field: "Sun, 06 Nov 1994 08:49:37 GMT". */
    public static function httpDate(int $timestamp): string
    {
        return gmdate('D, d M Y H:i:s', $timestamp) . ' GMT';
    }

    /**
     * Head and body of a string-bodied response in one string: the hot path.
     *
     * @param string $version the request's version: "1.0" answers with HTTP/1.0, anything else HTTP/1.1
     * @param bool $isHead the request was HEAD: the head describes the body, which is not sent
     * @throws \LogicException for a streamed response (use encodeHead() and the producer)
     * @throws \InvalidArgumentException when a header name or value could break the head
     */
    public function encode(Response $response, string $version, bool $keepAlive, bool $isHead, string $date): string
    {
        if ($this->native) {
            $bytes = \Weft\Ext\encodeResponse($response, $version, $keepAlive, $isHead, $date, $this->serverField, \PHP_INT_MAX);
            if ($bytes !== null) {
                return $bytes;
            }
        }
        return $this->encodeInPhp($response, $version, $keepAlive, $isHead, $date);
    }

    /**
     * encode() without asking the extension: for a caller that asked it already (HttpSession::serve()
     * tries encodeResponse() first, and a response it refused would only be refused again).
     *
     * $response is untyped, like keepAlive()'s arguments and head()'s: on the pure-PHP path each runs for
     * every request, and a class-typed argument is checked through zend_check_user_type_slow each time.
     *
     * @internal
     * @param Response $response
     * @throws \LogicException for a streamed response (use encodeHead() and the producer)
     * @throws \InvalidArgumentException when a header name or value could break the head
     */
    public function encodeInPhp($response, string $version, bool $keepAlive, bool $isHead, string $date): string
    {
        if ($response->isStreamed()) {
            throw new \LogicException('A streamed response is written with encodeHead() and its producer');
        }
        $status = $response->status();
        // The body goes into the head's one concatenation: one string made, not two.
        return $this->head($response, $version, $keepAlive, $isHead, $date,
            $isHead || $status < 200 || $status === 204 || $status === 304 ? '' : $response->body());
    }

    /**
     * Only the head, for a streamed response (or a string one whose body the caller sends itself).
     * What follows it is given by framing(); a close-delimited stream always says "Connection: close".
     */
    public function encodeHead(Response $response, string $version, bool $keepAlive, bool $isHead, string $date): string
    {
        return $this->head($response, $version, $keepAlive, $isHead, $date);
    }

    /** How the body bytes after encodeHead() must be written, for the same arguments. */
    public function framing(Response $response, string $version, bool $isHead): BodyFraming
    {
        $status = $response->status();
        if ($isHead || $status < 200 || $status === 204 || $status === 304) {
            return BodyFraming::None;
        }
        if (!$response->isStreamed() || $response->hasHeader('content-length')) {
            return BodyFraming::ContentLength;
        }
        return $version === '1.0' ? BodyFraming::CloseDelimited : BodyFraming::Chunked;
    }

    /**
     * The one place that decides whether the connection stays open after this exchange: the
     * client asked for it (Request::keepAlive()), the handler did not send "Connection: close",
     * and the body is not close-delimited. The server may still close (shutdown, max requests).
     *
     * @param Request $request
     * @param Response $response untyped both, as encodeInPhp()'s
     */
    public function keepAlive($request, $response): bool
    {
        if (!$request->keepAlive()) {
            return false;
        }
        if ($response->headerFields() === $this->analysed) {
            if ($this->closes) {
                return false;
            }
        } else {
            $connection = $response->header('connection');
            if ($connection !== null && HeaderBlock::listHas($connection, 'close')) {
                return false;
            }
        }
        return !$response->isStreamed()
            || $this->framing($response, $request->version(), $request->method() === 'HEAD') !== BodyFraming::CloseDelimited;
    }

    /** One chunk of a chunked body; "" for an empty chunk, which on the wire would end the body. */
    public function encodeChunk(string $chunk): string
    {
        if ($chunk === '') {
            return '';
        }
        return dechex(\strlen($chunk)) . "\r\n" . $chunk . "\r\n";
    }

    /**
     * The end of a chunked body: the last chunk, and the trailer section (RFC 9112 §7.1.2).
     *
     * @param list<array{0: string, 1: string}> $trailers as Response::trailerFields() gives them, checked
     */
    public function lastChunk(array $trailers = []): string
    {
        if ($trailers === []) {
            return self::LAST_CHUNK;
        }
        $last = "0\r\n";
        foreach ($trailers as [$name, $value]) {
            $last .= $name . ': ' . $value . "\r\n";
        }
        return $last . "\r\n";
    }

    /**
     * @param Response $response (untyped, as encodeInPhp()'s)
     * @param string $body what follows the head in the same string ('' for the head alone)
     */
    private function head($response, string $version, bool $keepAlive, bool $isHead, string $date, string $body = ''): string
    {
        $status = $response->status();
        if ($response->hasCustomReason()) {
            $head = ($version === '1.0' ? 'HTTP/1.0 ' : 'HTTP/1.1 ') . $status . ' ' . $response->reason() . "\r\n";
        } elseif ($version === '1.0') {
            $head = $this->lines10[$status] ??= 'HTTP/1.0 ' . $status . ' ' . $response->reason() . "\r\n";
        } else {
            $head = $this->lines11[$status] ??= 'HTTP/1.1 ' . $status . ' ' . $response->reason() . "\r\n";
        }

        // The fields are the same as the last response's more often than not (an application answers
        // with a few header sets, often one array literal): then what was made of them last time stands.
        $headers = $response->headerFields();
        if ($headers !== $this->analysed) {
            $this->analyse($headers, $response);
        }
        $fields = $this->fields;
        $length = $this->length;
        $coding = $this->coding;
        $connection = $this->connection;
        $server = $this->ownServer ? '' : $this->serverField;
        if ($this->ownDate) {
            $dateField = '';
        } else {
            if ($date !== $this->date) {
                $this->date = $date;
                $this->dateField = 'Date: ' . $date . "\r\n";
            }
            $dateField = $this->dateField;
        }

        if ($status < 200 || $status === 204) {
            $framing = '';
        } elseif ($response->isStreamed()) {
            if ($length !== null) {
                $framing = 'Content-Length: ' . self::checkLength($length) . "\r\n";
            } elseif ($isHead || $status === 304) {
                $framing = '';
            } elseif ($version === '1.0') {
                $framing = '';
                $keepAlive = false;
            } else {
                $framing = "Transfer-Encoding: chunked\r\n";
            }
        } elseif ($status === 304 || ($isHead && $length !== null)) {
            $framing = $length === null ? '' : 'Content-Length: ' . self::checkLength($length) . "\r\n";
        } elseif ($coding !== null) {
            $framing = 'Transfer-Encoding: ' . $coding . "\r\n";
            if (preg_match('/[\x00-\x08\x0a-\x1f\x7f]/', $coding) === 1) {
                throw new \InvalidArgumentException('Invalid Transfer-Encoding value');
            }
        } else {
            // The usual response. One interpolated string: PHP sizes it once and copies each part once,
            // where a chain of `.` grows the result part by part (a reallocation and a copy each: ~680
            // instructions more a response, callgrind, tracing JIT).
            $size = \strlen($response->body());
            $end = $keepAlive ? "keep-alive\r\n\r\n" : "close\r\n\r\n";
            return "{$head}{$server}{$dateField}{$fields}Content-Length: {$size}\r\n{$connection}{$end}{$body}";
        }
        $end = $keepAlive ? "keep-alive\r\n\r\n" : "close\r\n\r\n";
        return "{$head}{$server}{$dateField}{$fields}{$framing}{$connection}{$end}{$body}";
    }

    /**
     * Reads a response's header fields into the properties head() uses: the field lines (checked), and
     * the managed fields apart. Nothing is kept of fields that fail the check.
     *
     * @param array<string, mixed> $headers
     * @throws \InvalidArgumentException when a header name or value could break the head
     */
    private function analyse(array $headers, Response $response): void
    {
        $fields = '';
        $lines = 0;
        $length = null;
        $coding = null;
        $ownServer = false;
        $ownDate = false;
        $closes = null;
        $connection = 'Connection: ';
        foreach ($headers as $name => $value) {
            $name = (string) $name;
            if (isset(self::MANAGED_LENGTHS[\strlen($name)]) && ($managed = self::MANAGED[strtolower($name)] ?? 0) !== 0) {
                if ($managed === self::CONTENT_LENGTH) {
                    $length = (string) (\is_array($value) ? ($value[0] ?? '') : $value);
                    continue;
                }
                if ($managed === self::TRANSFER_ENCODING) {
                    $coding = \is_array($value) ? implode(', ', $value) : (string) $value;
                    continue;
                }
                if ($managed === self::CONNECTION) {
                    // Keep-alive or close is decided in head(); an "upgrade" option survives, as a 426
                    // that names the protocol in Upgrade must send it (RFC 9110 section 7.8).
                    $options = \is_array($value) ? implode(',', $value) : (string) $value;
                    if (HeaderBlock::listHas($options, 'upgrade')) {
                        $connection = 'Connection: Upgrade, ';
                    }
                    // As Response::header() reads it for keepAlive(): the first Connection field only.
                    if ($closes === null) {
                        $closes = HeaderBlock::listHas($options, 'close');
                    }
                    continue;
                }
                if ($managed === self::SERVER) {
                    $ownServer = true;
                } else {
                    $ownDate = true;
                }
            }
            if (\is_array($value)) {
                foreach ($value as $item) {
                    $fields .= $name . ': ' . $item . "\r\n";
                    ++$lines;
                }
            } else {
                $fields .= $name . ': ' . $value . "\r\n";
                ++$lines;
            }
        }
        // One check for all fields: the pattern refuses bad names and control bytes, and an LF
        // count beyond the lines written means a value or name smuggled in a line of its own.
        // The line count too: the same bytes from fewer fields mean a line smuggled inside a value.
        if ($fields !== '' && ($fields !== $this->checkedFields || $lines !== $this->checkedLines)) {
            if (preg_match(self::FIELDS, $fields) !== 1 || substr_count($fields, "\n") !== $lines) {
                throw new \InvalidArgumentException(self::describeInvalidField($response));
            }
            $this->checkedFields = $fields;
            $this->checkedLines = $lines;
        }
        $this->analysed = $headers;
        $this->fields = $fields;
        $this->length = $length;
        $this->coding = $coding;
        $this->connection = $connection;
        $this->ownServer = $ownServer;
        $this->ownDate = $ownDate;
        $this->closes = $closes ?? false;
    }

    private static function checkLength(string $length): string
    {
        if (!ctype_digit($length)) {
            throw new \InvalidArgumentException('Content-Length must be a non-negative integer');
        }
        return $length;
    }

    private static function describeInvalidField(Response $response): string
    {
        return HeaderField::problem($response->headers()) ?? 'Invalid response header';
    }
}
