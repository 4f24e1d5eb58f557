<?php

declare(strict_types=1);

namespace Weft\Bridge\HttpFoundation;

use Symfony\Component\HttpFoundation\BinaryFileResponse;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Symfony\Component\HttpFoundation\StreamedResponse;
use Weft\Coroutine\OutputBuffers;
use Weft\Hook\BlockingDetector;
use Weft\Hook\ExitTrap;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Response;
use Weft\Server\InFlight;

/**
 * Turns an HttpFoundation response into a Weft response.
 *
 * A plain response keeps its content string (no copy). A StreamedResponse, StreamedJsonResponse or
 * BinaryFileResponse becomes a Weft streamed response: its sendContent() runs when Weft writes the
 * body, and whatever it echoes goes to the client as it is written (an output buffer whose handler
 * forwards every write), so a large file or a long stream is never held in memory.
 * Transfer-Encoding is left to Weft's encoder; a Content-Length is kept, so a streamed body of
 * declared length is sent with that length instead of chunked, and a HEAD response describes the body
 * it does not send.
 *
 * @internal shared by the Symfony and Laravel bridges
 */
final class ResponseConverter
{
    /**
     * Runs the framework with whatever the application echoes (a stray echo, var_dump(), dump())
     * caught, instead of landing on the worker's stdout.
     *
     * An exit() (or dd(), which dumps and exits) in the request ends it as under PHP-FPM: the answer
     * is what the application printed before it, status 200 (500 after dd(), which sets it under a
     * web SAPI), with PHP's default content type, and the framework's own response is dropped. With
     * the `exit` hook the exit is a Weft\Ext\ExitException that the framework catches and renders as
     * an error page; the extension shows it to ExitTrap first, which is how it is recognized here.
     * The server log gets one line naming the request and where exit() or dd() was called.
     *
     * @template T
     * @param \Closure(): T $handle
     * @return array{T|SymfonyResponse, string} the result (or the exit's response) and the output
     */
    public static function capture(\Closure $handle): array
    {
        $level = ob_get_level();
        ob_start();
        $output = '';
        $result = $failure = null;
        // One left over from a call before this one is not this call's.
        ExitTrap::take();
        BlockingDetector::boundary();
        try {
            $result = $handle();
        } catch (\Throwable $e) {
            $failure = $e;
        } finally {
            BlockingDetector::boundary();
            // The application may have left buffers of its own open: collect them too.
            while (ob_get_level() > $level) {
                $output = ob_get_clean() . $output;
            }
        }
        // Whatever the framework made of it (an error page, or nothing when it let it through),
        // under PHP-FPM nothing after the exit() ran.
        $exit = ExitTrap::take();
        if ($exit !== null) {
            return [self::exited($exit, $output), ''];
        }
        if ($failure !== null) {
            throw $failure;
        }
        return [$result, $output];
    }

    /** What PHP-FPM sends for a request that called exit() or dd(), logged. */
    private static function exited(\Throwable $exit, string $output): SymfonyResponse
    {
        [$call, $file, $line] = ['exit()', $exit->getFile(), $exit->getLine()];
        // symfony/var-dumper's dd() function dumps and calls exit(1); where the application called
        // it (the outermost dd frame: a collection's or a query's ->dd() calls the function) is
        // what its author looks for.
        $trace = $exit->getTrace();
        if (\in_array(true, \array_map(static fn (array $frame): bool => $frame['function'] === 'dd' && !isset($frame['class']), $trace), true)) {
            $call = 'dd()';
            foreach ($trace as $frame) {
                if ($frame['function'] === 'dd' && isset($frame['file'])) {
                    [$file, $line] = [$frame['file'], $frame['line'] ?? 0];
                }
            }
        }
        $status = $call === 'dd()' ? 500 : 200;
        \Weft\logger()->warning('{request} called {call} at {file}:{line}: answered {status} with the {bytes} bytes it printed before, as under PHP-FPM; the framework\'s response was dropped', [
            'request' => InFlight::current() ?? 'a request', 'call' => $call, 'file' => $file, 'line' => $line,
            'status' => $status, 'bytes' => \strlen($output),
        ]);
        $type = (string) ini_get('default_mimetype');
        $charset = (string) ini_get('default_charset');
        return new SymfonyResponse($output, $status, $type === '' ? [] : [
            'Content-Type' => $charset !== '' && str_starts_with($type, 'text/') ? "$type; charset=$charset" : $type,
        ]);
    }

    /**
     * One request through a framework: $handle runs it, its answer is converted, and $finish (the
     * bridge's terminate-and-reset step) runs exactly once: now for a whole answer, once the body is out
     * for a streamed one, or before a failure is rethrown.
     *
     * @param \Closure(): array{SymfonyResponse, string, bool} $handle the framework's response, what the
     *        application echoed (capture()), and whether its work after the response waits for the body
     *        ($finishAfterBody)
     * @param \Closure(): void $finish
     * @param \Closure(\Closure): mixed $within runs the body's production (Instance::run())
     */
    public function answer(\Closure $handle, bool $isHead, \Closure $finish, \Closure $within): Response
    {
        try {
            [$frameworkResponse, $echoed, $finishAfterBody] = $handle();
            [$response, $streamed] = $this->convert($frameworkResponse, $isHead, $finish, $echoed, $finishAfterBody, $within);
        } catch (\Throwable $e) {
            $finish();
            throw $e;
        }
        if (!$streamed) {
            $finish();
        }
        return $response;
    }

    /**
     * @param \Closure(): void $finish runs once the body is complete (or could not be sent): the
     *        bridge's terminate-and-reset step
     * @param string $echoed output the application echoed while handling the request: sent before
     *        the body, where PHP-FPM would have sent it
     * @param bool $finishAfterBody even a plain body is sent through a producer (raw, with its
     *        Content-Length) so that $finish runs once it is on the wire, as fastcgi_finish_request()
     *        allows under PHP-FPM: for applications with work to do after the response
     * @param null|\Closure(\Closure): mixed $within runs the body's production (Instance::run())
     * @return array{Response, bool} the response, and whether it is streamed ($finish then runs when
     *         the stream ends instead of by the caller)
     */
    public function convert(SymfonyResponse $response, bool $isHead, \Closure $finish, string $echoed = '', bool $finishAfterBody = false, ?\Closure $within = null): array
    {
        $headers = [];
        foreach ($response->headers->allPreserveCaseWithoutCookies() as $name => $values) {
            $lower = strtolower($name);
            if ($lower !== 'transfer-encoding' && ($echoed === '' || $lower !== 'content-length')) {
                $headers[$name] = $values;
            }
        }
        $cookies = $response->headers->getCookies();
        if ($cookies !== []) {
            $headers['Set-Cookie'] = array_map('strval', $cookies);
        }
        $status = $response->getStatusCode();

        if ($isHead || (!self::isStreamed($response) && !$finishAfterBody)) {
            // HEAD: the encoder sends no body; a streamed one is not even produced.
            if ($isHead) {
                self::deleteFileAfterSend($response);
            }
            return [new Response($status, $headers, $isHead ? '' : $echoed . $response->getContent()), false];
        }
        if ($response instanceof BinaryFileResponse) {
            // Should the body never be produced (the client left first), the file goes all the same.
            $finish = static function () use ($finish, $response): void {
                try {
                    $finish();
                } finally {
                    self::deleteFileAfterSend($response);
                }
            };
        }
        $guard = new FinishGuard($finish);
        if (!self::isStreamed($response)) {
            $body = $echoed . $response->getContent();
            foreach (array_keys($headers) as $name) {
                if (strcasecmp($name, 'content-length') === 0) {
                    unset($headers[$name]);
                }
            }
            $headers['Content-Length'] = (string) \strlen($body);
            return [Response::stream(static function (BodyWriter $out) use ($body, $guard): void {
                try {
                    $out->write($body);
                } finally {
                    $guard->run();
                }
            }, $status, $headers), true];
        }
        $produce = static function (BodyWriter $out) use ($response, $guard, $echoed): void {
            try {
                if ($echoed !== '') {
                    $out->write($echoed);
                }
                self::send($response, $out);
            } finally {
                $guard->run();
            }
        };
        // The application's own callback (a StreamedResponse) runs with its framework instance's state
        // in place, whichever coroutine writes the body.
        $streamed = Response::stream(
            $within === null ? $produce : static fn (BodyWriter $out) => $within(static fn () => $produce($out)),
            $status,
            $headers,
        );
        return [$streamed, true];
    }

    private static function isStreamed(SymfonyResponse $response): bool
    {
        return $response instanceof StreamedResponse || $response instanceof BinaryFileResponse
            || $response->getContent() === false;
    }

    /**
     * What BinaryFileResponse::deleteFileAfterSend() asks for, when its sendContent() (which deletes
     * the file once sent) does not run: a HEAD request, whose body PHP-FPM discards after
     * sendContent() has run all the same, or a body never produced. A generated export must not stay
     * in the temporary directory because a client asked for its headers only.
     */
    private static function deleteFileAfterSend(SymfonyResponse $response): void
    {
        if (!$response instanceof BinaryFileResponse) {
            return;
        }
        $delete = (function (): bool {
            return $this->deleteFileAfterSend && (!property_exists($this, 'tempFileObject') || $this->tempFileObject === null);
        })->call($response);
        $path = $response->getFile()->getPathname();
        if ($delete && is_file($path)) {
            @unlink($path);
        }
    }

    /** Runs sendContent() with its output forwarded to $out write by write. */
    private static function send(SymfonyResponse $response, BodyWriter $out): void
    {
        $failure = null;
        $level = ob_get_level();
        // chunk size 1: the handler runs on every write, so each echo/flush reaches the client now.
        OutputBuffers::start(static function (string $chunk) use ($out, &$failure): string {
            if ($chunk !== '' && $failure === null) {
                try {
                    $out->write($chunk);
                } catch (\Throwable $e) {
                    // An output handler must not throw; keep the first error and drop the rest.
                    $failure = $e;
                }
            }
            return '';
        }, 1);
        try {
            $response->sendContent();
        } finally {
            while (ob_get_level() > $level) {
                ob_end_flush();
            }
        }
        if ($failure !== null) {
            throw $failure;
        }
    }
}
