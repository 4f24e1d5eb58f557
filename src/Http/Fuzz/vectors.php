<?php

/*
 * Request vectors shared by every HTTP/1.1 request parser Weft has (the PHP RequestParser today, a
 * native one later): each must produce exactly these requests and error statuses, whether the
 * bytes arrive at once, one at a time or split anywhere. It returns plain data, so a C test harness
 * can load it through `php -r 'echo json_encode(require "vectors.php");'`.
 *
 * Each vector:
 *   name      unique label
 *   raw       bytes on the wire
 *   requests  requests completed before the end or the error, in order; each with method, target,
 *             version, headers (lowercase name => list of values) and optionally body ('') and
 *             trailers ([])
 *   error     HTTP status of the error the parser must raise, or null
 *   partial   (optional) whether bytes of an unfinished request remain buffered at the end
 *   limits    (optional) Limits constructor arguments by name
 */

declare(strict_types=1);

$get = static fn (string $target = '/', array $headers = ['host' => ['x']], string $version = '1.1'): array
    => ['method' => 'GET', 'target' => $target, 'version' => $version, 'headers' => $headers];

$bigHeader = 'X-Big: ' . str_repeat('a', 8200);

return [
    // ---- accepted -------------------------------------------------------------------------
    [
        'name' => 'simple GET',
        'raw' => "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
        'requests' => [$get('/', ['host' => ['example.com']])],
        'error' => null,
    ],
    [
        'name' => 'typical browser GET',
        'raw' => "GET /index.html?q=1&r[]=2 HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"
            . "Accept: text/html,*/*;q=0.8\r\nAccept-Encoding: gzip, deflate\r\nCookie: a=1; b=2\r\nConnection: keep-alive\r\n\r\n",
        'requests' => [$get('/index.html?q=1&r[]=2', [
            'host' => ['localhost:8080'],
            'user-agent' => ['Mozilla/5.0 (X11; Linux x86_64)'],
            'accept' => ['text/html,*/*;q=0.8'],
            'accept-encoding' => ['gzip, deflate'],
            'cookie' => ['a=1; b=2'],
            'connection' => ['keep-alive'],
        ])],
        'error' => null,
    ],
    [
        'name' => 'HTTP/1.0 without Host',
        'raw' => "GET /old HTTP/1.0\r\n\r\n",
        'requests' => [$get('/old', [], '1.0')],
        'error' => null,
    ],
    [
        'name' => 'HTTP/1.0 keep-alive',
        'raw' => "HEAD / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
        'requests' => [['method' => 'HEAD', 'target' => '/', 'version' => '1.0', 'headers' => ['connection' => ['Keep-Alive']]]],
        'error' => null,
    ],
    [
        'name' => 'names lowercased, values kept, repeats listed in order',
        'raw' => "GET / HTTP/1.1\r\nHOST: x\r\nAccept: a/A\r\nX-Multi: 1\r\naccept: b/B\r\nx-multi: 2\r\n\r\n",
        'requests' => [$get('/', ['host' => ['x'], 'accept' => ['a/A', 'b/B'], 'x-multi' => ['1', '2']])],
        'error' => null,
    ],
    [
        'name' => 'optional whitespace around values',
        'raw' => "GET / HTTP/1.1\r\nHost:x\r\nX-A:   spaced \t \r\nX-Empty:\r\nX-Blank:   \r\nX-Inner: a  b\r\n\r\n",
        'requests' => [$get('/', ['host' => ['x'], 'x-a' => ['spaced'], 'x-empty' => [''], 'x-blank' => [''], 'x-inner' => ['a  b']])],
        'error' => null,
    ],
    [
        'name' => 'obs-text and non-CR/LF/NUL controls in values are kept',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX-Name: caf\xc3\xa9\r\nX-Ctl: a\x01b\x7fc\r\n\r\n",
        'requests' => [$get('/', ['host' => ['x'], 'x-name' => ["caf\xc3\xa9"], 'x-ctl' => ["a\x01b\x7fc"]])],
        'error' => null,
    ],
    [
        'name' => 'raw UTF-8 and percent-encoding in target',
        'raw' => "GET /caf\xc3\xa9/%20x?a=%C3%A9 HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [$get("/caf\xc3\xa9/%20x?a=%C3%A9")],
        'error' => null,
    ],
    [
        'name' => 'registered and known extension methods',
        'raw' => "PURGE /cache HTTP/1.1\r\nHost: x\r\n\r\nPROPFIND / HTTP/1.1\r\nHost: x\r\n\r\nM-SEARCH / HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [
            ['method' => 'PURGE', 'target' => '/cache', 'version' => '1.1', 'headers' => ['host' => ['x']]],
            ['method' => 'PROPFIND', 'target' => '/', 'version' => '1.1', 'headers' => ['host' => ['x']]],
            ['method' => 'M-SEARCH', 'target' => '/', 'version' => '1.1', 'headers' => ['host' => ['x']]],
        ],
        'error' => null,
    ],
    [
        'name' => 'absolute-form targets and dot-segments that stay within the root',
        'raw' => "GET http://example.com/a?b=c HTTP/1.1\r\nHost: example.com\r\n\r\n"
            . "GET /a/../b HTTP/1.1\r\nHost: x\r\n\r\n"
            . "GET /a/%2e%2E/./.../..b/.. HTTP/1.1\r\nHost: x\r\n\r\n"
            . "GET /a?x=/../../b HTTP/1.1\r\nHost: x\r\n\r\n"
            . "GET http://h HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [
            $get('http://example.com/a?b=c', ['host' => ['example.com']]),
            $get('/a/../b'),
            $get('/a/%2e%2E/./.../..b/..'),
            $get('/a?x=/../../b'),
            $get('http://h'),
        ],
        'error' => null,
    ],
    [
        'name' => 'empty lines before a request line are skipped',
        'raw' => "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [$get('/'), $get('/2')],
        'error' => null,
    ],
    [
        'name' => 'Content-Length body',
        'raw' => "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world",
        'requests' => [[
            'method' => 'POST', 'target' => '/form', 'version' => '1.1',
            'headers' => ['host' => ['x'], 'content-type' => ['text/plain'], 'content-length' => ['11']],
            'body' => 'hello world',
        ]],
        'error' => null,
    ],
    [
        'name' => 'Content-Length body containing CRLFCRLF and a request line',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 24\r\n\r\nGET / HTTP/1.1\r\nA: b\r\n\r\n",
        'requests' => [[
            'method' => 'POST', 'target' => '/', 'version' => '1.1',
            'headers' => ['host' => ['x'], 'content-length' => ['24']],
            'body' => "GET / HTTP/1.1\r\nA: b\r\n\r\n",
        ]],
        'error' => null,
    ],
    [
        'name' => 'Content-Length zero, leading zeros, spaces around',
        'raw' => "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
            . "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 003\r\n\r\nabc"
            . "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length:  2 \r\n\r\nde",
        'requests' => [
            ['method' => 'POST', 'target' => '/a', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['0']]],
            ['method' => 'POST', 'target' => '/b', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['003']], 'body' => 'abc'],
            ['method' => 'POST', 'target' => '/c', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['2']], 'body' => 'de'],
        ],
        'error' => null,
    ],
    [
        'name' => 'HTTP/1.0 Content-Length body',
        'raw' => "POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc",
        'requests' => [['method' => 'POST', 'target' => '/', 'version' => '1.0', 'headers' => ['content-length' => ['3']], 'body' => 'abc']],
        'error' => null,
    ],
    [
        'name' => 'chunked body',
        'raw' => "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        'requests' => [[
            'method' => 'POST', 'target' => '/up', 'version' => '1.1',
            'headers' => ['host' => ['x'], 'transfer-encoding' => ['chunked']],
            'body' => 'hello world',
        ]],
        'error' => null,
    ],
    [
        'name' => 'chunked with extensions, hex case, leading zeros and trailers',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\nTrailer: X-Sum\r\n\r\n"
            . "0000A;name=value;flag\r\n0123456789\r\n"
            . "a ; quoted=\"a;b\"\r\nabcdefghij\r\n"
            . "1\r\n\r\r\n"
            . "0;last=1\r\nX-Sum: 42\r\nX-Other:  yes \r\n\r\n",
        'requests' => [[
            'method' => 'POST', 'target' => '/', 'version' => '1.1',
            'headers' => ['host' => ['x'], 'transfer-encoding' => ['Chunked'], 'trailer' => ['X-Sum']],
            'body' => "0123456789abcdefghij\r",
            'trailers' => ['x-sum' => ['42'], 'x-other' => ['yes']],
        ]],
        'error' => null,
    ],
    [
        'name' => 'chunked with a chunk holding CRLF and an empty-looking body',
        'raw' => "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\r\n\r\n\r\n0\r\n\r\n"
            . "PUT /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        'requests' => [
            ['method' => 'PUT', 'target' => '/', 'version' => '1.1', 'headers' => ['host' => ['x'], 'transfer-encoding' => ['chunked']], 'body' => "\r\n\r\n"],
            ['method' => 'PUT', 'target' => '/e', 'version' => '1.1', 'headers' => ['host' => ['x'], 'transfer-encoding' => ['chunked']]],
        ],
        'error' => null,
    ],
    [
        'name' => 'pipelined GET, POST, chunked POST, HTTP/1.0 GET',
        'raw' => "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
            . "POST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\ntwo!"
            . "POST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nthr\r\n2\r\nee\r\n0\r\n\r\n"
            . "GET /4 HTTP/1.0\r\n\r\n",
        'requests' => [
            $get('/1'),
            ['method' => 'POST', 'target' => '/2', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['4']], 'body' => 'two!'],
            ['method' => 'POST', 'target' => '/3', 'version' => '1.1', 'headers' => ['host' => ['x'], 'transfer-encoding' => ['chunked']], 'body' => 'three'],
            $get('/4', [], '1.0'),
        ],
        'error' => null,
    ],
    [
        'name' => 'head exactly at maxHeaderBytes',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [$get('/')],
        'error' => null,
        'limits' => ['maxHeaderBytes' => 27],
    ],
    [
        'name' => 'request line exactly at maxTargetBytes',
        'raw' => "GET /abcdefgh HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [$get('/abcdefgh')],
        'error' => null,
        'limits' => ['maxTargetBytes' => 22],
    ],
    [
        'name' => 'header count exactly at maxHeaderCount',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n",
        'requests' => [$get('/', ['host' => ['x'], 'a' => ['1'], 'b' => ['2']])],
        'error' => null,
        'limits' => ['maxHeaderCount' => 3],
    ],
    [
        'name' => 'body exactly at maxBodyBytes, Content-Length and chunked',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"
            . "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n",
        'requests' => [
            ['method' => 'POST', 'target' => '/', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['4']], 'body' => 'abcd'],
            ['method' => 'POST', 'target' => '/', 'version' => '1.1', 'headers' => ['host' => ['x'], 'transfer-encoding' => ['chunked']], 'body' => 'abcd'],
        ],
        'error' => null,
        'limits' => ['maxBodyBytes' => 4],
    ],
    [
        'name' => 'incomplete head stays buffered',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\n",
        'requests' => [],
        'error' => null,
        'partial' => true,
    ],
    [
        'name' => 'incomplete body stays buffered',
        'raw' => "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc",
        'requests' => [$get('/a')],
        'error' => null,
        'partial' => true,
    ],
    [
        'name' => 'incomplete chunked trailers stay buffered',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-T: 1\r\n",
        'requests' => [],
        'error' => null,
        'partial' => true,
    ],

    // ---- request line ---------------------------------------------------------------------
    ['name' => 'bare LF line endings', 'raw' => "GET / HTTP/1.1\nHost: x\n\n", 'requests' => [], 'error' => 400],
    ['name' => 'bare LF after a header', 'raw' => "GET / HTTP/1.1\r\nHost: x\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'bare LF inside a complete head', 'raw' => "GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'leading bare LF', 'raw' => "\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'invalid method character', 'raw' => "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'empty method', 'raw' => " / HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'double space in request line', 'raw' => "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'trailing space in request line', 'raw' => "GET / HTTP/1.1 \r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'HTTP/0.9 style request line', 'raw' => "GET /\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'lowercase protocol name', 'raw' => "GET / http/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'HTTP/2.0 request line', 'raw' => "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 505],
    ['name' => 'HTTP/1.2', 'raw' => "GET / HTTP/1.2\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 505],
    ['name' => 'HTTP/0.9 version', 'raw' => "GET / HTTP/0.9\r\n\r\n", 'requests' => [], 'error' => 505],
    ['name' => 'control byte in target', 'raw' => "GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'relative target', 'raw' => "GET a/b HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'asterisk target with GET', 'raw' => "GET * HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'CONNECT without port', 'raw' => "CONNECT example.com HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    [
        'name' => 'request line over maxTargetBytes',
        'raw' => "GET /abcdefghi HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [],
        'error' => 414,
        'limits' => ['maxTargetBytes' => 22],
    ],
    [
        'name' => 'request line over maxTargetBytes, never terminated',
        'raw' => 'GET /' . str_repeat('a', 100),
        'requests' => [],
        'error' => 414,
        'limits' => ['maxTargetBytes' => 64],
    ],
    [
        'name' => 'default request line limit',
        'raw' => 'GET /' . str_repeat('a', 8200) . " HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [],
        'error' => 414,
    ],

    // ---- header fields --------------------------------------------------------------------
    ['name' => 'missing Host in HTTP/1.1', 'raw' => "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'two Host fields', 'raw' => "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'obs-fold', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX-Long: a\r\n b\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'obs-fold with tab', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX-Long: a\r\n\tb\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'space before colon', 'raw' => "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'tab before colon', 'raw' => "GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'empty header name', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\n: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'invalid header name character', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX(y): z\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'header line without colon', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'NUL in header value', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'bare CR in header value', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", 'requests' => [], 'error' => 400],
    [
        'name' => 'head over maxHeaderBytes',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [],
        'error' => 431,
        'limits' => ['maxHeaderBytes' => 26],
    ],
    [
        'name' => 'head over the default limit, never terminated',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\n" . $bigHeader,
        'requests' => [],
        'error' => 431,
    ],
    [
        'name' => 'head over the default limit, terminated',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\n" . $bigHeader . "\r\n\r\n",
        'requests' => [],
        'error' => 431,
    ],
    [
        'name' => 'bare LF beyond the size limit is a 431',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\n" . $bigHeader . "\nX: y\r\n\r\n",
        'requests' => [],
        'error' => 431,
    ],
    [
        'name' => 'too many headers',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n",
        'requests' => [],
        'error' => 431,
        'limits' => ['maxHeaderCount' => 3],
    ],
    [
        'name' => 'too many headers at the default limit',
        'raw' => "GET / HTTP/1.1\r\nHost: x\r\n" . str_repeat("A: 1\r\n", 100) . "\r\n",
        'requests' => [],
        'error' => 431,
    ],

    // ---- framing --------------------------------------------------------------------------
    ['name' => 'Content-Length and Transfer-Encoding', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'differing Content-Length fields', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 'requests' => [], 'error' => 400],
    ['name' => 'differing Content-Length list', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\nabcd", 'requests' => [], 'error' => 400],
    ['name' => 'non-numeric Content-Length', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'negative Content-Length', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'signed Content-Length', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\na", 'requests' => [], 'error' => 400],
    ['name' => 'fractional Content-Length', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1.0\r\n\r\na", 'requests' => [], 'error' => 400],
    ['name' => 'empty Content-Length', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n", 'requests' => [], 'error' => 400],
    [
        'name' => 'Content-Length over maxBodyBytes, detected before the body',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 8388609\r\n\r\n",
        'requests' => [],
        'error' => 413,
    ],
    ['name' => 'Content-Length beyond any integer', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 'requests' => [], 'error' => 413],
    ['name' => 'Transfer-Encoding gzip', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 'requests' => [], 'error' => 501],
    ['name' => 'Transfer-Encoding gzip, chunked', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 501],
    ['name' => 'Transfer-Encoding chunked not final', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Transfer-Encoding chunked twice', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Transfer-Encoding in HTTP/1.0', 'raw' => "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'invalid chunk size', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'empty chunk size line', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'negative chunk size', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'chunk size with inner space', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1 1\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'chunk size bare LF', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'chunk data longer than its size', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'chunk size beyond any integer', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n", 'requests' => [], 'error' => 413],
    [
        'name' => 'chunked body over maxBodyBytes',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        'requests' => [],
        'error' => 413,
        'limits' => ['maxBodyBytes' => 4],
    ],
    [
        'name' => 'chunk extensions over maxChunkExtBytes',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;aaaa\r\na\r\n1;bbbbbbb\r\nb\r\n0\r\n\r\n",
        'requests' => [],
        'error' => 400,
        'limits' => ['maxChunkExtBytes' => 10],
    ],
    [
        'name' => 'chunk size line never terminated',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" . str_repeat('x', 5000),
        'requests' => [],
        'error' => 400,
    ],
    ['name' => 'invalid trailer field', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Name: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'trailer with bare LF', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\n\n", 'requests' => [], 'error' => 400],
    [
        'name' => 'trailers over maxHeaderBytes',
        'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" . $bigHeader . "\r\n\r\n",
        'requests' => [],
        'error' => 431,
    ],
    [
        'name' => 'a bad request after good pipelined ones',
        'raw' => "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nzGET / HTTP/9.9\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [
            $get('/1'),
            ['method' => 'POST', 'target' => '/2', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['1']], 'body' => 'z'],
        ],
        'error' => 505,
    ],

    // ---- framing as strict as the strictest reference (nginx, llhttp), RFC 9112 §6 ------------
    // Transfer-Encoding: exactly one field "chunked"; anything else naming chunked is refused.
    ['name' => 'TE chunked in any case with spaces', 'raw' => "POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  ChUnKeD  \r\n\r\n0\r\n\r\n", 'requests' => [['method' => 'POST', 'target' => '/t', 'version' => '1.1', 'headers' => ['host' => ['x'], 'transfer-encoding' => ['ChUnKeD']]]], 'error' => null],
    ['name' => 'TE chunked with empty parameter', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked;\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE chunked with a parameter', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked;q=1\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE leading comma', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE trailing comma', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE double trailing comma', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked,,\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE chunked; chunked', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked; chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE chunked, chunked list', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE chunked followed by a tab', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\t\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE tab before chunked', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE empty field next to chunked', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE chunked next to an empty field', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: \r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE empty', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE identity', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n", 'requests' => [], 'error' => 501],
    ['name' => 'TE chunked with a vertical tab', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\x0b\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'TE chunkedx', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunkedx\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 501],
    ['name' => 'TE quoted chunked', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],

    // Content-Length: one field, digits only.
    ['name' => 'CL identical list', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL two identical fields', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL fields equal only without leading zeros', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 005\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL with a tab inside', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\t\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL with a tab before', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\t5\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL with inner space', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1 0\r\n\r\nhelloworld", 'requests' => [], 'error' => 400],
    ['name' => 'CL with a plus sign', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL negative', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'CL hexadecimal', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x5\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL empty', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'CL empty next to a length', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\nContent-Length: 5\r\n\r\nhello", 'requests' => [], 'error' => 400],
    ['name' => 'CL beyond the body limit', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 'requests' => [], 'error' => 413],

    // Host (RFC 9112 §3.2): one valid uri-host[:port], in HTTP/1.0 as in 1.1.
    ['name' => 'Host with port and IPv6 literal', 'raw' => "GET /h HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n\r\n", 'requests' => [$get('/h', ['host' => ['[2001:db8::1]:8080']])], 'error' => null],
    ['name' => 'Host with surrounding spaces', 'raw' => "GET /h HTTP/1.1\r\nHost:   example.com:80  \r\n\r\n", 'requests' => [$get('/h', ['host' => ['example.com:80']])], 'error' => null],
    ['name' => 'Host in HTTP/1.0', 'raw' => "GET /h HTTP/1.0\r\nHost: example.com\r\n\r\n", 'requests' => [$get('/h', ['host' => ['example.com']], '1.0')], 'error' => null],
    ['name' => 'Host empty', 'raw' => "GET / HTTP/1.1\r\nHost: \r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host with inner space', 'raw' => "GET / HTTP/1.1\r\nHost: exa mple.com\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host with a tab inside', 'raw' => "GET / HTTP/1.1\r\nHost: a\tb\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host with a slash', 'raw' => "GET / HTTP/1.1\r\nHost: example.com/evil\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host with a comma', 'raw' => "GET / HTTP/1.1\r\nHost: a.com,b.com\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host with userinfo', 'raw' => "GET / HTTP/1.1\r\nHost: user@example.com\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host with a letter in the port', 'raw' => "GET / HTTP/1.1\r\nHost: example.com:8o\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host empty in HTTP/1.0', 'raw' => "GET / HTTP/1.0\r\nHost:\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'two Host fields in HTTP/1.0', 'raw' => "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'Host with a slash in HTTP/1.0', 'raw' => "GET / HTTP/1.0\r\nHost: a/b\r\n\r\n", 'requests' => [], 'error' => 400],

    // Methods: registered upper-case tokens (Limits::DEFAULT_METHODS, configurable).
    ['name' => 'lowercase method', 'raw' => "get / HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'mixed-case method', 'raw' => "Get / HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'unknown upper-case method', 'raw' => "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 501],
    ['name' => 'unknown upper-case method on a malformed line', 'raw' => "NOT HTTP\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'unknown upper-case method with an unsupported version', 'raw' => "BREW / HTTP/2.0\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 505],
    ['name' => 'configured extra method', 'raw' => "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [['method' => 'BREW', 'target' => '/pot', 'version' => '1.1', 'headers' => ['host' => ['x']]]], 'error' => null, 'limits' => ['methods' => ['GET', 'BREW']]],
    ['name' => 'method outside a configured list', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 'requests' => [], 'error' => 501, 'limits' => ['methods' => ['GET']]],
    ['name' => 'body bytes glued to the next request line', 'raw' => "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloworldGET /b HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [['method' => 'POST', 'target' => '/a', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['5']], 'body' => 'hello']], 'error' => 400],
    ['name' => 'upper-case leftovers glued to the next request line', 'raw' => "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nOKGET /b HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [['method' => 'POST', 'target' => '/a', 'version' => '1.1', 'headers' => ['host' => ['x'], 'content-length' => ['1']], 'body' => 'O']], 'error' => 501],

    // A head is judged at its first invalid byte: these never send their CRLFCRLF.
    ['name' => 'invalid method byte, head never ends', 'raw' => "GE\x01T / HTTP/1.1\r\nHost: x\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'lowercase method, head never ends', 'raw' => "post / HTTP/1.1\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'bad version, head never ends', 'raw' => "GET / HTTQ/1.1\r\nHost: x\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'HTTP/3.0, head never ends', 'raw' => "GET / HTTP/3.0\r\n", 'requests' => [], 'error' => 505],
    ['name' => 'non-token byte in a header name, head never ends', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX(Bad): 1\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'space in a header name, head never ends', 'raw' => "GET / HTTP/1.1\r\nX Y: 1", 'requests' => [], 'error' => 400],
    ['name' => 'NUL in a header value, head never ends', 'raw' => "GET / HTTP/1.1\r\nX: a\x00b", 'requests' => [], 'error' => 400],
    ['name' => 'bare CR in a header value, head never ends', 'raw' => "GET / HTTP/1.1\r\nX: a\rb", 'requests' => [], 'error' => 400],
    ['name' => 'obs-fold, head never ends', 'raw' => "GET / HTTP/1.1\r\nX: a\r\n b", 'requests' => [], 'error' => 400],
    ['name' => 'control byte in target, head never ends', 'raw' => "GET /a\x7fb", 'requests' => [], 'error' => 400],
    ['name' => 'valid prefix stays partial', 'raw' => "GET /ok HTTP/1.1\r\nHost: x\r\nX-A: b", 'requests' => [], 'error' => null, 'partial' => true],
    ['name' => 'lone CR before a request stays partial', 'raw' => "\r\n\r", 'requests' => [], 'error' => null, 'partial' => true],
    [
        'name' => 'an invalid byte early outranks the line limit',
        'raw' => "G\x01T /" . str_repeat('a', 100) . " HTTP/1.1\r\nHost: x\r\n\r\n",
        'requests' => [],
        'error' => 400,
        'limits' => ['maxTargetBytes' => 64],
    ],

    // From public parser suites (llhttp, RFC 9112 examples), re-expressed as data.
    ['name' => 'header value with obs-text', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nX-Test: \xe2\x9c\x93\r\n\r\n", 'requests' => [$get('/', ['host' => ['x'], 'x-test' => ["\xe2\x9c\x93"]])], 'error' => null],
    ['name' => 'LF before CR in a header line', 'raw' => "GET / HTTP/1.1\r\nHost: x\n\r\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'request line with a tab separator', 'raw' => "GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'version with two-digit major', 'raw' => "GET / HTTP/11.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'version without minor', 'raw' => "GET / HTTP/1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'header line without a colon', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'chunk extension is accepted', 'raw' => "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;name=value\r\nabc\r\n0\r\n\r\n", 'requests' => [['method' => 'POST', 'target' => '/e', 'version' => '1.1', 'headers' => ['host' => ['x'], 'transfer-encoding' => ['chunked']], 'body' => 'abc']], 'error' => null],
    ['name' => 'chunk size with leading zeros', 'raw' => "POST /z HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0003\r\nabc\r\n0\r\n\r\n", 'requests' => [['method' => 'POST', 'target' => '/z', 'version' => '1.1', 'headers' => ['host' => ['x'], 'transfer-encoding' => ['chunked']], 'body' => 'abc']], 'error' => null],
    ['name' => 'chunk without its CRLF after the data', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'CONNECT with userinfo in authority', 'raw' => "CONNECT user@example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 'requests' => [], 'error' => 400],

    // ---- refused like nginx: targets no application should see (Syntax::targetError) -------------
    ['name' => 'CONNECT authority-form', 'raw' => "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'CONNECT IPv6 authority', 'raw' => "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'CONNECT origin-form', 'raw' => "CONNECT /x HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'OPTIONS asterisk-form', 'raw' => "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'userinfo in an absolute-form target', 'raw' => "GET http://user@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'user and password in an absolute-form target', 'raw' => "GET http://u:p@h/a HTTP/1.1\r\nHost: h\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'dot-segment above the root', 'raw' => "GET /../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'dot-segments climbing past the root', 'raw' => "GET /a/../../b HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'dot-segment last, above the root', 'raw' => "GET /.. HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'percent-encoded dot-segment', 'raw' => "GET /%2e%2E/x HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'percent-encoded slashes around dot-segments', 'raw' => "GET /a%2f..%2F..%2fx HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'empty segment then dot-segment', 'raw' => "GET //../a HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'dot-segment in an absolute-form path', 'raw' => "GET http://x/../b HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'refused target after a good request', 'raw' => "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /../x HTTP/1.1\r\nHost: x\r\n\r\n", 'requests' => [$get('/')], 'error' => 400],

    // ---- a head fails at its first offending line (HeadScanner judges each as it ends) ---------
    ['name' => 'bad Content-Length before a missing Host', 'raw' => "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 'requests' => [], 'error' => 400],
    ['name' => 'unknown coding before a second Transfer-Encoding', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", 'requests' => [], 'error' => 501],
    ['name' => 'Content-Length over the body limit before a second Host', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\nHost: y\r\n\r\n", 'requests' => [], 'error' => 413],
    ['name' => 'second Host before a bad Content-Length', 'raw' => "POST / HTTP/1.1\r\nHost: x\r\nHost: y\r\nContent-Length: 99999999999\r\n\r\n", 'requests' => [], 'error' => 400],
];
