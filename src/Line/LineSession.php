<?php

declare(strict_types=1);

namespace Weft\Line;

use Weft\Server\Connection;
use Weft\Server\Session;
use Weft\Socket\LineTooLong;

/**
 * One line-protocol connection: lines are answered in order, one application call at a time per
 * connection; lines that arrive together are answered with one write.
 *
 * @internal
 */
final class LineSession implements Session
{
    /** While a line is in the application, at most this much of the next ones is read ahead. */
    private const READ_AHEAD = 65536;

    private string $buffer = '';
    /**
     * Decoded lines, [line, its ending] pairs; those from $next on are not dispatched yet. Read by index,
     * not array_shift()ed: a shift separated the array the extension handed over (a copy per read) and
     * left the property a typed reference, which every later write then checked. Untyped for the same
     * reason as the Dispatcher's hot properties (a typed property's assignment is checked under the JIT).
     *
     * @var list<array{string, string}>
     */
    private $lines = [];
    /** @var int the index in $lines of the next line to dispatch */
    private $next = 0;
    /** @var bool a line is in the application (written twice per line: untyped, see $lines) */
    private $busy = false;
    private bool $ended = false;
    private bool $done = false;
    /** Made for the connection's first line, whose ending its send() uses. */
    private ?Peer $peer = null;

    public function __construct(private readonly LineProtocol $protocol, private readonly Connection $server)
    {
    }

    /**
     * @param list<array{string, string}>|null $lines $bytes already cut into [line, ending] pairs, the pairs
     *        decode() gives for them (the extension, Conn::frameLines(), asked by LineProtocol::open()): a read
     *        of whole lines within the limit. Taken when nothing waits before them; otherwise the bytes join
     *        the buffer and are cut here as always.
     */
    public function received(string $bytes, ?array $lines = null): void
    {
        if ($this->busy) {
            $this->buffer .= $bytes;
            $this->server->update(); // read ahead only so far behind a running line
            return;
        }
        if ($lines !== null && $this->buffer === '' && !isset($this->lines[$this->next])) {
            $this->lines = $lines;
            $this->next = 0;
        } else {
            $this->buffer .= $bytes;
        }
        $this->pump();
        if (!$this->busy && !$this->done && $this->buffer === '' && !isset($this->lines[$this->next])) {
            $this->server->flushIdle(); // every line answered at once: phase() is IDLE, as flushIdle() asks
        } else {
            $this->server->flush();
        }
    }

    public function ended(): void
    {
        $this->ended = true;
        if (!$this->busy) {
            $this->pump();
            $this->server->flush();
        }
    }

    public function phase(): int
    {
        if ($this->busy || $this->done || isset($this->lines[$this->next])) {
            return self::BUSY;
        }
        return $this->buffer === '' ? self::IDLE : self::HEAD;
    }

    public function wantsInput(): bool
    {
        return !$this->done && (!$this->busy || \strlen($this->buffer) < self::READ_AHEAD);
    }

    public function timedOut(): ?string
    {
        return null;
    }

    public function resume(): void
    {
        if (!$this->busy) {
            $this->pump();
            $this->server->flush();
        }
    }

    public function closed(): void
    {
        $this->done = true;
    }

    public function describe(mixed $request): string
    {
        $line = $request[0];
        return 'line ' . (\strlen($line) > 60 ? \substr($line, 0, 60) . '...' : $line);
    }

    /** @param array{string, string} $request */
    public function serve(mixed $request): void
    {
        [$line, $ending] = $request;
        $peer = $this->peer; // made by pump() for the first line
        // The handler is called here, not through a method of LineProtocol (a frame less per line); what
        // goes wrong is answered by LineProtocol's policy: failed(), rejected().
        try {
            $reply = ($this->protocol->application)($line, $peer);
        } catch (\Throwable $e) {
            $reply = $this->protocol->failed($e);
        }
        if ($reply !== null) {
            if (!\is_string($reply)) {
                $reply = $this->protocol->rejected($reply);
            }
            // The last line of a read goes out at once (usually the only one); lines that came together are
            // answered with one write, queued and flushed after the last.
            !isset($this->lines[$this->next]) && $this->buffer === '' ? $this->server->send($reply . $ending) : $this->server->write($reply . $ending);
        }
        if ($peer->isCloseRequested()) {
            $this->finish();
        }
        $this->busy = false;
        // Nothing more here: the Dispatcher tells pump() or resume() how to go on (dispatch()'s answer).
    }

    /**
     * Dispatches decoded lines one at a time until one waits (dispatch() returns false: resume() when it
     * is answered), the input runs out or the output is over its bound; the callers flush once after it.
     * The same loop shape as HttpSession::pump(), kept apart on purpose: a shared skeleton would add an
     * indirect call per request on both hot paths.
     */
    private function pump(): void
    {
        $server = $this->server;
        while (!$this->busy && !$this->done) {
            if (!isset($this->lines[$this->next])) {
                // An empty buffer holds no line (the usual case after the last line of a read): no decode() call.
                if ($this->buffer !== '') {
                    try {
                        $this->lines = $this->protocol->codec->decode($this->buffer);
                        $this->next = 0;
                    } catch (LineTooLong $e) {
                        $server->write('ERROR ' . $e->getMessage() . "\r\n");
                        $this->finish();
                        return;
                    }
                }
                if (!isset($this->lines[$this->next])) {
                    // All dispatched: an idle connection holds none of its last read's lines.
                    $this->lines = [];
                    $this->next = 0;
                    if ($this->ended || ($server->isDraining() && $this->buffer === '')) {
                        $this->finish();
                    }
                    return;
                }
            }
            // Asked only when a line is to run (not once more per read when the lines ran out): cut lines
            // wait in $lines while there is no room.
            if ($server->outOfRoom()) {
                return; // roomFreed() calls resume()
            }
            $this->busy = true;
            // The first line's Peer is made here, not in serve(): there its branch was in the trace the JIT
            // records through the line's coroutine, which at a thousand connections started on first lines,
            // and every later line left it (~1,600 instructions per line at c=1000, none at c=100).
            $this->peer ??= new Peer($server->id, $server, $this->lines[$this->next][1]);
            if (!$server->dispatcher->dispatch($this, $this->lines[$this->next++])) {
                return;
            }
        }
    }

    private function finish(): void
    {
        $this->done = true;
        $this->lines = [];
        $this->next = 0;
        $this->server->closeAfterFlush();
    }
}
