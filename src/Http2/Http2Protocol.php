<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\Http\Server\HttpProtocol;
use Weft\Server\Connection;
use Weft\Server\Protocol;
use Weft\Server\Session;
use Weft\Server\Timeouts;

/**
 * HTTP/2 (RFC 9113) beside HTTP/1.1 on the same listener: a connection becomes HTTP/2 when TLS's ALPN
 * chose "h2" or, in cleartext, when it opens with the client preface (h2c with prior knowledge). What
 * the HTTP/1.1 side owns is shared, not copied: the application call, the access log, the metrics, the
 * limits and timeouts (HttpProtocol). Each connection's state is an Http2Session.
 *
 * Pure PHP on purpose, with and without the extension: one implementation answers for both paths, and
 * the frames a server reads are few and simple; what costs is HPACK and the per-stream bookkeeping.
 * libnghttp2 could later sit behind the extension for speed, with this as the fallback and the oracle.
 *
 * The limits a hostile client probes first, each answered with a GOAWAY (the connection closed) or an
 * RST_STREAM (that stream only), the worker serving the others:
 * - streams beyond $maxConcurrentStreams (--http2-max-streams): RST_STREAM REFUSED_STREAM;
 * - a header list beyond --max-header (SETTINGS_MAX_HEADER_LIST_SIZE): 431 on that stream while HPACK
 *   stays in step, COMPRESSION_ERROR when it cannot (an HPACK bomb is refused by the decoder's limit);
 * - a header block of more than $maxContinuationFrames CONTINUATION frames or 4 x the list size plus
 *   one frame: ENHANCE_YOUR_CALM (CONTINUATION flood);
 * - more than $maxResets (--http2-max-resets) streams reset by the client, or $maxPings PINGs, or $maxSettings SETTINGS, or
 *   $maxEmptyFrames frames that carry nothing (empty DATA, PRIORITY, WINDOW_UPDATE on closed streams)
 *   within FLOOD_WINDOW seconds: ENHANCE_YOUR_CALM (rapid reset, CVE-2023-44487, and the 2019 floods);
 * - a frame above SETTINGS_MAX_FRAME_SIZE: FRAME_SIZE_ERROR; a bad preface: closed;
 * - our SETTINGS not acknowledged within --header-timeout: SETTINGS_TIMEOUT (§6.5.3);
 * - DATA held back by a peer's closed window for --send-timeout without progress: the connection closed.
 */
final class Http2Protocol implements Protocol
{
    public const DEFAULT_MAX_CONCURRENT_STREAMS = 100;
    public const DEFAULT_MAX_RESETS = 200;
    public const DEFAULT_MAX_PINGS = 100;
    public const DEFAULT_MAX_SETTINGS = 100;
    public const DEFAULT_MAX_EMPTY_FRAMES = 1000;
    public const DEFAULT_MAX_CONTINUATION_FRAMES = 32;
    /** The floods above count within this many seconds. */
    public const FLOOD_WINDOW = 10.0;

    /** SETTINGS_MAX_HEADER_LIST_SIZE: --max-header, counted as RFC 7541 counts (name + value + 32 a field). */
    public readonly int $maxHeaderList;

    public function __construct(
        public readonly HttpProtocol $http,
        public readonly int $maxConcurrentStreams = self::DEFAULT_MAX_CONCURRENT_STREAMS,
        public readonly int $maxResets = self::DEFAULT_MAX_RESETS,
        public readonly int $maxPings = self::DEFAULT_MAX_PINGS,
        public readonly int $maxSettings = self::DEFAULT_MAX_SETTINGS,
        public readonly int $maxEmptyFrames = self::DEFAULT_MAX_EMPTY_FRAMES,
        public readonly int $maxContinuationFrames = self::DEFAULT_MAX_CONTINUATION_FRAMES,
    ) {
        if ($maxConcurrentStreams < 1) {
            throw new \InvalidArgumentException('HTTP/2 needs at least one concurrent stream');
        }
        if ($maxResets < 1) {
            throw new \InvalidArgumentException('HTTP/2 must let a client reset at least one stream');
        }
        $limits = $http->options->limits;
        $this->maxHeaderList = $limits->maxHeaderBytes + 32 * \min($limits->maxHeaderCount, 100);
    }

    public function open(Connection $connection): Session
    {
        return new Http2Session($this, $connection);
    }

    public function refusal(string $reason): string
    {
        return $this->http->refusal($reason);
    }

    public function timeouts(): Timeouts
    {
        return $this->http->timeouts();
    }
}
