<?php
// HPACK's cost per HTTP/2 exchange, in one process: decoding a browser-like request block and encoding a
// typical response, as Weft's HTTP/2 server does per request. Two cases:
//   warm: one connection, 5,000 requests in a row (the dynamic tables hold the repeated fields: most
//         fields are one index octet; the path, a cookie and the response's length and date vary);
//   cold: every exchange on a fresh connection (all literals, Huffman-coded: the first request).
// Prints exchanges per second of CPU time (decode + encode) for each. Not a test: figures depend on the
// machine; compare builds on the same one.
//
//   php -d opcache.enable_cli=1 [-d opcache.jit=tracing -d opcache.jit_buffer_size=64M] scripts/hpack-bench.php [SECONDS]
declare(strict_types=1);

require dirname(__DIR__) . '/vendor/autoload.php';

use Weft\Http2\Hpack\Decoder;
use Weft\Http2\Hpack\Encoder;

$seconds = (float) ($argv[1] ?? 1.0);

/** @return list<array{0: string, 1: string}> */
function request(int $i): array
{
    return [
        [':method', 'GET'], [':scheme', 'https'], [':authority', 'shop.example.com'], [':path', '/products/' . $i . '?ref=home&page=2'],
        ['sec-ch-ua', '"Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"'], ['sec-ch-ua-mobile', '?0'],
        ['sec-ch-ua-platform', '"Linux"'], ['upgrade-insecure-requests', '1'],
        ['user-agent', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'],
        ['accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'],
        ['sec-fetch-site', 'same-origin'], ['sec-fetch-mode', 'navigate'], ['sec-fetch-dest', 'document'],
        ['referer', 'https://shop.example.com/'], ['accept-encoding', 'gzip, deflate, br, zstd'], ['accept-language', 'en-US,en;q=0.9'],
        ['cookie', 'session=' . \md5((string) ($i >> 6))], ['cookie', 'theme=dark'],
    ];
}

/** @return list<array{0: string, 1: string}> */
function response(int $i): array
{
    return [
        [':status', '200'], ['content-type', 'text/html; charset=utf-8'], ['content-length', (string) (10000 + $i % 5000)],
        ['date', \gmdate('D, d M Y H:i:s', 1_800_000_000 + ($i >> 8)) . ' GMT'], ['server', 'weft'], ['cache-control', 'private, no-cache'],
        ['vary', 'accept-encoding'], ['content-encoding', 'gzip'], ['x-request-id', \bin2hex(\pack('N', $i))],
    ];
}

// The client's blocks, encoded up front with our Encoder (what any client sends is alike in shape).
$client = new Encoder();
$warmBlocks = [];
for ($i = 0; $i < 5000; $i++) {
    $warmBlocks[] = $client->encode(request($i));
}
$coldBlock = (new Encoder())->encode(request(1));
$responses = [];
for ($i = 0; $i < 5000; $i++) {
    $responses[] = response($i);
}
\printf("request block: %d octets cold, %d warm (%d fields); response fields: %d\n", \strlen($coldBlock), \strlen($warmBlocks[100]), \count(request(0)), \count($responses[0]));

function run(float $seconds, callable $one): float
{
    $n = 0;
    $start = \hrtime(true);
    $cpuStart = \getrusage();
    do {
        $one($n++);
    } while (\hrtime(true) - $start < $seconds * 1e9);
    $cpu = \getrusage();
    $used = ($cpu['ru_utime.tv_sec'] - $cpuStart['ru_utime.tv_sec']) + ($cpu['ru_utime.tv_usec'] - $cpuStart['ru_utime.tv_usec']) / 1e6
        + ($cpu['ru_stime.tv_sec'] - $cpuStart['ru_stime.tv_sec']) + ($cpu['ru_stime.tv_usec'] - $cpuStart['ru_stime.tv_usec']) / 1e6;
    return $n / \max($used, 1e-9);
}

$decoder = null;
$encoder = null;
$warm = run($seconds, static function (int $n) use (&$decoder, &$encoder, $warmBlocks, $responses): void {
    $i = $n % 5000;
    if ($i === 0) {
        [$decoder, $encoder] = [new Decoder(), new Encoder()]; // a new connection every 5,000 requests, as the client's blocks start over
    }
    $decoder->decode($warmBlocks[$i]);
    $encoder->encode($responses[$i]);
});
$cold = run($seconds, static function (int $n) use ($coldBlock, $responses): void {
    (new Decoder())->decode($coldBlock);
    (new Encoder())->encode($responses[$n % 5000]);
});
\printf("warm connection: %8.0f exchanges/s (decode + encode, %.2f us each)\n", $warm, 1e6 / $warm);
\printf("new connection:  %8.0f exchanges/s (decode + encode, %.2f us each)\n", $cold, 1e6 / $cold);
