<?php

declare(strict_types=1);

namespace Weft\Http\Fuzz;

use Psr\Log\NullLogger;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\RequestParser;
use Weft\Http\Server\HttpOptions;
use Weft\Http\Server\HttpProtocol;
use Weft\Loop\Loop;
use Weft\Server\Connection;
use Weft\Server\Connections;
use Weft\Server\Dispatcher;

/**
 * The differential oracle for whole connections: a byte stream goes into one real server connection
 * (Connections, Connection, HttpSession, Dispatcher, the loop, over a socket pair) and the bytes that
 * come back are the outcome. Every path that can serve a connection must give the very same bytes for
 * the same input, fed at once or split (the Date field aside, and the interim 100 Continue, which only
 * a split body can earn): today the PHP parser and encoder ('php'), and the extension's head parser in
 * front of PHP's with its encoder of the common response ('native-head', and 'native-conn' with the
 * connection's I/O in C); a native connection path is held to the same bytes by this class.
 *
 * The application echoes what it was given (request line, every header, the body's length and hash),
 * so a request parsed differently shows in the bytes.
 */
final class ConnectionOracle
{
    /** A run that has not ended by then (the server neither answered nor closed) is a failure. */
    private const RUN_LIMIT = 5.0;

    private readonly \Closure $application;

    public function __construct(private readonly Limits $limits = new Limits())
    {
        $this->application = static function (Request $request): Response {
            $echo = $request->method() . ' ' . $request->target() . ' HTTP/' . $request->version() . "\n";
            foreach ($request->headers() as $name => $values) {
                foreach ($values as $value) {
                    $echo .= $name . ': ' . $value . "\n";
                }
            }
            foreach ($request->trailers() as $name => $values) {
                foreach ($values as $value) {
                    $echo .= 'trailer ' . $name . ': ' . $value . "\n";
                }
            }
            $echo .= 'body ' . \strlen($request->body()) . ' ' . \md5($request->body()) . "\n";
            return new Response(200, ['Content-Type' => 'text/plain'], $echo);
        };
    }

    /**
     * The paths this process can serve a connection by: 'php' always (PHP streams, parser and encoder),
     * 'native-head' with the extension (its head parser in front of PHP's), 'native-conn' on the native
     * loop (the connection's reads and writes in C, Weft\Ext\Conn, and the Requests it frames).
     */
    public static function paths(): array
    {
        if (!\function_exists('Weft\Ext\parseHead')) {
            return ['php'];
        }
        return \class_exists(\Weft\Ext\Conn::class, false) && Loop::get() instanceof \Weft\Ext\Loop
            ? ['php', 'native-head', 'native-conn'] : ['php', 'native-head'];
    }

    /**
     * Feeds $data at once and split (chunks of 1 to 16 bytes, from $splitSeed) on every path.
     *
     * @return string the response bytes of the first path, fed at once (Date normalised)
     * @throws FuzzFailure when two paths, or the whole and the split input, disagree
     */
    public function check(string $data, int $splitSeed): string
    {
        $chunks = ParserOracle::split($data, $splitSeed);
        $first = null;
        foreach (self::paths() as $path) {
            $whole = $this->serve([$data], $path);
            $split = $this->serve($chunks, $path);
            if (self::final($split) !== self::final($whole)) {
                throw new FuzzFailure(\sprintf('%s path: split and whole input get different answers: %s vs %s', $path, self::show($split), self::show($whole)));
            }
            if ($first === null) {
                $first = [$path, $whole, $split];
                continue;
            }
            foreach (['at once' => [$first[1], $whole], 'split' => [$first[2], $split]] as $how => [$reference, $answer]) {
                if ($answer !== $reference) {
                    throw new FuzzFailure(\sprintf('the %s and %s paths answer differently (%s): %s vs %s', $path, $first[0], $how, self::show($answer), self::show($reference)));
                }
            }
        }
        return $first[1];
    }

    /**
     * One connection on $path: writes the chunks one per loop turn, then ends its sending side, and
     * reads until the server closes. Runs on the current loop (Loop::get()), which must not be running.
     *
     * @param list<string> $chunks
     * @return string what the server sent, Date values replaced by "-"
     * @throws FuzzFailure when the server neither closes nor answers within RUN_LIMIT
     */
    public function serve(array $chunks, string $path): string
    {
        $driver = Loop::get();
        $logger = new NullLogger();
        $before = RequestParser::nativeHead();
        RequestParser::useNativeHead($path !== 'php');
        Connection::useNativeIo($path === 'native-conn');
        ResponseEncoder::useNativeEncode($path !== 'php');
        try {
            $protocol = new HttpProtocol($this->application, $logger, new HttpOptions(limits: $this->limits));
            $connections = new Connections($protocol, new Dispatcher($driver, $logger), $driver, $logger, 16);
            [$server, $client] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
            $connections->add($server, '127.0.0.1:40000');
        } finally {
            RequestParser::useNativeHead($before);
            Connection::useNativeIo(null);
            ResponseEncoder::useNativeEncode(null);
        }
        \stream_set_blocking($client, false);
        $received = '';
        $ended = false;
        $reader = $driver->onReadable($client, static function () use ($client, &$received, &$ended, $driver): void {
            $data = @\fread($client, 65536);
            if ($data === false || ($data === '' && \feof($client))) {
                $ended = true;
                $driver->stop();
                return;
            }
            $received .= $data;
        });
        $limit = $driver->delay(self::RUN_LIMIT, static fn () => $driver->stop());
        $next = 0;
        $pending = null;
        $write = static function () use (&$write, &$next, &$pending, $chunks, $client, $driver): void {
            $pending = null;
            if ($next < \count($chunks)) {
                // A socket pair's buffer takes any case whole: no partial write to go on from. A server
                // that has closed (an error answered) takes nothing more: the rest is not sent.
                if (@\fwrite($client, $chunks[$next++]) !== false) {
                    $pending = $driver->defer($write);
                    return;
                }
                \error_clear_last();
            }
            @\stream_socket_shutdown($client, \STREAM_SHUT_WR);
        };
        $pending = $driver->defer($write);
        $driver->run();
        $driver->cancel($reader);
        $driver->cancel($limit);
        if ($pending !== null) {
            $driver->cancel($pending);
        }
        $connections->closeAll();
        \fclose($client);
        if (!$ended) {
            throw new FuzzFailure(\sprintf('%s path: the connection did not end within %.0f s; received %s', $path, self::RUN_LIMIT, self::show($received)));
        }
        return (string) \preg_replace('/\r\nDate: [^\r\n]*+/', "\r\nDate: -", $received);
    }

    /** The answers without the interim 100 Continue, which depends on how the body arrived. */
    private static function final(string $answers): string
    {
        return \str_replace("HTTP/1.1 100 Continue\r\n\r\n", '', $answers);
    }

    private static function show(string $bytes): string
    {
        return (string) \json_encode(\strlen($bytes) > 600 ? \substr($bytes, 0, 600) . '...' : $bytes, \JSON_INVALID_UTF8_SUBSTITUTE);
    }
}
