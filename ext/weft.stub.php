<?php

/**
 * The PHP-visible API of the weft extension. Documentation only: weft_arginfo.h is written by hand to
 * match it (PHP 8.2's gen_stub.php wants a PHP-Parser version the project does not ship).
 *
 * @generate-class-entries
 */

namespace Weft\Ext {
    /** The version of the loaded build, e.g. "0.1.0". */
    const VERSION = PHP_WEFT_VERSION;

    function version(): string {}

    /**
     * The native fast path of Weft\Http\Parser\RequestParser (weft_http.c): parses the complete request
     * head that starts at $offset in $buffer, looking for its CRLFCRLF from $scanFrom on.
     *
     * @param array<string, true> $methods Limits::$methodSet
     * @return array{0: string, 1: string, 2: string, 3: string, 4: int, 5: bool}|false method, target,
     *         version ("1.0"/"1.1"), header block (HeaderBlock form), offset after the head, whether a
     *         Content-Length or Transfer-Encoding field is present; false when the head is incomplete or
     *         is not one the PHP parser accepts (the PHP parser then names the error)
     */
    function parseHead(string $buffer, int $offset, int $scanFrom, int $maxHeaderBytes, int $maxTargetBytes, int $maxHeaderCount, array $methods): array|false {}

    /**
     * parseHead() answering with a ready Weft\Http\Message\Request (body and trailers empty, $remoteAddress
     * stamped) when the head has no framing fields and ends exactly at the end of $buffer, once
     * checkRequestLayout() accepted the class; parseHead()'s array or false otherwise.
     */
    function parseRequest(string $buffer, int $offset, int $scanFrom, int $maxHeaderBytes, int $maxTargetBytes, int $maxHeaderCount, array $methods, ?string $remoteAddress): object|array|false {}

    /**
     * Checks that parseRequest() can build $class's objects itself (its seven promoted properties as
     * declared, and a constructor that does nothing else, tried once with sample values): null when it
     * can (parseRequest() then builds them), otherwise why not (parseRequest() then never does).
     */
    function checkRequestLayout(string $class): ?string {}

    /**
     * ResponseEncoder::encode()'s bytes for the common response (a string body of at most $maxBody bytes,
     * not HEAD, a final status other than 204 and 304, no trailers, plain valid fields without Transfer-Encoding or
     * Connection), once checkResponseLayout() accepted its class; null for any other, which PHP encodes.
     * $serverField: the encoder's "Server: name\r\n" ("" for none).
     */
    function encodeResponse(object $response, string $version, bool $keepAlive, bool $isHead, string $date, string $serverField, int $maxBody): ?string {}

    /**
     * encodeResponse() for the answer to $request, deciding keep-alive as Request::keepAlive() does for a
     * request without a Connection field (kept unless HTTP/1.0), and only if $mayKeepAlive; $keepAlive is
     * set to that decision. False (and $keepAlive untouched) for a request of another class than the one
     * checkRequestLayout() accepted, or with a Connection field: PHP decides and calls encodeResponse().
     * A null $date is now's, formatted by the extension once a second as ResponseEncoder::httpDate(time()).
     */
    function encodeAnswer(object $response, object $request, bool $mayKeepAlive, bool $isHead, ?string $date, string $serverField, int $maxBody, &$keepAlive): string|false|null {}

    /**
     * Checks that encodeResponse() can read $class's objects (final, exactly its seven properties as declared,
     * a REASONS array, accessors that answer what the properties hold): null when it can, otherwise why
     * not (encodeResponse() then answers null for every response).
     */
    function checkResponseLayout(string $class): ?string {}

    /**
     * A connection's socket I/O on the native loop (weft_conn.c): a read watcher whose C handler
     * reads at most 65536 bytes on readiness and calls $onData with them ('' at the end of stream, false on
     * a read error): a Closure, or an object's public method received(); write() sends with send(2). The descriptor stays the caller's. Over TLS (secure()):
     * SSL_read() and SSL_write() through the SSL of the caller's stream.
     */
    final class Conn
    {
        /** @param bool $own take a copy of the descriptor (dup()), closed with this object: the caller may close its stream at once */
        /** @param object $onData a Closure, or an object whose public received() is called (no Closure per connection) */
        public function __construct(Loop $loop, int $fd, object $onData, bool $own = false) {}

        /** The descriptor read and written (its copy with $own), -1 once closed. */
        public function fd(): int {}

        /** The read watcher's id for the loop's enable()/disable()/cancel(), or null once closed. */
        public function watcher(): ?string {}

        /** Bytes the socket took (0 when full), or -errno. */
        public function write(string $bytes, int $offset = 0, int $length = -1): int {}

        /** Cancels its watchers and closes an owned descriptor (never the caller's); write() answers -EBADF from here on. */
        public function close(): void {}

        /**
         * From now on, a read that is exactly one complete request head without framing fields, accepted
         * by the native head parser under these limits (RequestParser's), comes with its Request as the
         * callback's second argument (only once checkRequestLayout() accepted the class).
         * @param array<string, true> $methods
         */
        public function frameRequests(int $maxHeaderBytes, int $maxTargetBytes, int $maxHeaderCount, array $methods, ?string $remoteAddress): void {}

        /** Reads come as bytes alone again (a protocol switch). */
        public function frameNothing(): void {}

        /**
         * The line protocol (weft_line.c): from now on a read that is a whole number of lines, each at
         * most $maxLength bytes without its ending ("\n", or "\r\n"), comes with its list of [line, ending]
         * pairs as the callback's second argument, the pairs LineSplitter::split() gives; any other read
         * (a line still arriving or too long) as bytes alone. Turns frameRequests() off; frameNothing() this.
         */
        public function frameLines(int $maxLength): void {}

        /**
         * TLS: reads and writes go through the SSL of $stream from now on (an accepted stream the
         * extension set up, tlsAttach(), its handshake done, its socket this object's descriptor, not
         * $own). The stream keeps the SSL and the socket: close() this object, then the stream (PHP's close
         * sends close_notify). The callback then gets decrypted bytes, '' at the peer's close_notify or end,
         * false on an error; write() answers as before (-errno, -EPIPE for a TLS error).
         * @param resource $stream
         * @return bool false (nothing changed) for any other stream: keep the PHP stream path
         */
        public function secure($stream): bool {}

        /**
         * Turns reading on or off (the loop's enable()/disable() of watcher()); for a TLS connection use
         * this: turned back on, it reads what OpenSSL holds and the kernel no longer reports.
         */
        public function read(bool $on): void {}

        /**
         * The loop's time (its now()) of the last read handed over with bytes; 0.0 before the first and
         * once closed: where Connection's lazy idle deadline counts from.
         */
        public function readAt(): float {}
    }

    /**
     * The TLS session ticket keys of this process (weft_tls.c): up to three keys of 80 bytes (name 16,
     * AES-256 32, HMAC-SHA256 32), the first encrypts new tickets, all decrypt. Every worker sets the
     * same ones (Weft\Socket\Tls\TicketKeys), so a ticket from one worker resumes on another.
     */
    function tlsTicketKeys(string $keys): void {}

    /**
     * Runs PHP's crypto setup on an accepted server stream (the first half of
     * stream_socket_enable_crypto($stream, true, $method)) and makes the SSL_CTX PHP built for it use
     * the tlsTicketKeys() keys, tickets living $lifetime seconds.
     *
     * @param resource $stream
     * @return int 1: done; 0: not a PHP OpenSSL socket stream, or PHP's setup failed; -1: PHP's private
     *         layout is not the one this build knows (nothing changed: no resumption)
     */
    function tlsShareTickets($stream, int $method, int $lifetime): int {}

    /**
     * Whether the handshake of a server stream resumed a session (null: not a PHP OpenSSL stream, or
     * a layout this build does not know).
     *
     * @param resource $stream
     */
    function tlsSessionReused($stream): ?bool {}

    /**
     * Builds this process's TLS server contexts once (weft_tls.c): the default certificate first, then
     * one per server name (SNI, "*.example.org" for subdomains), TLS 1.2-1.3, $ciphers for TLS 1.2, the
     * ALPN protocols in wire form, the shared ticket keys with tickets living $lifetime seconds.
     * Replaces the previous contexts (open connections keep theirs).
     *
     * @param list<array{0: ?string, 1: string, 2: string}> $certificates [name, cert file, key file]
     * @throws \Exception naming what OpenSSL refused
     */
    function tlsContext(array $certificates, string $ciphers, string $alpn, int $lifetime): void {}

    /**
     * Gives an accepted, non-blocking stream PHP has not set up for TLS an SSL of the tlsContext()
     * context, where PHP's own setup would put one; stream_socket_enable_crypto() then runs the
     * handshake on it.
     *
     * @param resource $stream
     * @return int 1: attached; 0: not applicable (no context, not a PHP OpenSSL stream, set up
     *         already, blocking); -1: the layout was not verified (tlsShareTickets() first)
     */
    function tlsAttach($stream): int {}

    /**
     * For a loop built on stream_select(): the attached streams (tlsAttach() makes them read ahead)
     * among $streams whose next record sits in OpenSSL, taken from the socket already, get it decrypted,
     * so that stream_select() sees it (its cast moves it into PHP's read buffer). Other streams are left
     * alone. The native loop does the same by itself.
     *
     * @param array<resource> $streams
     * @return int how many of them have data (or their end) waiting in OpenSSL
     */
    function tlsUnread(array $streams): int {}

    /**
     * Reads from an attached stream (tlsAttach(), handshake done) straight through OpenSSL, a record at
     * most, what PHP's read buffer holds first. Non-blocking.
     *
     * @param resource $stream
     * @return string|false|null the bytes; '' when nothing can be read now; false at the end of the
     *         stream (close_notify, the peer's end) or on an error; null: not an attached stream (use fread())
     */
    function tlsRead($stream, int $length): string|false|null {}

    /**
     * Writes to an attached stream straight through OpenSSL, $length bytes of $data from $offset (the
     * rest by default). Non-blocking: a write that would block answers 0 and must be repeated with the
     * same bytes.
     *
     * @param resource $stream
     * @return int|false|null bytes taken; false when the peer is gone or on an error; null: not an
     *         attached stream (use fwrite())
     */
    function tlsWrite($stream, string $data, int $offset = 0, ?int $length = null): int|false|null {}

    /**
     * The native event loop (weft_loop.c; its arginfo lives there, not in weft_arginfo.h): the
     * Weft\Loop\Driver contract and DescriptorDriver in C. Weft\Loop\NativeDriver extends it and declares
     * those interfaces; see src/Loop/Driver.php for what each method promises.
     *
     * @strict-properties
     * @not-serializable
     */
    class Loop
    {
        public function __construct() {}
        public function onReadable(mixed $stream, \Closure $callback): string {}
        public function onWritable(mixed $stream, \Closure $callback): string {}
        public function onReadableFd(int $fd, \Closure $callback): string {}
        public function onWritableFd(int $fd, \Closure $callback): string {}
        public function delay(float $seconds, \Closure $callback): string {}
        public function repeat(float $interval, \Closure $callback): string {}
        public function onSignal(int $signal, \Closure $callback): string {}
        /** The pcntl handler of every watched signal (as a closure): queues it for the loop that owns it. */
        private static function signalled(int $signal, mixed $info = null): void {}
        public function defer(\Closure $callback): string {}
        public function enable(string $id): void {}
        public function disable(string $id): void {}
        public function cancel(string $id): void {}
        public function reference(string $id): void {}
        public function unreference(string $id): void {}
        public function run(): void {}
        public function stop(): void {}
        public function isRunning(): bool {}
        public function owesWork(): bool {}
        public function now(): float {}
        public function setErrorHandler(?\Closure $handler): void {}
        public function canWatch(mixed $stream): bool {}
        public function name(): string {}
        /** @return array{enabled: int, referenced: int, total: int} */
        public function watcherCount(): array {}
        /** Diagnostics: null when the loop owes work before it may wait, else seconds to its next timer (-1: none). */
        public function idleFor(): ?float {}
        /** The Epoll object the loop waits on. */
        public function epoll(): Epoll {}
        /**
         * The C API's test seam (weft_loop.h): C watchers on fd (read), a deferred call, a 2 ms delay and a
         * 1 ms repeat (cancelled at its second call) that report to $report(string $what, int $n).
         * @return list<int> their C ids
         */
        public function probeNativeApi(int $fd, \Closure $report): array {}
    }

    /**
     * One epoll(7) instance (created with EPOLL_CLOEXEC), level-triggered unless Epoll::ET is passed.
     *
     * Registrations are identified by an integer key chosen by the caller (Weft uses the stream's
     * resource id); wait() reports ready keys. The instance keeps a reference to each registered stream,
     * so it can tell when PHP code closed one while it was registered: wait() then reports that key once
     * with Epoll::CLOSED | Epoll::HUP and forgets it. Like stream_select(), wait() also reports a stream
     * as readable (Epoll::IN) when PHP's own read buffer (or OpenSSL's) holds data the kernel cannot see.
     *
     * fork(): an epoll instance is shared by parent and child. An Epoll created before fork() refuses
     * add(), modify() and wait() in the child (EpollException), and its remove() only forgets the key
     * there, without touching the parent's registrations: the child must create its own Epoll.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Epoll implements \Countable
    {
        public const IN = UNKNOWN;      // EPOLLIN
        public const OUT = UNKNOWN;     // EPOLLOUT
        public const PRI = UNKNOWN;     // EPOLLPRI
        public const ERR = UNKNOWN;     // EPOLLERR, always reported
        public const HUP = UNKNOWN;     // EPOLLHUP, always reported
        public const RDHUP = UNKNOWN;   // EPOLLRDHUP
        public const ET = UNKNOWN;      // EPOLLET
        public const ONESHOT = UNKNOWN; // EPOLLONESHOT
        /** Not a kernel flag: the registered stream was closed by PHP code. */
        public const CLOSED = UNKNOWN;

        /** @throws EpollException */
        public function __construct() {}

        /**
         * @param resource|int $stream any stream with a descriptor (sockets, pipes, pg_socket(), STDIN ...),
         *        or a raw descriptor number: its owner must remove() it before closing the descriptor
         * @throws EpollException EEXIST (key or descriptor already registered), EPERM (regular file), ...
         */
        public function add($stream, int $events, int $key): void {}

        /** @throws EpollException ENOENT for an unknown key */
        public function modify(int $key, int $events): void {}

        /**
         * @return bool true if removed from the kernel's set, false if its stream had already been closed
         * @throws EpollException ENOENT for an unknown key
         */
        public function remove(int $key): bool {}

        /**
         * @param float $timeout seconds; negative blocks until an event (or a signal) arrives
         * @return array<int, int> ready keys => event bits; empty on timeout or when a signal interrupted
         */
        public function wait(float $timeout = -1, int $max = 1024): array {}

        /** Number of registered keys. */
        public function count(): int {}

        /**
         * The descriptor stream_select() would use for the stream, or null if it has none
         * (php://memory, closed or non-stream resources).
         */
        public static function descriptorOf(mixed $stream): ?int {}
    }

    /**
     * inotify(7) for `serve --watch` (weft_inotify.c): one descriptor, created non-blocking and
     * close-on-exec. add() watches one directory or file (the caller walks trees and keeps the
     * wd => path map); read() drains what is queued without blocking. The descriptor is for the event
     * loop (fd(), or a php://fd/N stream of it for the select loop); the object closes it on close() or
     * when freed. After fork(), only close() and fd() work in the child: add(), remove() and read()
     * throw, so a child never takes its parent's events.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Inotify
    {
        public const ACCESS = UNKNOWN;        // IN_ACCESS ... the kernel's bits
        public const MODIFY = UNKNOWN;
        public const ATTRIB = UNKNOWN;
        public const CLOSE_WRITE = UNKNOWN;
        public const CLOSE_NOWRITE = UNKNOWN;
        public const OPEN = UNKNOWN;
        public const MOVED_FROM = UNKNOWN;
        public const MOVED_TO = UNKNOWN;
        public const CREATE = UNKNOWN;
        public const DELETE = UNKNOWN;
        public const DELETE_SELF = UNKNOWN;
        public const MOVE_SELF = UNKNOWN;
        public const ALL_EVENTS = UNKNOWN;
        public const ONLYDIR = UNKNOWN;       // add() flags
        public const DONT_FOLLOW = UNKNOWN;
        public const EXCL_UNLINK = UNKNOWN;
        public const MASK_ADD = UNKNOWN;
        public const ONESHOT = UNKNOWN;
        public const UNMOUNT = UNKNOWN;       // reported only
        public const Q_OVERFLOW = UNKNOWN;
        public const IGNORED = UNKNOWN;
        public const ISDIR = UNKNOWN;

        /** @throws InotifyException EMFILE (too many instances: fs.inotify.max_user_instances) ... */
        public function __construct() {}

        /** The descriptor, or null once closed. */
        public function fd(): ?int {}

        /**
         * @param int $mask events and add() flags only, at least one event (else ValueError)
         * @return int the watch descriptor (the same one for a path watched twice)
         * @throws InotifyException ENOENT, ENOTDIR (with ONLYDIR), EACCES, ENOSPC (no watches left:
         *         fs.inotify.max_user_watches) ...
         */
        public function add(string $path, int $mask): int {}

        /** @return bool false when the watch was already gone */
        public function remove(int $wd): bool {}

        /**
         * What the kernel has queued, at most 64 KB of it per call (call again while it returns events):
         * a list of [wd, mask, cookie, name]; name is "" for an event about the watched path itself.
         *
         * @return list<array{0: int, 1: int, 2: int, 3: string}> [] when nothing is queued (never blocks)
         */
        public function read(): array {}

        /** Closes the descriptor (twice is harmless); in a forked child, only the child's copy. */
        public function close(): void {}
    }

    /**
     * A coroutine's output buffers, off PHP's one buffer stack while it waits (Weft\Coroutine\OutputBuffers):
     * the handlers themselves move, callbacks, flags and a handler that was running included.
     */
    final class OutputStack
    {
        /** Takes the buffers above $base off the stack; null when there are none. */
        public static function detach(int $base): ?OutputStack {}

        /** Pushes them back on top of the stack, as they were; once. */
        public function attach(): void {}

        /** How many buffers it holds (0 once put back). */
        public function count(): int {}
    }

    /**
     * Many static properties read or written in one call (Weft\Coroutine\ProcessState). The classes
     * and properties are resolved when it is made: $classes maps a declaring class's name in lower case
     * to [key => property name]; a class not loaded then, or an entry that names no static property
     * declared by its class, is left out. Visibility is not checked.
     */
    final class StaticProperties
    {
        public function __construct(array $classes) {}

        /** Adds each initialized property's value to $values under its key. */
        public function read(array &$values): void {}

        /** Writes each property whose key $values has. */
        public function write(array $values): void {}

        /** How many properties were resolved. */
        public function count(): int {}

        /**
         * Every property's value as a list, in the order of keys() (an uninitialized one has no index);
         * $previous (an earlier snapshot()) itself when every value is still the one it holds.
         */
        public function snapshot(?array $previous = null): array {}

        /** Writes back what snapshot() returned: each index it has. */
        public function restore(array $values): void {}

        /** @return list<string> the key of each property, in the order of snapshot(). */
        public function keys(): array {}
    }

    final class InotifyException extends \RuntimeException
    {
    }

    final class EpollException extends \RuntimeException
    {
    }

    /**
     * The switchboard of the hooks (ext/weft_hooks.h): blocking calls of PHP and its extensions that
     * suspend the current coroutine instead of blocking the process. Weft\Hook\Hooks drives it.
     *
     * A hook suspends only when its kind is enabled, a waiter is installed, a Fiber is running and may
     * switch (not in a GC destructor, not at shutdown); otherwise it runs the original code.
     *
     * install() hands the hooks, once, everything they ask PHP (no hook looks a class up by name or
     * writes a PHP exception's message): $wait(int $fd, int $events, float $timeout): int|bool|null and
     * $waitMany(array $fds, float $timeout): ?array (descriptor => READ|WRITE; empty: a sleep) return the
     * ready events (0 or [] on timeout), or null when there is no coroutine to suspend (the hook then
     * blocks), and throw to cancel; $forget(int $fd) drops what $wait kept for a descriptor about to be
     * closed; $inCoroutine(): bool and $exited(\Throwable $exit) serve the exit hook; $concurrentUse(
     * string $hook, ?string $call, ?string $handle, ?string $holderCall): \Throwable builds the error
     * for a second user of a connection or curl handle. Everything is dropped at the end of the request.
     */
    final class Hooks
    {
        public const STREAM = UNKNOWN; // PHP socket streams: tcp, unix, udp, ssl/tls
        public const SLEEP = UNKNOWN;  // sleep, usleep, time_nanosleep
        public const CURL = UNKNOWN;   // curl_exec, curl_multi_*
        public const DNS = UNKNOWN;    // gethostbyname, gethostbynamel
        public const EXIT = UNKNOWN;   // exit()/die() in a coroutine
        public const ALL = UNKNOWN;
        public const READ = UNKNOWN;   // waitFd() events
        public const WRITE = UNKNOWN;

        public static function install(\Closure $wait, \Closure $waitMany, \Closure $forget, \Closure $inCoroutine, \Closure $exited, \Closure $concurrentUse): void {}

        /** Removes the waiter and disables every kind. */
        public static function uninstall(): void {}

        /** @return int the kinds enabled now: those asked for that this build can hook (available()) */
        public static function enable(int $kinds): int {}

        public static function enabled(): int {}

        public static function available(): int {}

        public static function canSuspend(int $kind): bool {}

        /** weft_hook_wait_fd() as a hook calls it: ready events, 0 on timeout. */
        public static function waitFd(int $fd, int $events, float $timeout = -1): int {}

        /** weft_hook_wait_fds(): @param array<int, int> $fds @return array<int, int> the ready ones */
        public static function waitFds(array $fds, float $timeout = -1): array {}

        /**
         * The native loop (null: none, the select loop). While it is set and idle (the loop decides,
         * ext/weft_loop.c), a single-descriptor hook asks the waiter with the IDLE flag (8) first: a true
         * answer says the calling coroutine may hold the loop, and the hook polls its descriptor together
         * with the loop's in C, with no Fiber switch; anything that would end the loop's wait sends it
         * back to the waiter.
         */
        public static function idleLoop(?Loop $loop): void {}
    }

    /**
     * Thrown by exit()/die() inside a Weft coroutine while the exit hook is on: it ends that coroutine
     * (the request it serves gets a 500), not the process. The code is exit()'s status (0 for a string).
     * Implements Weft\WeftException (registered by weft.c, as for EpollException).
     */
    final class ExitException extends \Error
    {
    }

    /**
     * A thread that notices when the process stops calling beat() for longer than $threshold seconds and
     * then has the engine call $onBlocked(float $seconds, ?string $call, int $line) in the main thread at
     * the next opcode boundary: debug_backtrace() there shows where PHP code held the process. $call and
     * $line name the call that just returned, when the engine stopped right after one (a blocking
     * internal function is noticed once it returns). Once per missed beat. Stopped at the end of the
     * request; a forked child has no thread until start() is called there.
     */
    final class Watchdog
    {
        public static function start(float $threshold, \Closure $onBlocked): void {}

        public static function beat(): void {}

        public static function stop(): void {}

        public static function isRunning(): bool {}
    }

    /**
     * --max-request-time for a request's own code (a loop that never waits), and a stuck worker's last
     * words (see ext/README.md). Deadlines and last words belong to the running Fiber; a thread raises the
     * engine's interrupt flag once a deadline has passed, and the interrupt hook throws $exceptionClass
     * into the Fiber whose deadline it is, at its next opcode boundary, again every $tick seconds while it
     * runs on, never in {main}, GC, shutdown or code whose file starts with $exempt.
     */
    final class Deadline
    {
        public static function configure(string $exceptionClass, string $message, string $exempt = "", float $tick = 0.05): void {}

        /** @return bool false outside a Fiber, or before configure() */
        public static function arm(float $seconds): bool {}

        /** Forgets the running Fiber's deadline and last words. */
        public static function clear(): void {}

        public static function count(): int {}

        /** How many times an exception was thrown into running code. */
        public static function thrown(): int {}

        /** What to write to descriptor $fd if the process must go while this Fiber runs and PHP cannot answer. */
        public static function track(int $fd, string $lastWords): void {}

        /** On $signal, a thread writes the tracked last words unless PHP claims them within 200 ms. */
        public static function lastWordsOn(int $signal): void {}

        /** true once: PHP answers, the thread must not. */
        public static function claimLastWords(): bool {}
    }
}
