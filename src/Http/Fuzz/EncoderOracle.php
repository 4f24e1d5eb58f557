<?php

declare(strict_types=1);

namespace Weft\Http\Fuzz;

use Random\Engine\Mt19937;
use Random\Randomizer;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;

/**
 * What the response encoder must do on both of its paths: with the extension, the common response is
 * encoded in C (Weft\Ext\encodeResponse()), everything else in PHP. For any response and arguments, the
 * encoder with the native path gives exactly what the pure PHP encoder gives: the same bytes, or the same
 * exception with the same message; and whenever the C function answers at all, its bytes are PHP's.
 * generate() makes the cases: valid and invalid field names and values, every kind of status, versions,
 * keep-alive on and off, HEAD, the fields the encoder manages, streamed responses.
 */
final class EncoderOracle
{
    private const DATES = ['Fri, 27 Nov 2026 05:00:00 GMT', 'Sat, 28 Nov 2026 00:00:01 GMT'];

    /**
     * @return bool whether the C path encoded it (false: PHP did, or without the extension)
     * @throws FuzzFailure when the two paths disagree
     */
    public function check(Response $response, string $version, bool $keepAlive, bool $isHead, string $date, string $serverName = 'weft'): bool
    {
        $php = self::outcome(new ResponseEncoder($serverName, false), $response, $version, $keepAlive, $isHead, $date);
        if (!\function_exists('Weft\Ext\encodeResponse') || !(new ResponseEncoder($serverName, true))->native) {
            return false;
        }
        $encoder = new ResponseEncoder($serverName, true);
        $native = self::outcome($encoder, $response, $version, $keepAlive, $isHead, $date);
        if ($native !== $php) {
            throw new FuzzFailure(\sprintf('the native and the PHP encoder disagree: native %s, php %s',
                \json_encode($native, \JSON_INVALID_UTF8_SUBSTITUTE), \json_encode($php, \JSON_INVALID_UTF8_SUBSTITUTE)));
        }
        $direct = \Weft\Ext\encodeResponse($response, $version, $keepAlive, $isHead, $date, $encoder->serverField, \PHP_INT_MAX);
        if ($direct !== null && $direct !== $php) {
            throw new FuzzFailure(\sprintf('encodeResponse() answers %s where PHP answers %s',
                \json_encode($direct, \JSON_INVALID_UTF8_SUBSTITUTE), \json_encode($php, \JSON_INVALID_UTF8_SUBSTITUTE)));
        }
        $this->checkAnswer($response, $version, $keepAlive, $isHead, $date, $encoder->serverField);
        return $direct !== null;
    }

    /**
     * Weft\Ext\encodeAnswer(), which reads the version from the request and decides keep-alive itself: for
     * requests without a Connection field (and with names that only look like it), exactly
     * encodeResponse() with Request::keepAlive()'s decision; false only for one with a Connection field.
     *
     * @throws FuzzFailure when they disagree
     */
    private function checkAnswer(Response $response, string $version, bool $mayKeepAlive, bool $isHead, string $date, string $serverField): void
    {
        if (!\function_exists('Weft\Ext\encodeAnswer') || \Weft\Ext\checkRequestLayout(Request::class) !== null) {
            return;
        }
        $blocks = ["\r\nHost: x", "\r\nHost: x\r\nConnection: close", "\r\nCONNECTION: keep-alive\r\nHost: x",
            "\r\nX-Connection: close", "\r\nConnectionx: close", "\r\nHost: connection:close", ''];
        foreach ($blocks as $block) {
            $request = new Request($isHead ? 'HEAD' : 'GET', '/', $block, '', $version);
            $keepAlive = null;
            $answer = \Weft\Ext\encodeAnswer($response, $request, $mayKeepAlive, $isHead, $date, $serverField, \PHP_INT_MAX, $keepAlive);
            $hasField = $request->header('connection') !== null;
            if ($answer === false) {
                if (!$hasField || $keepAlive !== null) {
                    throw new FuzzFailure(\sprintf('encodeAnswer() left to PHP a request without a Connection field: %s', \json_encode($block)));
                }
                continue;
            }
            $expected = $mayKeepAlive && $request->keepAlive();
            $bytes = \Weft\Ext\encodeResponse($response, $version, $expected, $isHead, $date, $serverField, \PHP_INT_MAX);
            // No date given: the extension's own clock, formatted as ResponseEncoder::httpDate() (a second
            // may pass between the two calls: either second's answer is right).
            $before = \time();
            $undated = \Weft\Ext\encodeAnswer($response, $request, $mayKeepAlive, $isHead, null, $serverField, \PHP_INT_MAX, $keepAlive);
            $after = \time();
            $dated = static fn (int $second): ?string => \Weft\Ext\encodeResponse($response, $version, $expected, $isHead, ResponseEncoder::httpDate($second), $serverField, \PHP_INT_MAX);
            if ($undated !== $dated($before) && $undated !== $dated($after)) {
                throw new FuzzFailure(\sprintf('encodeAnswer() without a date answers %s where PHP dates it %s',
                    \json_encode($undated, \JSON_INVALID_UTF8_SUBSTITUTE), \json_encode($dated($after), \JSON_INVALID_UTF8_SUBSTITUTE)));
            }
            if ($hasField || $keepAlive !== $expected || $answer !== $bytes) {
                throw new FuzzFailure(\sprintf('encodeAnswer() answers %s (keep-alive %s) where encodeResponse() with Request::keepAlive() answers %s (%s), block %s',
                    \json_encode($answer, \JSON_INVALID_UTF8_SUBSTITUTE), \var_export($keepAlive, true),
                    \json_encode($bytes, \JSON_INVALID_UTF8_SUBSTITUTE), \var_export($expected, true), \json_encode($block)));
            }
        }
    }

    /**
     * One generated case, the same for the same seed and case number.
     *
     * @return array{Response, string, bool, bool, string, string} response, version, keep-alive, HEAD, date, server name
     */
    public static function generate(int $seed, int $case): array
    {
        $random = new Randomizer(new Mt19937(($seed * 1_000_003 + $case) & 0x7fffffff));
        $status = self::pick($random, [200, 200, 200, 201, 204, 301, 304, 404, 418, 500, 503, 599, 299, 103, 101, 100]);
        $headers = [];
        for ($n = $random->getInt(0, 6); $n > 0; $n--) {
            $name = self::name($random);
            $value = $random->getInt(0, 4) === 0
                ? \array_map(static fn (): string|int|float => self::value($random), \range(1, $random->getInt(0, 3)))
                : self::value($random);
            if ($random->getInt(0, 3) === 0 && isset($headers[$name])) {
                $name = \strtoupper($name); // the same field again in another case
            }
            $headers[$name] = $value;
        }
        $body = self::pick($random, ['', 'Hello World', \str_repeat('x', $random->getInt(0, 3000)), "\x00\r\n binary \xff"]);
        $reason = $random->getInt(0, 5) === 0 ? self::pick($random, ['Fine', "Tab\there", 'caf' . "\xc3\xa9", ' ']) : '';
        try {
            $response = $random->getInt(0, 12) === 0
                ? Response::stream(static function (): void {}, $status, $headers)
                : new Response($status, $headers, $body, $reason);
        } catch (\InvalidArgumentException) {
            $response = new Response(200, $headers, $body);
        }
        return [
            $response,
            self::pick($random, ['1.1', '1.1', '1.0', '2.0', '']),
            $random->getInt(0, 2) !== 0,
            $random->getInt(0, 6) === 0,
            self::pick($random, self::DATES),
            self::pick($random, ['weft', 'weft', '', 'edge/1.0']),
        ];
    }

    private static function outcome(ResponseEncoder $encoder, Response $response, string $version, bool $keepAlive, bool $isHead, string $date): string
    {
        try {
            return $encoder->encode($response, $version, $keepAlive, $isHead, $date);
        } catch (\Throwable $e) {
            return 'threw ' . $e::class . ': ' . $e->getMessage();
        }
    }

    private static function name(Randomizer $random): string|int
    {
        return match ($random->getInt(0, 9)) {
            0 => self::pick($random, ['Content-Length', 'content-length', 'Transfer-Encoding', 'Connection', 'CONNECTION', 'Server', 'server', 'Date', 'DATE']),
            1 => self::pick($random, ['X A', 'X:A', "X\r\nY", '', "X\x00", "\xc3\xa9t\xc3\xa9", 'X-(a)', '{}']),
            2 => $random->getInt(-5, 1234),
            3 => self::pick($random, ['Host', 'Vary', 'ETag', 'Link', 'Age', 'From']), // lengths the encoder compares
            default => self::pick($random, ['Content-Type', 'Set-Cookie', 'X-Request-Id', 'Cache-Control', 'x-a', "!#$%&'*+-.^_`|~"]),
        };
    }

    private static function value(Randomizer $random): string|int|float
    {
        return match ($random->getInt(0, 10)) {
            10 => self::pick($random, [1.5, 0.1, 1.0e25, -0.0]),
            0 => $random->getInt(\PHP_INT_MIN, \PHP_INT_MAX),
            1 => self::pick($random, ["a\r\nInjected: yes", "a\nb", "a\rb", "a\x00b", "a\x7fb", "a\x1fb"]),
            2 => self::pick($random, ["tab\tinside", "caf\xc3\xa9", "\xff\xfe", '', ' ', 'close', 'keep-alive', 'Upgrade', 'chunked']),
            3 => $random->getInt(0, 99999),
            default => self::pick($random, ['text/plain; charset=utf-8', 'a=1; Path=/', 'no-cache', '"v1"', 'Mon, 01 Jan 2024 00:00:00 GMT', '42']),
        };
    }

    /**
     * @template T
     * @param list<T> $choices
     * @return T
     */
    private static function pick(Randomizer $random, array $choices): mixed
    {
        return $choices[$random->getInt(0, \count($choices) - 1)];
    }
}
