<?php

declare(strict_types=1);

namespace Weft\Http\Fuzz;

use Random\Engine\Mt19937;
use Random\Randomizer;
use Weft\Http\Message\Request;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\RequestParser;

/**
 * What the pure parser must do with any input: throw nothing but an HttpError with a status of its
 * own (never crash), produce only requests whose parts are well-formed, and reach the very same result
 * whether the bytes arrive at once or split anywhere. With the extension loaded, also: the parser with
 * the native head parser in front (Weft\Ext\parseHead) gives exactly what the pure PHP one gives, down to
 * every header, error message and buffered byte, fed at once and split.
 */
final class ParserOracle
{
    public const STATUSES = [400, 413, 414, 431, 501, 505];

    public function __construct(private readonly Limits $limits = new Limits())
    {
    }

    /**
     * $data cut into chunks of 1 to 16 bytes, where $splitSeed says: the split input every oracle feeds
     * beside the whole, the same for the same seed.
     *
     * @return list<string>
     */
    public static function split(string $data, int $splitSeed): array
    {
        $random = new Randomizer(new Mt19937($splitSeed & 0x7fffffff));
        $chunks = [];
        for ($at = 0; $at < \strlen($data);) {
            $length = $random->getInt(1, 16);
            $chunks[] = \substr($data, $at, $length);
            $at += $length;
        }
        return $chunks;
    }

    /**
     * @return array{requests: list<string>, error: ?int, partial: ?bool, close: ?int} the outcome fed at once;
     *         close: the index of the first request after which the connection ends (Connection: close, HTTP/1.0)
     * @throws FuzzFailure
     */
    public function check(string $data, int $splitSeed): array
    {
        $whole = $this->feed([$data]);
        $chunks = self::split($data, $splitSeed);
        $split = $this->feed($chunks);
        if ($split !== $whole) {
            unset($split['close'], $whole['close']);
            throw new FuzzFailure(\sprintf('split and whole input disagree: %s vs %s', \json_encode($split), \json_encode($whole)));
        }
        if (\function_exists('Weft\Ext\parseHead')) {
            foreach (['at once' => [$data], 'split' => $chunks] as $how => $pieces) {
                $php = self::trace($pieces, new RequestParser($this->limits, null, false));
                $native = self::trace($pieces, new RequestParser($this->limits, null, true));
                if ($php !== $native) {
                    throw new FuzzFailure(\sprintf(
                        'the native head parser and the PHP parser disagree (%s): native %s, php %s',
                        $how,
                        \json_encode($native, \JSON_INVALID_UTF8_SUBSTITUTE),
                        \json_encode($php, \JSON_INVALID_UTF8_SUBSTITUTE),
                    ));
                }
            }
        }
        return $whole;
    }

    /**
     * Everything a parser's user can observe, in order: each request in full, each 100-continue, the
     * error (status and message), the failed or pending request line, what stays buffered.
     *
     * @param list<string> $chunks
     * @return list<mixed>
     */
    public static function trace(array $chunks, RequestParser $parser): array
    {
        $trace = [];
        try {
            foreach ($chunks as $chunk) {
                $parser->push($chunk);
                while (($request = $parser->next()) !== null) {
                    $trace[] = [
                        $request->method(), $request->target(), $request->version(), $request->headers(),
                        $request->body(), $request->trailers(), $request->keepAlive(),
                    ];
                }
                if ($parser->needsContinue()) {
                    $trace[] = '100-continue';
                }
            }
        } catch (HttpError $e) {
            $trace[] = [$e->status, $e->getMessage(), $parser->failedLine()];
        }
        $trace[] = [$parser->hasPartial(), $parser->inBody(), $parser->bufferedBytes(), $parser->pendingLine(), $parser->partialLine()];
        return $trace;
    }

    /**
     * @param list<string> $chunks
     * @return array{requests: list<string>, error: ?int, partial: ?bool, close: ?int}
     */
    private function feed(array $chunks): array
    {
        $parser = new RequestParser($this->limits);
        $requests = [];
        $error = null;
        $close = null;
        try {
            foreach ($chunks as $chunk) {
                $parser->push($chunk);
                while (($request = $parser->next()) !== null) {
                    $requests[] = $this->describe($request);
                    if ($close === null && !$request->keepAlive()) {
                        $close = \count($requests) - 1;
                    }
                }
            }
        } catch (HttpError $e) {
            if (!\in_array($e->status, self::STATUSES, true)) {
                throw new FuzzFailure("unexpected error status {$e->status}: {$e->getMessage()}");
            }
            $error = $e->status;
        } catch (\Throwable $e) {
            throw new FuzzFailure('the parser crashed: ' . $e::class . ': ' . $e->getMessage() . ' at ' . $e->getFile() . ':' . $e->getLine());
        }
        return ['requests' => $requests, 'error' => $error, 'partial' => $error === null ? $parser->hasPartial() : null, 'close' => $close];
    }

    private function describe(Request $request): string
    {
        $method = $request->method();
        if (!isset($this->limits->methodSet[$method])) {
            throw new FuzzFailure("accepted an unknown method " . \json_encode($method));
        }
        if (\preg_match('/[\x00-\x20\x7f]/', $request->target()) === 1) {
            throw new FuzzFailure('accepted a target with a control byte or space');
        }
        foreach ($request->headers() as $name => $values) {
            if (\preg_match('/\A[!#$%&\'*+\-.^_`|~0-9a-z]+\z/', (string) $name) !== 1) {
                throw new FuzzFailure('accepted a header name ' . \json_encode($name));
            }
            foreach ($values as $value) {
                if (\strpbrk($value, "\r\n\0") !== false) {
                    throw new FuzzFailure('accepted CR, LF or NUL in a header value');
                }
            }
        }
        return $method . ' ' . $request->target() . ' ' . \strlen($request->body());
    }
}
