<?php

/*
 * Microbenchmark of the HTTP hot path: parse a typical GET (6 headers) into a Request, and encode
 * a small response. Not a test; run by hand:
 *
 *   php tests/Unit/Http/bench/parse.php
 *   php -d opcache.enable_cli=1 tests/Unit/Http/bench/parse.php
 *   php -d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M tests/Unit/Http/bench/parse.php
 */

declare(strict_types=1);

require __DIR__ . '/../../../../vendor/autoload.php';

use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\RequestParser;

$request = "GET /plaintext?page=1 HTTP/1.1\r\n"
    . "Host: localhost:8080\r\n"
    . "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\n"
    . "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
    . "Accept-Encoding: gzip, deflate, br\r\n"
    . "Accept-Language: en-US,en;q=0.5\r\n"
    . "Connection: keep-alive\r\n"
    . "\r\n";

$iterations = (int) ($argv[1] ?? 200_000);
$rounds = 5;

/** @param \Closure(): void $body */
$measure = static function (string $label, \Closure $body) use ($iterations, $rounds): void {
    $best = PHP_FLOAT_MAX;
    for ($round = 0; $round < $rounds; $round++) {
        $start = hrtime(true);
        $body();
        $best = min($best, (hrtime(true) - $start) / $iterations / 1000);
    }
    printf("%-52s %6.3f us  (best of %d x %d)\n", $label, $best, $rounds, $iterations);
};

$parser = new RequestParser(null, '127.0.0.1');
$measure('parse GET, 6 headers -> Request (one per push)', static function () use ($parser, $request, $iterations): void {
    for ($i = 0; $i < $iterations; $i++) {
        $parser->push($request);
        $parser->next();
    }
});

$measure('parse + keepAlive() + header("accept")', static function () use ($parser, $request, $iterations): void {
    for ($i = 0; $i < $iterations; $i++) {
        $parser->push($request);
        $r = $parser->next();
        $r->keepAlive();
        $r->header('accept');
    }
});

$pipelined = str_repeat($request, 16);
$measure('parse 16 pipelined GETs per push (per request)', static function () use ($parser, $pipelined, $iterations): void {
    for ($i = 0; $i < $iterations; $i += 16) {
        $parser->push($pipelined);
        while ($parser->next() !== null) {
        }
    }
});

$encoder = new ResponseEncoder();
$date = ResponseEncoder::httpDate(0);
$measure('new Response + encode (1 header, 13-byte body)', static function () use ($encoder, $date, $iterations): void {
    for ($i = 0; $i < $iterations; $i++) {
        $encoder->encode(new Response(200, ['Content-Type' => 'text/plain'], 'Hello, World!'), '1.1', true, false, $date);
    }
});

printf("PHP %s, opcache.enable_cli=%s, jit=%s\n", PHP_VERSION, ini_get('opcache.enable_cli') ?: '0', ini_get('opcache.jit') ?: 'off');
