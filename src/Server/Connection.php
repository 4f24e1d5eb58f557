<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Loop\Driver;
use Weft\Server\Internal\Expiring;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Errno;

/**
 * One accepted connection, driven by loop callbacks: no coroutine is parked on it. A readable callback
 * reads what is there and hands it to the protocol's Session, which parses every complete request,
 * dispatches each to a (pooled) coroutine (Dispatcher::dispatch()) and flushes once. This object is the
 * connection's one writer: the Session, the application's coroutines and the timers all write through
 * write()/flush(), never to the socket.
 *
 * Backpressure: while more than HIGH_WATER bytes wait to be sent, reading and dispatching pause and a
 * streaming producer waits in waitForRoom(). The worker's connections together are bounded too (the
 * OutputBudget): past its gate, a connection that still holds unsent output dispatches nothing more
 * and its producer waits; past its limit, the connections whose output waited longest unread are
 * closed. Timers (head, body, idle, send) follow the phase the Session reports; none runs while the
 * application does.
 */
final class Connection implements Expiring
{
    /** Unsent output above which the connection stops reading and running pipelined requests. */
    public const HIGH_WATER = 1 << 20;
    /**
     * A piece partly sent goes on from its offset a window at a time: substr() of the whole rest, on
     * every writable event of a slow reader, copied a 50 MB body again and again (0.7 s of CPU against
     * 0.16 s for a fast reader).
     */
    private const WRITE_WINDOW = 256 * 1024;
    /**
     * A producer that has queued this much without waiting gives the loop a turn: one whose peer takes
     * everything at once (a fast reader on a fast link, or a crowd of new connections whose kernel
     * buffers each absorb megabytes) would otherwise hold the loop for its whole transfer, and every
     * other connection of the worker with it.
     */
    private const TURN_BYTES = 256 * 1024;
    private const READ_CHUNK = 65536;
    /** The deadline armed while output waits for the peer. */
    private const SENDING = 4;
    /** Armed, but for a phase that has ended (a protocol switch): update() replaces or removes it. */
    private const STALE = 5;
    private const NONE = -1;

    public ?Session $session = null;
    /** What the TLS handshake agreed (null: plain TCP). A native path hands such a connection to PHP's. */
    public ?\Weft\Socket\Tls\TlsSession $tls = null;
    /**
     * With $tls on the PHP stream path (the select loop, or a stream the native I/O does not take): reads
     * and writes go straight to OpenSSL (Weft\Ext\tlsRead()/tlsWrite(), for a stream the extension set
     * up), not through PHP's stream layer, which costs a third as much again as the record itself for a
     * small request. Off for good at the first stream they do not apply to.
     */
    private bool $tlsDirect;
    /** The PHP stream's read watcher; null with $io, which reads, pauses and cancels its own (no id string kept per connection). */
    private readonly ?string $readWatcher;
    private ?string $writeWatcher = null;
    private bool $reading = true;
    private bool $writing = false;
    /** @var list<string> unsent output; small writes are appended to the last piece */
    private array $out = [];
    private int $outBytes = 0;
    private int $outOffset = 0;
    private bool $eof = false;
    private bool $closeWhenFlushed = false;
    private bool $closed = false;
    /** Which deadline is armed: a Session phase, SENDING or NONE. */
    private int $armed = self::NONE;
    /** @var array<int, Coroutine> producers waiting for room (below HIGH_WATER, and the worker's budget) */
    private array $roomWaiters = [];
    /** Bytes queued since the producer last let the loop run (TURN_BYTES). */
    private int $sinceTurn = 0;
    /** A producer or the session's dispatching waits for room: roomFreed() when there is. */
    private bool $stalled = false;
    /** Loop time since when unsent output has waited without a byte taken by the peer; 0.0: none waits. */
    private float $stalledSince = 0.0;
    /**
     * The socket's I/O in C (Weft\Ext\Conn: read(2) on readiness straight into received(), send(2) in
     * flush(); for TLS, SSL_read() and SSL_write() on the SSL of a stream the extension set up) on the
     * native loop; null: the PHP stream's fread()/fwrite() (or tlsRead()/tlsWrite()), as always without
     * the extension, on the select loop, and with WEFT_NATIVE_HTTP=0.
     */
    private readonly ?\Weft\Ext\Conn $io;
    /** Whether plain connections on the native loop use Weft\Ext\Conn; null until first asked. */
    private static ?bool $nativeIo = null;
    /**
     * Loop time of the last read while the idle deadline was armed. The keep-alive timer restarts from
     * there, lazily: the deadline stays where it is and, when it comes, is pushed back by the time that
     * passed since (nginx does the same with its lazy timer updates). A request answered at once thus
     * costs no timer operation at all, where re-arming on every read was a fifth of the core's own work.
     * With the native I/O, Weft\Ext\Conn keeps the last read's time itself (readAt()): only update()
     * writes this then, when it arms the idle deadline.
     */
    private float $activeAt = 0.0;

    /**
     * @param resource $stream a non-blocking accepted socket
     * @param Dispatcher $dispatcher where the session hands its complete requests (Dispatcher::dispatch()):
     *        the request's one way to the application
     */
    public function __construct(
        public readonly int $id,
        private readonly mixed $stream,
        private readonly ?string $remoteAddress,
        private readonly Connections $owner,
        private readonly Driver $driver,
        private Timeouts $timeouts,
        private readonly OutputBudget $output,
        public readonly Dispatcher $dispatcher,
        ?\Weft\Socket\Tls\TlsSession $tls = null,
    ) {
        $this->tls = $tls;
        $this->tlsDirect = \function_exists('Weft\\Ext\\tlsRead');
        $fd = self::nativeIo($driver) ? \Weft\Ext\Epoll::descriptorOf($stream) : null;
        $io = null;
        if ($fd !== null && $tls === null) {
            // Conn takes a copy of the descriptor and the PHP stream goes at once: nothing reads or writes
            // through it any more, and its buffers and state were a tenth of an idle connection's memory.
            $io = new \Weft\Ext\Conn($driver, $fd, $this, true);
            \fclose($stream);
        } elseif ($fd !== null) {
            // TLS, the handshake done: Conn reads and writes through the stream's SSL, and the stream keeps
            // the SSL and the socket (no copy of the descriptor): close() closes Conn first, then the
            // stream, whose close sends close_notify and frees the SSL, as on the PHP path. A stream the
            // extension did not set up (PHP's own context) keeps the PHP path.
            $io = new \Weft\Ext\Conn($driver, $fd, $this);
            if (!$io->secure($stream)) {
                $io->close();
                $io = null;
            }
        }
        if ($io !== null) {
            $this->io = $io;
            $this->readWatcher = null;
        } else {
            $this->io = null;
            $this->readWatcher = $driver->onReadable($stream, $this->onReadable(...));
        }
    }

    /**
     * Whether a plain connection on this driver reads and writes through the extension (Weft\Ext\Conn):
     * on the native loop, unless WEFT_NATIVE_HTTP=0 (the pure-PHP connection path with the extension
     * loaded). Tests switch it with useNativeIo().
     */
    public static function nativeIo(Driver $driver): bool
    {
        return $driver instanceof \Weft\Ext\Loop
            && (self::$nativeIo ??= \class_exists(\Weft\Ext\Conn::class, false) && \getenv('WEFT_NATIVE_HTTP') !== '0');
    }

    /** For tests and benchmarks: whether connections created from now on use the native I/O (null: from the environment again). */
    public static function useNativeIo(?bool $on): void
    {
        self::$nativeIo = $on === null ? null : $on && \class_exists(\Weft\Ext\Conn::class, false);
    }

    public function remoteAddress(): ?string
    {
        return $this->remoteAddress;
    }

    /**
     * The socket's descriptor number, with the native extension (null without): where the extension
     * writes a request's last words when the worker must go and PHP cannot (CodeDeadline::track()); null
     * for a TLS connection too.
     */
    public function descriptor(): ?int
    {
        if ($this->tls !== null) {
            return null; // bytes written past OpenSSL would be garbage to the client
        }
        if ($this->io !== null) {
            $fd = $this->io->fd();
            return $fd >= 0 ? $fd : null; // closed: no number that may be another socket's by now
        }
        return \class_exists(\Weft\Ext\Epoll::class, false) ? \Weft\Ext\Epoll::descriptorOf($this->stream) : null;
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** The worker is stopping: answer what is in flight, then end the connection. */
    public function isDraining(): bool
    {
        return $this->owner->isDraining();
    }

    /** Whether this connection's unsent output is over its own bound (HIGH_WATER). */
    public function congested(): bool
    {
        return $this->outBytes >= self::HIGH_WATER;
    }

    /**
     * Whether a producer of more output for this connection must stop for now: over its own bound, or,
     * while it still holds unsent output, over the worker's gate. Then the Session is resumed (and
     * waitForRoom() returns) once there is room again. A connection holding nothing always has room:
     * its peer reads, and is never held up by others that do not.
     */
    public function outOfRoom(): bool
    {
        if ($this->outBytes >= self::HIGH_WATER) {
            $this->stalled = true;
            return true;
        }
        if ($this->outBytes > 0 && $this->output->overGate()) {
            $this->stalled = true;
            $this->output->wait($this);
            return true;
        }
        return false;
    }

    /** Bytes queued and not yet taken by the socket. */
    public function unsent(): int
    {
        return $this->outBytes;
    }

    /** What the queued output holds in memory: the unsent bytes, and the part sent of a piece not yet sent whole. */
    public function held(): int
    {
        return $this->outBytes + $this->outOffset;
    }

    /** Loop time since when this connection's unsent output has waited without progress (0.0: none waits). */
    public function stalledSince(): float
    {
        return $this->stalledSince;
    }

    /** Queues bytes for the peer; flush() sends them. Nothing else ever writes to the socket. */
    public function write(string $bytes): void
    {
        if ($this->closed || $bytes === '') {
            return;
        }
        $length = \strlen($bytes);
        $last = \count($this->out) - 1;
        // Pipelined small answers are joined into one write; big bodies stay pieces of their own, never copied.
        if ($last >= 0 && $length <= 16384 && \strlen($this->out[$last]) <= 65536) {
            $this->out[$last] .= $bytes;
        } else {
            $this->out[] = $bytes;
        }
        $this->outBytes += $length;
        $this->sinceTurn += $length;
        $this->output->held += $length;
    }

    /**
     * write() for bytes that are the last their producer has for now: the answer of a request the
     * extension framed alone from its read (nothing parsed behind it, so no pipelined batch to join into
     * one write), the line protocol's reply to a read's last line. Sent at once with the native I/O when
     * nothing waits before them, usually whole, so nothing is queued at all; what the socket does not take
     * is queued as by write(), and the caller's flush() goes on with it.
     */
    public function send(string $bytes): void
    {
        $io = $this->io;
        if ($io === null || $this->out !== [] || $this->closed) {
            $this->write($bytes);
            return;
        }
        $written = $io->write($bytes);
        $length = \strlen($bytes);
        if ($written === $length) {
            return;
        }
        if ($written < 0) {
            $this->close(); // the peer is gone, as flush() would have found
            return;
        }
        $this->out = [$bytes];
        $this->outOffset = $written;
        $this->outBytes = $length - $written;
        $this->sinceTurn += $length - $written;
        $this->output->held += $length; // held whole until its last byte is out, as flush() counts it
    }

    /**
     * flush() for a session that is idle and wants input (its request answered at once): nothing to send
     * or re-evaluate when all is out, reading is on and the idle deadline is armed, as after most requests
     * on a keep-alive connection (update() would find exactly that); otherwise flush().
     */
    public function flushIdle(): void
    {
        if ($this->out !== [] || $this->armed !== Session::IDLE || !$this->reading || $this->closeWhenFlushed) {
            $this->flush();
        }
    }

    /** Sends what the socket takes now; the rest goes out from the writable callback. */
    public function flush(): void
    {
        if ($this->closed) {
            return;
        }
        $before = $this->outBytes;
        $output = $this->output;
        $io = $this->io;
        while ($this->out !== []) {
            $piece = $this->out[0];
            $offset = $this->outOffset;
            $left = \strlen($piece) - $offset;
            $try = $offset === 0 ? $left : \min($left, self::WRITE_WINDOW);
            if ($io !== null) {
                // The bytes the socket took, 0 when it is full, -errno when the peer is gone.
                $written = $io->write($piece, $offset, $try);
                if ($written < 0) {
                    $this->close();
                    return;
                }
            } else {
                $written = null;
                if ($this->tls !== null && $this->tlsDirect) {
                    $written = \Weft\Ext\tlsWrite($this->stream, $piece, $offset, $try);
                    if ($written === false) {
                        $this->close(); // the peer is gone, or TLS failed: nothing more can reach it
                        return;
                    }
                    if ($written === null) {
                        $this->tlsDirect = false;
                    }
                }
                $written ??= @\fwrite($this->stream, $offset === 0 ? $piece : \substr($piece, $offset, $try));
            }
            if ($written === false) {
                $error = \error_get_last();
                \error_clear_last();
                [$errno] = Errno::fromWarning($error['message'] ?? null);
                if ($errno !== 11) {
                    // The peer is gone (reset, broken pipe): nothing more can reach it.
                    $this->close();
                    return;
                }
                $written = 0;
            }
            $this->outBytes -= $written;
            if ($written === $left) {
                // The budget counts memory: a piece is held whole until its last byte is out.
                $output->held -= \strlen($piece);
                if ($this->outBytes === 0) {
                    // The last piece: the shared empty array, not an emptied one of its own (an idle
                    // connection held ~200 bytes of it), and no array_shift() for the usual answer.
                    $this->out = [];
                } else {
                    \array_shift($this->out);
                }
                $this->outOffset = 0;
                continue;
            }
            $this->outOffset += $written;
            if ($written < $try || $written === 0) {
                break; // the socket is full
            }
        }
        $progress = $this->outBytes < $before;
        if ($this->out === []) {
            $this->stalledSince = 0.0;
            if ($this->writing) {
                $this->writing = false;
                $this->driver->disable($this->writeWatcher);
            }
            if ($this->closeWhenFlushed) {
                $this->close();
                return;
            }
        } else {
            if ($progress || $this->stalledSince === 0.0) {
                $this->stalledSince = $this->driver->now();
            }
            if (!$this->writing) {
                $this->writing = true;
                if ($this->writeWatcher === null) {
                    // With the native I/O, on the descriptor like its read watcher: one registration of it
                    // in the loop, never a second one for the same descriptor through its stream.
                    $this->writeWatcher = $this->io !== null
                        ? $this->driver->onWritableFd($this->io->fd(), $this->onWritable(...))
                        : $this->driver->onWritable($this->stream, $this->onWritable(...));
                } else {
                    $this->driver->enable($this->writeWatcher);
                }
            }
        }
        if ($progress && $this->armed === self::SENDING) {
            $this->armed = self::NONE; // restart the send timer: the peer is reading
        }
        $this->update();
        if ($progress) {
            if ($this->stalled) {
                if ($this->outBytes === 0 || ($this->outBytes < self::HIGH_WATER && !$output->overGate())) {
                    $this->roomFreed();
                } elseif ($this->outBytes < self::HIGH_WATER) {
                    $output->wait($this); // below its own bound, now waiting on the worker's
                }
            }
            $output->released();
        }
        if ($output->held > $output->limit && $output->limit > 0) {
            $output->reclaim($this);
        }
    }

    /**
     * There is room again (below HIGH_WATER, and the worker below its gate or this connection holding
     * nothing): wake the waiting producer and let the Session dispatch again. Each checks anew.
     *
     * @internal called by flush() and OutputBudget
     */
    public function roomFreed(): void
    {
        if ($this->closed) {
            return;
        }
        $this->stalled = false;
        $this->output->forget($this);
        $this->wakeRoomWaiters(null);
        $this->session->resume();
    }

    /** Ends the connection once everything queued is sent. */
    public function closeAfterFlush(): void
    {
        $this->closeWhenFlushed = true;
        if ($this->out === []) {
            $this->close();
        }
    }

    /**
     * Suspends the calling (producer) coroutine while there is no room (outOfRoom()): call it before
     * allocating more output. A connection holding nothing while the worker is over its limit makes
     * room first, by closing the connections whose output waited longest unread.
     *
     * @throws ConnectionClosed when the connection ends meanwhile
     */
    public function waitForRoom(): void
    {
        if ($this->outBytes === 0 && !$this->closed && $this->output->overLimit()) {
            $this->output->reclaim($this);
        }
        if ($this->sinceTurn > 0 && !$this->closed
            && ($this->sinceTurn >= self::TURN_BYTES || $this->output->turnsWaiting())
            && Scheduler::get()->current !== null && !$this->outOfRoom()) {
            // TURN_BYTES queued without a wait, or others already wait for a turn: queue behind them
            // rather than keep the loop (and every other connection of the worker) to ourselves.
            $this->sinceTurn = 0;
            $this->output->awaitTurn();
        }
        while (!$this->closed && $this->outOfRoom()) {
            $this->sinceTurn = 0;
            $scheduler = Scheduler::get();
            $self = $scheduler->self();
            $this->roomWaiters[$self->id] = $self;
            $scheduler->await(function () use ($self): void {
                unset($this->roomWaiters[$self->id]);
            });
        }
        if ($this->closed) {
            throw ConnectionClosed::local('write');
        }
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        if ($this->io !== null) {
            // Cancels its watchers; closes its descriptor when plain (the stream is long closed). Over TLS
            // the stream below still holds the socket and the SSL.
            $this->io->close();
        } else {
            $this->driver->cancel($this->readWatcher);
        }
        if ($this->writeWatcher !== null) {
            $this->driver->cancel($this->writeWatcher);
        }
        if ($this->armed !== self::NONE) {
            $this->owner->deadlines->disarm($this->id);
        }
        if (\is_resource($this->stream)) {
            \fclose($this->stream);
        }
        $this->output->held -= $this->outBytes + $this->outOffset;
        $this->out = [];
        $this->outBytes = 0;
        $this->outOffset = 0;
        $this->stalledSince = 0.0;
        $this->output->forget($this);
        $this->output->released();
        $this->owner->remove($this);
        $this->wakeRoomWaiters(ConnectionClosed::byPeer('writing the response'));
        $this->session?->closed();
    }

    /**
     * Brings reading and the connection's one deadline in line with its state. Called after every
     * event: a read, a write, a request dispatched or answered, a drain.
     */
    public function update(): void
    {
        if ($this->closed) {
            return;
        }
        $session = $this->session;
        $phase = $this->closeWhenFlushed ? Session::BUSY : $session->phase();
        $read = !$this->eof && !$this->closeWhenFlushed && $this->outBytes < self::HIGH_WATER && $session->wantsInput()
            && ($phase !== Session::BUSY || $this->owner->readAhead);
        if ($read !== $this->reading) {
            $this->reading = $read;
            if ($this->io !== null) {
                $this->io->read($read); // over TLS, back on: what OpenSSL holds is read, the kernel cannot say
            } else {
                $read ? $this->driver->enable($this->readWatcher) : $this->driver->disable($this->readWatcher);
            }
        }
        if ($this->outBytes > 0) {
            if ($this->armed !== self::SENDING) {
                $this->arm(self::SENDING, $this->timeouts->send);
            }
            return;
        }
        if ($phase === $this->armed && $phase !== Session::BODY) {
            return; // a head's deadline counts from its start, not from its latest byte
        }
        switch ($phase) {
            case Session::BUSY:
            case Session::MULTIPLEXING:
                if ($this->armed !== self::NONE) {
                    $this->armed = self::NONE;
                    $this->owner->deadlines->disarm($this->id);
                }
                return;
            case Session::HEAD:
                $this->arm($phase, $this->timeouts->header);
                return;
            case Session::BODY:
                $this->arm($phase, $this->timeouts->body);
                return;
            default:
                if ($this->owner->isDraining() && $this->timeouts->drainIdle <= 0.0) {
                    $this->close();
                    return;
                }
                $this->activeAt = $this->driver->now();
                $this->arm($phase, $this->idleLimit());
        }
    }

    /** How long an idle connection is kept: the keep-alive timeout, or the short drain wait once the worker drains. */
    private function idleLimit(): float
    {
        return $this->owner->isDraining() ? \min($this->timeouts->drainIdle, $this->timeouts->idle) : $this->timeouts->idle;
    }

    /**
     * The extension's I/O for this connection (Weft\Ext\Conn), or null on the PHP stream path: what a
     * protocol may ask it for (HttpProtocol: reads that are one whole request head come with their
     * Request, built in C under the parser's limits).
     */
    public function io(): ?\Weft\Ext\Conn
    {
        return $this->io;
    }

    /**
     * Protocol switch (HTTP -> WebSocket after a 101): the connection goes on under another Session and
     * that protocol's timers. Reading, the writer and everything queued stay as they are.
     */
    public function upgrade(Session $session, Timeouts $timeouts): void
    {
        $this->session = $session;
        $this->timeouts = $timeouts;
        $this->io?->frameNothing();
        if ($this->armed !== self::NONE && $this->armed !== self::SENDING) {
            $this->armed = self::STALE;
        }
    }

    /** For the table's drain: re-evaluate now that the worker drains (an idle connection's timer shrinks). */
    public function drain(): void
    {
        if ($this->armed === Session::IDLE) {
            $this->armed = self::NONE;
        }
        $this->update();
    }

    private function arm(int $kind, float $seconds): void
    {
        $this->armed = $kind;
        $this->owner->deadlines->arm($this->id, $seconds, $this);
    }

    private function onReadable(): void
    {
        if ($this->tls !== null && $this->tlsDirect) {
            $data = \Weft\Ext\tlsRead($this->stream, self::READ_CHUNK);
            if ($data === null) {
                $this->tlsDirect = false;
                $data = @\fread($this->stream, self::READ_CHUNK);
            }
        } else {
            $data = @\fread($this->stream, self::READ_CHUNK);
        }
        if ($data === false || $data === '') {
            \error_clear_last();
            if ($data === false || \feof($this->stream)) {
                $this->ended();
            }
            return;
        }
        if ($this->armed === Session::IDLE) {
            // Activity: the idle deadline stays armed; expired() counts from here (see $activeAt), and
            // update() replaces it if the connection leaves the idle phase.
            $this->activeAt = $this->driver->now();
        }
        // The session ends every call with flush() or update(), which re-evaluates reading and timers.
        $this->session->received($data);
    }

    /**
     * The native read watcher's callback (Weft\Ext\Conn): what one read(2) returned (over TLS: what
     * SSL_read() decrypted, up to 64 KiB); '' at the end, false on an error. With frameRequests(), a read that is one whole request head comes with its Request too,
     * which the session may take instead of parsing the bytes. Public for Conn alone, which calls this
     * object's received() rather than a Closure of it (one Closure less per connection, almost 400 bytes).
     *
     * @internal
     */
    public function received(string|false $data, object|array|null $request = null): void
    {
        if ($data === false || $data === '') {
            $this->ended();
            return;
        }
        // Activity: Conn keeps the loop time of this read (readAt()), where expired() counts the idle
        // deadline from; no call back into the loop for it here, on every request.
        // The session ends every call with flush() or update(), which re-evaluates reading and timers.
        $this->session->received($data, $request);
    }

    /** The peer ended its side (or the read failed): nothing more will be read. */
    private function ended(): void
    {
        $this->eof = true;
        $this->reading = false;
        $this->io !== null ? $this->io->read(false) : $this->driver->disable($this->readWatcher);
        $this->session->ended();
        $this->update();
    }

    private function onWritable(): void
    {
        $this->flush();
    }

    /** @internal the armed deadline passed (Deadlines, which calls this object rather than a Closure of it) */
    public function expired(): void
    {
        $kind = $this->armed;
        $this->armed = self::NONE;
        if ($this->closed) {
            return;
        }
        if ($kind === Session::IDLE) {
            // With the native I/O the last read's time is Conn's (received() does not write $activeAt);
            // a read before the deadline was armed is older than update()'s $activeAt, so max() is right.
            $activeAt = $this->io !== null ? \max($this->activeAt, $this->io->readAt()) : $this->activeAt;
            $left = $activeAt + $this->idleLimit() - $this->driver->now();
            if ($left > 0.0) {
                $this->arm($kind, $left); // active since it was armed: the timer restarts from then
                return;
            }
        }
        if ($kind === self::SENDING) {
            // The kernel reports a socket writable only once a good part of its buffer is free, which a
            // slow reader may take longer than the timeout to empty: ask the socket itself. Any byte it
            // takes is progress, and flush() restarts the timer.
            $before = $this->outBytes;
            $this->flush();
            if ($this->closed || $this->outBytes < $before) {
                return;
            }
        }
        if ($kind === Session::HEAD || $kind === Session::BODY) {
            // Armed only while nothing is being written and no request runs: a 408 cannot land inside
            // another answer.
            $answer = $this->session->timedOut();
            if ($answer !== null && $this->outBytes === 0) {
                $this->write($answer);
                $this->closeAfterFlush();
                $this->flush();
                return;
            }
        }
        $this->close();
    }

    private function wakeRoomWaiters(?\Throwable $error): void
    {
        if ($this->roomWaiters === []) {
            return;
        }
        $waiters = $this->roomWaiters;
        $this->roomWaiters = [];
        $scheduler = Scheduler::get();
        foreach ($waiters as $waiter) {
            if ($waiter->isWaiting()) {
                $error === null ? $scheduler->resume($waiter) : $scheduler->throw($waiter, $error);
            }
        }
    }
}
