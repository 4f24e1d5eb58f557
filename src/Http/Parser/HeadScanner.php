<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

/**
 * Judges a request head byte by byte as it arrives, so that a head which can no longer become valid is
 * refused at its first invalid byte (a non-token byte in a method or header name, a bad version, a bare
 * CR or LF, a NUL) instead of after its CRLFCRLF, the size limit or the header timeout. Once the request
 * line ends, its target is judged (Syntax::targetError); once a Host, Content-Length or
 * Transfer-Encoding line ends, that field is (Syntax::fieldError): a duplicate or invalid one is refused
 * as soon as its line is complete, as nginx does, not when the blank line comes.
 *
 * Resumable: each call continues where the previous one stopped, so a head trickled in byte by byte is
 * still scanned once. The fast path of RequestParser (a complete head at once) does not use it; the
 * parser runs it on incomplete heads, and on complete ones that failed, so that both ways name the first
 * invalid byte and end in the same status, however the bytes were split.
 *
 * @internal
 */
final class HeadScanner
{
    private const TCHAR = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    /** Bytes that end a request target: controls, SP and DEL. */
    private const TARGET_END = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20\x7f";
    private const VERSION = 'HTTP/';

    private const METHOD = 0;
    private const TARGET = 1;
    private const VERSION_TEXT = 2;
    private const LINE_LF = 3;
    private const FIELD_START = 4;
    private const NAME = 5;
    private const VALUE = 6;
    private const FIELD_LF = 7;
    private const END_LF = 8;
    private const DONE = 9;

    private int $state = self::METHOD;
    /** Bytes of the head judged so far. */
    private int $pos = 0;
    /** Where the current token (method, version, name) started, relative to the head. */
    private int $mark = 0;
    /** An upper-case method outside the list, judged when the request line ends. */
    private ?string $unknown = null;
    private string $method = '';
    private string $target = '';
    private string $version = '';
    /** The framing or Host field whose value is being read (lower case), else null. */
    private ?string $field = null;
    /** Where the current field's value starts, relative to the head. */
    private int $valueMark = 0;
    /** @var array{hosts: int, length: bool, coding: bool} */
    private array $seen = self::NOTHING_SEEN;

    private const NOTHING_SEEN = ['hosts' => 0, 'length' => false, 'coding' => false];
    /** The fields judged as soon as their line ends. */
    private const JUDGED = ['host' => true, 'content-length' => true, 'transfer-encoding' => true];

    public function __construct(private readonly Limits $limits)
    {
    }

    public function reset(): void
    {
        $this->state = self::METHOD;
        $this->pos = 0;
        $this->mark = 0;
        $this->unknown = null;
        $this->field = null;
        $this->seen = self::NOTHING_SEEN;
    }

    /** Whether the scan reached the blank line that ends the head. */
    public function done(): bool
    {
        return $this->state === self::DONE;
    }

    /**
     * Scans the head that starts at $start in $buffer, up to (not including) $to.
     *
     * @return HttpError|null the error for the first byte that makes the head invalid, if any so far
     */
    public function scan(string $buffer, int $start, int $to): ?HttpError
    {
        $i = $start + $this->pos;
        try {
            while ($i < $to && $this->state !== self::DONE) {
                switch ($this->state) {
                    case self::METHOD:
                        $i += \strspn($buffer, self::TCHAR, $i, $to - $i);
                        if ($i === $to) {
                            break;
                        }
                        if ($buffer[$i] !== ' ') {
                            return HttpError::badRequest('Invalid method');
                        }
                        $method = \substr($buffer, $start + $this->mark, $i - $start - $this->mark);
                        if ($method === '') {
                            return HttpError::badRequest('Malformed request line');
                        }
                        if (!isset($this->limits->methodSet[$method])) {
                            // Lower case can never become valid: refuse now. An unknown upper-case
                            // token is judged once the request line proves well-formed (501), so that
                            // a malformed line ("NOT HTTP") stays a 400.
                            if (\strtoupper($method) !== $method) {
                                return self::unknownMethod($method);
                            }
                            $this->unknown = $method;
                        }
                        $this->method = $method;
                        $i++;
                        $this->state = self::TARGET;
                        $this->mark = $i - $start;
                        break;
                    case self::TARGET:
                        $i += \strcspn($buffer, self::TARGET_END, $i, $to - $i);
                        if ($i === $to) {
                            break;
                        }
                        if ($buffer[$i] !== ' ' || $i === $start + $this->mark) {
                            return HttpError::badRequest($buffer[$i] === ' ' ? 'Malformed request line' : 'Invalid request target');
                        }
                        $this->target = \substr($buffer, $start + $this->mark, $i - $start - $this->mark);
                        $i++;
                        $this->state = self::VERSION_TEXT;
                        $this->mark = $i - $start;
                        break;
                    case self::VERSION_TEXT:
                        $at = $i - $start - $this->mark; // index within "HTTP/d.d"
                        $byte = $buffer[$i];
                        if ($at < 5) {
                            if ($byte !== self::VERSION[$at]) {
                                return HttpError::badRequest('Malformed HTTP version');
                            }
                        } elseif ($at === 5 || $at === 7) {
                            if ($byte < '0' || $byte > '9') {
                                return HttpError::badRequest('Malformed HTTP version');
                            }
                        } elseif ($at === 6) {
                            if ($byte !== '.') {
                                return HttpError::badRequest('Malformed HTTP version');
                            }
                        } else {
                            if ($byte !== "\r") {
                                return $byte === "\n" ? Syntax::bareLf() : HttpError::badRequest('Malformed request line');
                            }
                            $version = \substr($buffer, $start + $this->mark + 5, 3);
                            if ($version !== '1.1' && $version !== '1.0') {
                                return HttpError::versionNotSupported();
                            }
                            if ($this->unknown !== null) {
                                return self::unknownMethod($this->unknown);
                            }
                            $error = Syntax::targetError($this->method, $this->target);
                            if ($error !== null) {
                                return $error;
                            }
                            $this->version = $version;
                            $this->state = self::LINE_LF;
                        }
                        $i++;
                        break;
                    case self::LINE_LF:
                    case self::FIELD_LF:
                        if ($buffer[$i] !== "\n") {
                            return HttpError::badRequest('Bare CR in the head');
                        }
                        $i++;
                        $this->state = self::FIELD_START;
                        break;
                    case self::FIELD_START:
                        $byte = $buffer[$i];
                        if ($byte === "\r") {
                            $this->state = self::END_LF;
                            $i++;
                            break;
                        }
                        if ($byte === ' ' || $byte === "\t") {
                            return HttpError::badRequest('Obsolete line folding is not accepted');
                        }
                        $this->state = self::NAME;
                        $this->mark = $i - $start;
                        break;
                    case self::NAME:
                        $i += \strspn($buffer, self::TCHAR, $i, $to - $i);
                        if ($i === $to) {
                            break;
                        }
                        if ($buffer[$i] !== ':' || $i === $start + $this->mark) {
                            return match ($buffer[$i]) {
                                "\n" => Syntax::bareLf(),
                                ':' => HttpError::badRequest('Empty header name'),
                                ' ', "\t" => HttpError::badRequest('Whitespace between header name and colon'),
                                "\r" => HttpError::badRequest('Header line without a colon'),
                                default => HttpError::badRequest('Invalid header name'),
                            };
                        }
                        $name = \strtolower(\substr($buffer, $start + $this->mark, $i - $start - $this->mark));
                        $this->field = isset(self::JUDGED[$name]) ? $name : null;
                        $i++;
                        $this->valueMark = $i - $start;
                        $this->state = self::VALUE;
                        break;
                    case self::VALUE:
                        $i += \strcspn($buffer, "\r\n\0", $i, $to - $i);
                        if ($i === $to) {
                            break;
                        }
                        if ($buffer[$i] !== "\r") {
                            return $buffer[$i] === "\n" ? Syntax::bareLf() : HttpError::badRequest('NUL in header value');
                        }
                        if ($this->field !== null) {
                            $value = \substr($buffer, $start + $this->valueMark, $i - $start - $this->valueMark);
                            $error = Syntax::fieldError($this->field, $value, $this->version, $this->seen, $this->limits);
                            if ($error !== null) {
                                return $error;
                            }
                        }
                        $i++;
                        $this->state = self::FIELD_LF;
                        break;
                    case self::END_LF:
                        if ($buffer[$i] !== "\n") {
                            return HttpError::badRequest('Bare CR in the head');
                        }
                        $i++;
                        $this->state = self::DONE;
                        break;
                }
            }
            return null;
        } finally {
            $this->pos = $i - $start;
        }
    }

    /** A lower-case or mixed-case method is malformed (400); an unknown upper-case one is not implemented (501). */
    public static function unknownMethod(string $method): HttpError
    {
        return \strtoupper($method) === $method
            ? HttpError::notImplemented('Unknown method')
            : HttpError::badRequest('Invalid method: methods are case-sensitive upper-case tokens');
    }
}
