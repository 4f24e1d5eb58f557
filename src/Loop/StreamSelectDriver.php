<?php

declare(strict_types=1);

namespace Weft\Loop;

use Weft\Loop\Internal\AbstractDriver;
use Weft\Loop\Internal\Watcher;

/**
 * The portable backend: stream_select(2). Cost per wait is linear in the number of watched streams, and
 * descriptors numbered FD_SETSIZE (1024) or above cannot be watched at all (see canWatch()).
 */
final class StreamSelectDriver extends AbstractDriver
{
    /** @var array<int, resource> */
    private array $readStreams = [];
    /** @var array<int, array<string, Watcher>> */
    private array $readWatchers = [];
    /** @var array<int, resource> */
    private array $writeStreams = [];
    /** @var array<int, array<string, Watcher>> */
    private array $writeWatchers = [];
    /** With the native extension: TLS streams it reads ahead may hold records select cannot see (tlsUnread()). */
    private readonly bool $tlsUnread;

    public function __construct()
    {
        parent::__construct();
        $this->tlsUnread = \function_exists('Weft\\Ext\\tlsUnread');
    }

    public function name(): string
    {
        return 'select';
    }

    public function canWatch(mixed $stream): bool
    {
        // PHP offers no way to read a stream's descriptor number, but stream_select() refuses the
        // whole set (with a warning) when one descriptor is too high: probe the stream alone, once.
        $read = [$stream];
        $write = $except = null;
        $ok = @\stream_select($read, $write, $except, 0) !== false;
        return $ok;
    }

    protected function activateStream(Watcher $watcher): void
    {
        $id = $watcher->streamId;
        if (!$watcher->probed) {
            if (!isset($this->readStreams[$id]) && !isset($this->writeStreams[$id]) && !$this->canWatch($watcher->stream)) {
                $watcher->enabled = false;
                unset($this->watchers[$watcher->id]);
                throw UnsupportedStream::tooHigh('select');
            }
            $watcher->probed = true;
        }
        if ($watcher->type === Watcher::READABLE) {
            $this->readStreams[$id] = $watcher->stream;
            $this->readWatchers[$id][$watcher->id] = $watcher;
        } else {
            $this->writeStreams[$id] = $watcher->stream;
            $this->writeWatchers[$id][$watcher->id] = $watcher;
        }
    }

    protected function deactivateStream(Watcher $watcher): void
    {
        $id = $watcher->streamId;
        if ($watcher->type === Watcher::READABLE) {
            unset($this->readWatchers[$id][$watcher->id]);
            if (empty($this->readWatchers[$id])) {
                unset($this->readWatchers[$id], $this->readStreams[$id]);
            }
        } else {
            unset($this->writeWatchers[$id][$watcher->id]);
            if (empty($this->writeWatchers[$id])) {
                unset($this->writeWatchers[$id], $this->writeStreams[$id]);
            }
        }
    }

    protected function hasActiveStreams(): bool
    {
        return $this->readStreams !== [] || $this->writeStreams !== [];
    }

    protected function dispatch(?float $timeout): void
    {
        $this->undispatched = 0;
        $read = $this->readStreams;
        $write = $this->writeStreams;
        $except = null;
        $seconds = $timeout === null ? null : (int) $timeout;
        $micro = $timeout === null ? 0 : (int) (($timeout - $seconds) * 1e6);
        try {
            if ($this->tlsUnread && $read !== []) {
                // A TLS connection the extension set up reads ahead: whole records may sit in OpenSSL,
                // taken from the socket already. Decrypted now, select's cast moves them into PHP's read
                // buffer, where select sees them (and returns at once).
                \Weft\Ext\tlsUnread($read);
            }
            $result = @\stream_select($read, $write, $except, $seconds, $micro);
        } catch (\TypeError|\ValueError $e) {
            // A closed resource in the set ("not a valid stream resource", then "No stream arrays were
            // passed" when it was the only one) fails select for every stream:
            // drop it and say which. Looked for only then, not before every wait (a walk over all the
            // watched streams each turn).
            foreach ($this->readStreams + $this->writeStreams as $id => $stream) {
                if (!\is_resource($stream)) {
                    $this->dropClosed($id);
                    return;
                }
            }
            throw $e;
        }
        if ($result === false) {
            $error = \error_get_last();
            \error_clear_last();
            // EINTR (a signal arrived) is normal: the caller dispatches signals and comes back.
            if ($error !== null && !\str_contains($error['message'], 'interrupted') && !\str_contains($error['message'], 'Interrupted')) {
                throw new \RuntimeException('stream_select() failed: ' . $error['message']);
            }
            return;
        }
        if ($result === 0) {
            return;
        }
        $this->undispatched = $result;
        // invokeStream() inlined: at least one event a request, and the call with its class-typed argument
        // (checked through zend_check_user_type_slow) cost more than calling the callback itself.
        foreach ($read as $id => $_) {
            --$this->undispatched;
            foreach ($this->readWatchers[$id] ?? [] as $watcher) {
                if ($watcher->enabled) {
                    try {
                        ($watcher->callback)($watcher->id, $watcher->stream);
                    } catch (\Throwable $e) {
                        $this->handleError($e);
                    }
                }
            }
        }
        foreach ($write as $id => $_) {
            --$this->undispatched;
            foreach ($this->writeWatchers[$id] ?? [] as $watcher) {
                if ($watcher->enabled) {
                    try {
                        ($watcher->callback)($watcher->id, $watcher->stream);
                    } catch (\Throwable $e) {
                        $this->handleError($e);
                    }
                }
            }
        }
        $this->undispatched = 0;
    }

    /** A stream closed while watched: its watchers can never fire; wake them so their owners see EOF. */
    private function dropClosed(int $id): void
    {
        $watchers = ($this->readWatchers[$id] ?? []) + ($this->writeWatchers[$id] ?? []);
        unset($this->readStreams[$id], $this->writeStreams[$id]);
        foreach ($watchers as $watcher) {
            $this->invokeStream($watcher);
            $this->cancel($watcher->id);
        }
        unset($this->readWatchers[$id], $this->writeWatchers[$id]);
    }
}
