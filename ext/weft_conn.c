/*
 * Weft\Ext\Conn: a plain connection's socket I/O in C, on the native loop (issue 23 §2, first step).
 *
 * Weft\Server\Connection reads and writes a plain TCP connection through this object when the native
 * loop runs it: the loop's own C handler reads on readiness with read(2) and hands the bytes to the
 * connection's PHP callback, and write() sends with send(2). What it saves against a PHP stream watcher
 * whose callback calls fread()/fwrite() (measured, see BENCHMARKS.md): the PHP frame of the callback's
 * fread() call, the stream layer's read buffer and filters bookkeeping, and fwrite()'s warning on a full
 * socket (which PHP then turned back into an errno with error_get_last()).
 *
 * The contract, the same bytes either way:
 *   - the callback gets the bytes one read(2) of at most 65536 bytes returned (the PHP path's READ_CHUNK),
 *     '' at the peer's end of stream and false on a read error (ECONNRESET, ...); a spurious wake-up
 *     (EAGAIN, EINTR) calls nothing;
 *   - write() returns the bytes the socket took (0 when it is full), or -errno on any other failure;
 *   - the read watcher is a watcher of the loop like any other: watcher() names it ("w<N>") for the
 *     driver's enable()/disable()/cancel(); close() cancels it. Without $own the descriptor stays the
 *     caller's (its PHP stream): close() this object before closing the stream.
 * With $own the object works on a dup() of the descriptor, registered from the start, and closes it in
 * close() (or when freed): Connection closes its PHP stream at once, which saves an idle connection the
 * stream's memory.
 *
 * TLS (secure(), issue 25 §1): once the handshake is done (the PHP stream path drives it), a TLS
 * connection's reads and writes come here too, through the SSL of the PHP stream (weft_tls.c): the read
 * handler calls SSL_read(), write() SSL_write(). Ownership: the SSL stays the PHP stream's, and so does
 * the descriptor (no $own): PHP's close sends close_notify, frees the SSL and closes the socket, as on
 * the PHP path, and nothing here ever frees OpenSSL state under it. This object holds a reference to the
 * stream's resource and looks the SSL up again before each use, so a stream fclose()d behind its back
 * only makes it answer "gone" (false to the callback, -EBADF from write()); the caller close()s this
 * object before the stream, as for a plain one. The SSL reads ahead (tlsAttach()), so whole records can
 * wait inside OpenSSL where epoll no longer sees them: after each read that leaves some, and when reading
 * is turned back on (read()), a deferred call of the loop reads again before it waits (see
 * weft_conn_read_tls()). A read that must write first (SSL_ERROR_WANT_WRITE: a KeyUpdate answer or an
 * alert into a full socket) waits for the socket to be writable, then reads again.
 *
 * Bounded: one static buffer of 65536 bytes for every connection's read (copied out at once into the
 * string handed to PHP, before any PHP code runs); nothing is kept between reads (over TLS, OpenSSL keeps
 * its record buffers, as on the PHP path).
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "php_weft.h"
#include "weft_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WEFT_CONN_READ_CHUNK 65536

/* What the read watcher holds: freed by its release function, when the watcher is gone. */
typedef struct weft_conn_io {
	weft_loop *loop;
	zend_ulong id;
	/* TLS: a deferred read for what OpenSSL holds, and a write watcher for a read that wanted to write (0: none) */
	zend_ulong defer_id, retry_id;
	/* Freed when the last of these is gone: the read watcher, and each of the two above while set. */
	uint32_t refs;
	/* TLS: whether reading is on, as read() last said (the loop's own flag is not visible from here) */
	bool reading;
	/* TLS: a read left something for later while reading was off: read() looks again when it is back on */
	bool again;
	/* The loop's time (ns) of the last read handed to the callback with bytes (0: none yet): readAt(). */
	uint64_t read_ns;
	zval on_data;
	zend_fcall_info_cache fcc;
	struct weft_conn *owner; /* NULL once the object is freed first */
	/* frameRequests(): the parser's limits and the peer's address stamped on each Request (UNDEF methods: off) */
	zval methods;
	zend_long max_header_bytes, max_target_bytes, max_header_count;
	zend_string *remote;
	/* frameLines(): the line protocol's limit (0: off); whole lines come cut, see weft_line.c */
	zend_long line_max;
} weft_conn_io;

typedef struct weft_conn {
	weft_conn_io *io; /* NULL once the watcher is gone (close(), or the loop freed) */
	int fd;
	bool owns; /* the descriptor is this object's own copy (dup()), closed with it */
	zval tls;  /* secure(): the PHP stream (resource) whose SSL this object reads and writes; UNDEF: plain */
	zend_object std;
} weft_conn;

static zend_class_entry *weft_ce_conn;
static zend_object_handlers weft_conn_handlers;
/* One read buffer for all: the bytes are copied into a PHP string before any PHP code can run. */
static char weft_conn_buffer[WEFT_CONN_READ_CHUNK];

static zend_always_inline weft_conn *weft_conn_from(zend_object *object)
{
	return (weft_conn *) ((char *) object - XtOffsetOf(weft_conn, std));
}

static zend_object *weft_conn_create(zend_class_entry *ce)
{
	weft_conn *conn = zend_object_alloc(sizeof(weft_conn), ce);
	conn->io = NULL;
	conn->fd = -1;
	conn->owns = false;
	ZVAL_UNDEF(&conn->tls);
	zend_object_std_init(&conn->std, ce);
	object_properties_init(&conn->std, ce);
	conn->std.handlers = &weft_conn_handlers;
	return &conn->std;
}

static void weft_conn_unref(void *data)
{
	weft_conn_io *io = data;
	if (--io->refs > 0) {
		return;
	}
	zval_ptr_dtor(&io->on_data);
	zval_ptr_dtor(&io->methods);
	if (io->remote != NULL) {
		zend_string_release(io->remote);
	}
	efree(io);
}

/* The read watcher is gone (cancelled, or the loop freed before this object). */
static void weft_conn_release(void *data)
{
	weft_conn_io *io = data;
	if (io->owner != NULL) {
		io->owner->io = NULL;
		io->owner = NULL;
	}
	weft_conn_unref(io);
}

/* Cancels the watchers (each releases io now, or after its running handler), then closes an owned descriptor. */
static void weft_conn_shut(weft_conn *conn)
{
	if (conn->io != NULL) {
		weft_conn_io *io = conn->io;
		io->owner = NULL;
		conn->io = NULL;
		zend_ulong defer_id = io->defer_id, retry_id = io->retry_id, id = io->id;
		io->defer_id = io->retry_id = 0;
		weft_loop *loop = io->loop;
		if (defer_id != 0) {
			weft_loop_cancel(loop, defer_id);
		}
		if (retry_id != 0) {
			weft_loop_cancel(loop, retry_id);
		}
		weft_loop_cancel(loop, id); /* runs weft_conn_release(): io may be gone from here */
	}
	if (conn->owns && conn->fd >= 0) {
		close(conn->fd);
	}
	conn->fd = -1;
	conn->owns = false;
	zval_ptr_dtor(&conn->tls);
	ZVAL_UNDEF(&conn->tls);
}

static void weft_conn_free(zend_object *object)
{
	weft_conn_shut(weft_conn_from(object));
	zend_object_std_dtor(object);
}

/* The watcher's callback (a Closure, or the object itself) is the only reference the cycle collector cannot see through the loop: report it. */
static HashTable *weft_conn_get_gc(zend_object *object, zval **table, int *n)
{
	weft_conn *conn = weft_conn_from(object);
	if (conn->io != NULL) {
		*table = &conn->io->on_data;
		*n = 1;
	} else {
		*table = NULL;
		*n = 0;
	}
	return zend_std_get_properties(object);
}

/*
 * Hands the callback what a read found: n > 0 bytes (with their Request when frameRequests() asked and
 * they are one whole request head), 0: the end of the stream (''), < 0: an error (false).
 */
static void weft_conn_deliver(weft_conn_io *io, const char *bytes, ssize_t n)
{
	zval args[2];
	zval *arg = &args[0];
	uint32_t count = 1;
	if (n > 0) {
		io->read_ns = weft_loop_now_ns(io->loop);
		ZVAL_STRINGL_FAST(arg, bytes, (size_t) n);
		/* The usual read, one whole request head and nothing else: its Request goes with the bytes, for
		 * the session to take instead of parsing them when nothing of an earlier request waits in it. */
		/* Over TLS the Request says so (scheme "https"), as Request::overTls() would make it in PHP. */
		if (Z_TYPE(io->methods) == IS_ARRAY && weft_http_frame_request(Z_STR_P(arg), io->max_header_bytes,
				io->max_target_bytes, io->max_header_count, Z_ARRVAL(io->methods), io->remote,
				io->owner != NULL && Z_TYPE(io->owner->tls) != IS_UNDEF, &args[1])) {
			count = 2;
		} else if (io->line_max > 0 && weft_line_frame(Z_STR_P(arg), io->line_max, &args[1])) {
			count = 2; /* the line protocol: a read of whole lines comes with them, cut */
		}
	} else if (n == 0) {
		ZVAL_EMPTY_STRING(arg);
	} else {
		ZVAL_FALSE(arg);
	}
	/* The callback may close() this connection or drop it: the loop releases a cancelled watcher (and the
	 * closure with it) only after its handler returned (weft_loop.h), and the watcher whose handler runs
	 * holds its reference on io; the caller reads nothing of the connection but io after the call. */
	zval retval;
	zend_call_known_function(io->fcc.function_handler, io->fcc.object, io->fcc.called_scope, &retval, count, args, NULL);
	zval_ptr_dtor(&retval);
	zval_ptr_dtor(&args[0]);
	if (count == 2) {
		zval_ptr_dtor(&args[1]);
	}
}

static void weft_conn_on_read(weft_loop *loop, zend_ulong id, int fd, uint32_t events, void *data);

/* The SSL of a secure() connection as it is now, NULL once its stream is closed (or PHP let go of it). */
static void *weft_conn_ssl(weft_conn *conn)
{
	if (conn == NULL || Z_TYPE(conn->tls) != IS_RESOURCE) {
		return NULL;
	}
	zend_resource *res = Z_RES(conn->tls);
	if (res->type == -1 || res->ptr == NULL) {
		return NULL; /* fclose()d: the resource outlives it while referenced here */
	}
	return weft_tls_conn_handle((php_stream *) res->ptr);
}

static void weft_conn_on_defer(weft_loop *loop, zend_ulong id, void *data)
{
	weft_conn_io *io = data;
	io->defer_id = 0;
	if (io->owner != NULL && io->reading) {
		weft_conn_on_read(loop, io->id, io->owner->fd, WEFT_LOOP_READ, io);
	}
}

/* Reads again before the loop waits: OpenSSL holds what the kernel no longer reports. */
static void weft_conn_kick(weft_conn_io *io)
{
	if (io->defer_id == 0) {
		io->refs++;
		io->defer_id = weft_loop_add_defer(io->loop, weft_conn_on_defer, io, weft_conn_unref);
	}
}

static void weft_conn_on_writable_retry(weft_loop *loop, zend_ulong id, int fd, uint32_t events, void *data)
{
	weft_conn_io *io = data;
	if (io->retry_id == id) {
		io->retry_id = 0;
	}
	weft_loop_cancel(loop, id); /* one-shot: released (and io with it) after this handler */
	if (io->owner != NULL && io->reading) {
		weft_conn_on_read(loop, io->id, fd, WEFT_LOOP_READ, io);
	}
}

/* A read wanted to write into a full socket: read again once the socket is writable. */
static void weft_conn_retry_on_writable(weft_conn_io *io)
{
	if (io->retry_id != 0 || io->owner == NULL) {
		return;
	}
	io->refs++;
	/* On failure (with an exception) the release ran already and took the reference back. */
	io->retry_id = weft_loop_add_fd(io->loop, io->owner->fd, WEFT_LOOP_WRITE, weft_conn_on_writable_retry, io, weft_conn_unref);
}

/*
 * A TLS connection's read: what SSL_read() decrypts (weft_tls_conn_read(): every record OpenSSL holds
 * and one read() of the socket, up to 64 KiB), then what comes next when the kernel will not say it:
 * more records held (MORE), or the end or an error OpenSSL reached after the bytes handed over, read
 * again from a deferred call; a read that must write first, once the socket is writable. While reading
 * is off (the callback may turn it off), that is left for read() to pick up.
 */
static void weft_conn_read_tls(weft_conn_io *io)
{
	if (io->owner == NULL) {
		return;
	}
	void *ssl = weft_conn_ssl(io->owner);
	if (ssl == NULL) {
		weft_conn_deliver(io, NULL, -1);
		return;
	}
	int state;
	size_t got = weft_tls_conn_read(ssl, weft_conn_buffer, sizeof(weft_conn_buffer), &state);
	bool later = state == WEFT_TLS_MORE || state == WEFT_TLS_WANT_WRITE;
	if (got > 0) {
		later = later || state == WEFT_TLS_END || state == WEFT_TLS_FAILED;
		weft_conn_deliver(io, weft_conn_buffer, (ssize_t) got);
	} else if (state == WEFT_TLS_END || state == WEFT_TLS_FAILED) {
		weft_conn_deliver(io, NULL, state == WEFT_TLS_END ? 0 : -1);
		return;
	}
	if (!later || io->owner == NULL) {
		return; /* the socket's next readiness says when; or the connection is gone */
	}
	if (!io->reading) {
		io->again = true;
	} else if (state == WEFT_TLS_WANT_WRITE) {
		weft_conn_retry_on_writable(io);
	} else {
		weft_conn_kick(io);
	}
}

static void weft_conn_on_read(weft_loop *loop, zend_ulong id, int fd, uint32_t events, void *data)
{
	weft_conn_io *io = data;
	if (io->owner != NULL && Z_TYPE(io->owner->tls) != IS_UNDEF) {
		weft_conn_read_tls(io);
		return;
	}
	ssize_t n;
	do {
		n = read(fd, weft_conn_buffer, sizeof(weft_conn_buffer));
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		return; /* another reader took it, or a spurious wake-up: nothing to report */
	}
	weft_conn_deliver(io, weft_conn_buffer, n);
}

#define WEFT_CONN_THIS() weft_conn *conn = weft_conn_from(Z_OBJ_P(ZEND_THIS))

PHP_METHOD(Weft_Ext_Conn, __construct)
{
	zval *loop_object;
	zend_long fd;
	zval *on_data;
	bool own = false;
	ZEND_PARSE_PARAMETERS_START(3, 4)
		Z_PARAM_OBJECT(loop_object)
		Z_PARAM_LONG(fd)
		Z_PARAM_OBJECT(on_data)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(own)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_CONN_THIS();
	weft_loop *loop = weft_loop_from_object(Z_OBJ_P(loop_object));
	if (loop == NULL) {
		zend_argument_type_error(1, "must be a Weft\\Ext\\Loop");
		RETURN_THROWS();
	}
	if (fd < 0 || fd > INT_MAX) {
		zend_argument_value_error(2, "must be a descriptor (0 or more)");
		RETURN_THROWS();
	}
	if (conn->io != NULL || conn->fd >= 0) {
		zend_throw_error(NULL, "Weft\\Ext\\Conn is already constructed");
		RETURN_THROWS();
	}
	/* A Closure is called as it is; any other object through its public method received(), found here
	 * once per connection (one hash lookup): the object is its own callback, where a Closure bound to
	 * its method cost every idle connection almost 400 bytes. */
	zend_function *method = NULL;
	if (Z_OBJCE_P(on_data) != zend_ce_closure) {
		zend_class_entry *ce = Z_OBJCE_P(on_data);
		method = zend_hash_str_find_ptr(&ce->function_table, "received", sizeof("received") - 1);
		if (method == NULL || !(method->common.fn_flags & ZEND_ACC_PUBLIC) || (method->common.fn_flags & ZEND_ACC_STATIC)) {
			zend_argument_type_error(3, "must be a Closure or an object with a public method received(), %s given", ZSTR_VAL(ce->name));
			RETURN_THROWS();
		}
	}
	int descriptor = (int) fd;
	if (own) {
		/* A copy of its own, registered from the start: the caller may close its stream at once (the
		 * kernel keys epoll registrations by descriptor and open file, so the copy is what is watched). */
		descriptor = fcntl((int) fd, F_DUPFD_CLOEXEC, 0);
		if (descriptor < 0) {
			zend_throw_error(NULL, "Weft\\Ext\\Conn: dup() of descriptor %d failed: %s", (int) fd, strerror(errno));
			RETURN_THROWS();
		}
	}
	weft_conn_io *io = emalloc(sizeof(*io));
	io->loop = loop;
	io->owner = conn;
	io->refs = 1;
	io->defer_id = io->retry_id = 0;
	io->reading = true;
	io->again = false;
	io->read_ns = 0;
	ZVAL_UNDEF(&io->methods);
	io->remote = NULL;
	io->max_header_bytes = io->max_target_bytes = io->max_header_count = 0;
	io->line_max = 0;
	ZVAL_COPY(&io->on_data, on_data);
	if (method != NULL) {
		io->fcc.function_handler = method;
		io->fcc.object = Z_OBJ_P(on_data);
		io->fcc.called_scope = Z_OBJCE_P(on_data);
		io->fcc.calling_scope = Z_OBJCE_P(on_data);
	} else {
		(void) zend_is_callable_ex(on_data, NULL, 0, NULL, &io->fcc, NULL);
	}
	conn->fd = descriptor;
	conn->owns = own;
	conn->io = io;
	zend_ulong id = weft_loop_add_fd(loop, descriptor, WEFT_LOOP_READ, weft_conn_on_read, io, weft_conn_release);
	if (id == 0) {
		/* The release function ran and freed io (conn->io is NULL again): the exception says why. */
		weft_conn_shut(conn);
		RETURN_THROWS();
	}
	io->id = id;
}

/* The descriptor read and written (the copy when it owns one), or -1 once closed. */
PHP_METHOD(Weft_Ext_Conn, fd)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_CONN_THIS();
	RETURN_LONG(conn->fd);
}

/* The read watcher's id for the driver ("w<N>"), or null once it is gone. */
PHP_METHOD(Weft_Ext_Conn, watcher)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_CONN_THIS();
	if (conn->io == NULL) {
		RETURN_NULL();
	}
	RETURN_STR(zend_strpprintf(0, "w" ZEND_ULONG_FMT, conn->io->id - 1));
}

PHP_METHOD(Weft_Ext_Conn, write)
{
	zend_string *bytes;
	zend_long offset = 0;
	zend_long length = -1;
	ZEND_PARSE_PARAMETERS_START(1, 3)
		Z_PARAM_STR(bytes)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(offset)
		Z_PARAM_LONG(length)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_CONN_THIS();
	if (offset < 0 || (zend_ulong) offset > ZSTR_LEN(bytes)) {
		zend_argument_value_error(2, "must be between 0 and the length of the string");
		RETURN_THROWS();
	}
	size_t left = ZSTR_LEN(bytes) - (size_t) offset;
	if (length >= 0 && (zend_ulong) length < left) {
		left = (size_t) length;
	}
	if (conn->fd < 0) {
		RETURN_LONG(-EBADF);
	}
	if (left == 0) {
		RETURN_LONG(0);
	}
	if (Z_TYPE(conn->tls) != IS_UNDEF) {
		void *ssl = weft_conn_ssl(conn);
		RETURN_LONG(ssl == NULL ? -EBADF : weft_tls_conn_write(ssl, ZSTR_VAL(bytes) + offset, left));
	}
	ssize_t n;
	do {
		n = send(conn->fd, ZSTR_VAL(bytes) + offset, left, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == ENOTSOCK) {
		do {
			n = write(conn->fd, ZSTR_VAL(bytes) + offset, left);
		} while (n < 0 && errno == EINTR);
	}
	if (n >= 0) {
		RETURN_LONG((zend_long) n);
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		RETURN_LONG(0);
	}
	RETURN_LONG(-(zend_long) errno);
}

/*
 * From now on, a read that is exactly one complete request head without framing fields, accepted by the
 * native head parser under these limits (RequestParser's), comes with its Request as the callback's second
 * argument (see Weft\Ext\parseRequest(): only once checkRequestLayout() accepted the class).
 */
PHP_METHOD(Weft_Ext_Conn, frameRequests)
{
	zend_long max_header_bytes, max_target_bytes, max_header_count;
	zval *methods;
	zend_string *remote = NULL;
	ZEND_PARSE_PARAMETERS_START(5, 5)
		Z_PARAM_LONG(max_header_bytes)
		Z_PARAM_LONG(max_target_bytes)
		Z_PARAM_LONG(max_header_count)
		Z_PARAM_ARRAY(methods)
		Z_PARAM_STR_OR_NULL(remote)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_CONN_THIS();
	if (conn->io == NULL) {
		return;
	}
	weft_conn_io *io = conn->io;
	zval_ptr_dtor(&io->methods);
	ZVAL_COPY(&io->methods, methods);
	if (io->remote != NULL) {
		zend_string_release(io->remote);
	}
	io->remote = remote == NULL ? NULL : zend_string_copy(remote);
	io->max_header_bytes = max_header_bytes;
	io->max_target_bytes = max_target_bytes;
	io->max_header_count = max_header_count;
	io->line_max = 0; /* one framing at a time */
}

/*
 * The loop's time (its now(), in seconds) of the last read handed to the callback with bytes, 0.0 before
 * the first (and once closed): where a lazy idle deadline counts from, kept here at no cost per read
 * rather than by a call back into the loop from PHP for every request.
 */
PHP_METHOD(Weft_Ext_Conn, readAt)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_CONN_THIS();
	RETURN_DOUBLE(conn->io == NULL ? 0.0 : (double) conn->io->read_ns / 1e9);
}

/* Reads come as bytes alone again (a protocol switch). */
PHP_METHOD(Weft_Ext_Conn, frameNothing)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_CONN_THIS();
	if (conn->io != NULL) {
		zval_ptr_dtor(&conn->io->methods);
		ZVAL_UNDEF(&conn->io->methods);
		conn->io->line_max = 0;
	}
}

/*
 * The line protocol: from now on a read that is a whole number of lines, each at most $maxLength bytes
 * without its ending, comes with its list of [line, ending] pairs as the callback's second argument
 * (weft_line.c); any other read comes as bytes alone. Not with frameRequests() (which it turns off).
 */
PHP_METHOD(Weft_Ext_Conn, frameLines)
{
	zend_long max_length;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(max_length)
	ZEND_PARSE_PARAMETERS_END();
	if (max_length < 1) {
		zend_argument_value_error(1, "must be at least 1");
		RETURN_THROWS();
	}
	WEFT_CONN_THIS();
	if (conn->io != NULL) {
		zval_ptr_dtor(&conn->io->methods);
		ZVAL_UNDEF(&conn->io->methods);
		conn->io->line_max = max_length;
	}
}

/*
 * TLS: from now on reads and writes go through the SSL of $stream, an accepted stream whose handshake
 * the PHP path completed on a context of the extension (tlsAttach()): its socket must be this object's
 * descriptor (not $own: the stream keeps it and the SSL, see the top of this file), and PHP's read buffer
 * empty. False, and nothing changed, for any other stream: the caller keeps the PHP stream path.
 * What the handshake's last read left inside OpenSSL (a TLS 1.3 client's first requests come with its
 * Finished) is read before the loop next waits.
 */
PHP_METHOD(Weft_Ext_Conn, secure)
{
	zval *zstream;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_RESOURCE(zstream)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_CONN_THIS();
	php_stream *stream;
	php_stream_from_zval(stream, zstream);
	if (conn->io == NULL || conn->owns || Z_TYPE(conn->tls) != IS_UNDEF) {
		RETURN_FALSE;
	}
	void *ssl = weft_tls_conn_claim(stream, conn->fd);
	if (ssl == NULL) {
		RETURN_FALSE;
	}
	ZVAL_COPY(&conn->tls, zstream);
	if (weft_tls_conn_holds(ssl)) {
		weft_conn_kick(conn->io);
	}
	RETURN_TRUE;
}

/*
 * Turns reading on or off (the read watcher's enable()/disable() in the loop). For a TLS connection use
 * this rather than the loop's: turned back on, it reads what OpenSSL holds, which the kernel no longer
 * reports.
 */
PHP_METHOD(Weft_Ext_Conn, read)
{
	bool on;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_BOOL(on)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_CONN_THIS();
	weft_conn_io *io = conn->io;
	if (io == NULL) {
		return;
	}
	io->reading = on;
	if (!on) {
		weft_loop_disable(io->loop, io->id);
		return;
	}
	if (!weft_loop_enable(io->loop, io->id) && EG(exception) != NULL) {
		RETURN_THROWS();
	}
	if (Z_TYPE(conn->tls) != IS_UNDEF) {
		void *ssl = weft_conn_ssl(conn);
		if (io->again || (ssl != NULL && weft_tls_conn_holds(ssl))) {
			io->again = false;
			weft_conn_kick(io);
		}
	}
}

/* Cancels the read watcher (idempotent); write() fails with -EBADF from here on. Never closes the descriptor. */
PHP_METHOD(Weft_Ext_Conn, close)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_CONN_THIS();
	weft_conn_shut(conn);
}

ZEND_BEGIN_ARG_INFO_EX(arginfo_weft_conn_construct, 0, 0, 3)
	ZEND_ARG_OBJ_INFO(0, loop, Weft\\Ext\\Loop, 0)
	ZEND_ARG_TYPE_INFO(0, fd, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, onData, IS_OBJECT, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, own, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_fd, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_read_at, 0, 0, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_watcher, 0, 0, IS_STRING, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_write, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, bytes, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, offset, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, length, IS_LONG, 0, "-1")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_close, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_secure, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_INFO(0, stream)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_read, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, on, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_frame_requests, 0, 5, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxTargetBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderCount, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, methods, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, remoteAddress, IS_STRING, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_frame_lines, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, maxLength, IS_LONG, 0)
ZEND_END_ARG_INFO()

static const zend_function_entry weft_conn_methods[] = {
	PHP_ME(Weft_Ext_Conn, __construct, arginfo_weft_conn_construct, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, watcher, arginfo_weft_conn_watcher, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, fd, arginfo_weft_conn_fd, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, write, arginfo_weft_conn_write, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, close, arginfo_weft_conn_close, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, frameRequests, arginfo_weft_conn_frame_requests, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, frameNothing, arginfo_weft_conn_close, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, frameLines, arginfo_weft_conn_frame_lines, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, secure, arginfo_weft_conn_secure, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, read, arginfo_weft_conn_read, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, readAt, arginfo_weft_conn_read_at, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

zend_result weft_conn_minit(void)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "Conn", weft_conn_methods);
	weft_ce_conn = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_conn->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	weft_ce_conn->create_object = weft_conn_create;
	memcpy(&weft_conn_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	weft_conn_handlers.offset = XtOffsetOf(weft_conn, std);
	weft_conn_handlers.free_obj = weft_conn_free;
	weft_conn_handlers.get_gc = weft_conn_get_gc;
	weft_conn_handlers.clone_obj = NULL;
	weft_line_minit();
	return SUCCESS;
}
