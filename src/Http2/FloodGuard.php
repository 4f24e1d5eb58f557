<?php

declare(strict_types=1);

namespace Weft\Http2;

/**
 * Counts the frames that cost the server work the client never waits for (rapid reset, CVE-2023-44487;
 * the 2019 PING, SETTINGS and empty-frame floods, CVE-2019-9512/9515/9518) within
 * Http2Protocol::FLOOD_WINDOW seconds; one over its limit is a connection error, ENHANCE_YOUR_CALM.
 *
 * @internal
 */
final class FloodGuard
{
    private float $since = 0.0;
    private int $resets = 0;
    private int $pings = 0;
    private int $settings = 0;
    private int $empty = 0;

    /** @param \Closure(): float $now the loop's clock, in seconds */
    public function __construct(
        private readonly int $maxResets,
        private readonly int $maxPings,
        private readonly int $maxSettings,
        private readonly int $maxEmptyFrames,
        private readonly \Closure $now,
    ) {
    }

    /** @throws Http2Error */
    public function reset(): void
    {
        $this->window();
        if (++$this->resets > $this->maxResets) {
            // Streams opened and cancelled at once cost the server work the client never waits for.
            throw Http2Error::connection(Frame::ENHANCE_YOUR_CALM, 'too many streams reset by the client');
        }
    }

    /** @throws Http2Error */
    public function ping(): void
    {
        $this->window();
        if (++$this->pings > $this->maxPings) {
            throw Http2Error::connection(Frame::ENHANCE_YOUR_CALM, 'too many PING frames');
        }
    }

    /** @throws Http2Error */
    public function settings(): void
    {
        $this->window();
        if (++$this->settings > $this->maxSettings) {
            throw Http2Error::connection(Frame::ENHANCE_YOUR_CALM, 'too many SETTINGS frames');
        }
    }

    /** A frame that carries nothing (empty DATA, PRIORITY, WINDOW_UPDATE on a closed stream). @throws Http2Error */
    public function empty(): void
    {
        $this->window();
        if (++$this->empty > $this->maxEmptyFrames) {
            throw Http2Error::connection(Frame::ENHANCE_YOUR_CALM, 'too many frames that carry nothing');
        }
    }

    /** Starts a new window when the last one is over. */
    private function window(): void
    {
        $now = ($this->now)();
        if ($now - $this->since >= Http2Protocol::FLOOD_WINDOW) {
            $this->since = $now;
            $this->resets = $this->pings = $this->settings = $this->empty = 0;
        }
    }
}
