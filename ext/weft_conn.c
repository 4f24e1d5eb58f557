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
 * TLS connections never come here (their bytes go through OpenSSL): Connection keeps the PHP stream path.
 *
 * Bounded: one static buffer of 65536 bytes for every connection's read (copied out at once into the
 * string handed to PHP, before any PHP code runs); nothing is kept between reads.
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
	zval on_data;
	zend_fcall_info_cache fcc;
	struct weft_conn *owner; /* NULL once the object is freed first */
	/* frameRequests(): the parser's limits and the peer's address stamped on each Request (UNDEF methods: off) */
	zval methods;
	zend_long max_header_bytes, max_target_bytes, max_header_count;
	zend_string *remote;
} weft_conn_io;

typedef struct weft_conn {
	weft_conn_io *io; /* NULL once the watcher is gone (close(), or the loop freed) */
	int fd;
	bool owns; /* the descriptor is this object's own copy (dup()), closed with it */
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
	zend_object_std_init(&conn->std, ce);
	object_properties_init(&conn->std, ce);
	conn->std.handlers = &weft_conn_handlers;
	return &conn->std;
}

static void weft_conn_release(void *data)
{
	weft_conn_io *io = data;
	if (io->owner != NULL) {
		io->owner->io = NULL;
	}
	zval_ptr_dtor(&io->on_data);
	zval_ptr_dtor(&io->methods);
	if (io->remote != NULL) {
		zend_string_release(io->remote);
	}
	efree(io);
}

/* Cancels the read watcher (its release runs now or after its running handler), then closes an owned descriptor. */
static void weft_conn_shut(weft_conn *conn)
{
	if (conn->io != NULL) {
		weft_conn_io *io = conn->io;
		io->owner = NULL;
		conn->io = NULL;
		weft_loop_cancel(io->loop, io->id); /* runs weft_conn_release() */
	}
	if (conn->owns && conn->fd >= 0) {
		close(conn->fd);
	}
	conn->fd = -1;
	conn->owns = false;
}

static void weft_conn_free(zend_object *object)
{
	weft_conn_shut(weft_conn_from(object));
	zend_object_std_dtor(object);
}

/* The watcher's closure is the only reference the cycle collector cannot see through the loop: report it. */
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

static void weft_conn_on_read(weft_loop *loop, zend_ulong id, int fd, uint32_t events, void *data)
{
	weft_conn_io *io = data;
	ssize_t n;
	do {
		n = read(fd, weft_conn_buffer, sizeof(weft_conn_buffer));
	} while (n < 0 && errno == EINTR);
	zval args[2];
	zval *arg = &args[0];
	uint32_t count = 1;
	if (n > 0) {
		ZVAL_STRINGL_FAST(arg, weft_conn_buffer, (size_t) n);
		/* The usual read, one whole request head and nothing else: its Request goes with the bytes, for
		 * the session to take instead of parsing them when nothing of an earlier request waits in it. */
		if (Z_TYPE(io->methods) == IS_ARRAY && weft_http_frame_request(Z_STR_P(arg), io->max_header_bytes,
				io->max_target_bytes, io->max_header_count, Z_ARRVAL(io->methods), io->remote, &args[1])) {
			count = 2;
		}
	} else if (n == 0) {
		ZVAL_EMPTY_STRING(arg);
	} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
		return; /* another reader took it, or a spurious wake-up: nothing to report */
	} else {
		ZVAL_FALSE(arg);
	}
	/* The callback may close() this connection or drop it: the loop releases a cancelled watcher (and the
	 * closure with it) only after its handler returned (weft_loop.h), and nothing of io is read after the call. */
	zval retval;
	zend_call_known_function(io->fcc.function_handler, io->fcc.object, io->fcc.called_scope, &retval, count, args, NULL);
	zval_ptr_dtor(&retval);
	zval_ptr_dtor(&args[0]);
	if (count == 2) {
		zval_ptr_dtor(&args[1]);
	}
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
		Z_PARAM_OBJECT_OF_CLASS(on_data, zend_ce_closure)
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
	ZVAL_UNDEF(&io->methods);
	io->remote = NULL;
	io->max_header_bytes = io->max_target_bytes = io->max_header_count = 0;
	ZVAL_COPY(&io->on_data, on_data);
	(void) zend_is_callable_ex(on_data, NULL, 0, NULL, &io->fcc, NULL);
	conn->fd = descriptor;
	conn->owns = own;
	conn->io = io;
	io->id = weft_loop_add_fd(loop, descriptor, WEFT_LOOP_READ, weft_conn_on_read, io, weft_conn_release);
	if (io->id == 0) {
		/* The release function ran (conn->io is NULL again): the exception says why. */
		weft_conn_shut(conn);
		RETURN_THROWS();
	}
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
}

/* Reads come as bytes alone again (a protocol switch). */
PHP_METHOD(Weft_Ext_Conn, frameNothing)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_CONN_THIS();
	if (conn->io != NULL) {
		zval_ptr_dtor(&conn->io->methods);
		ZVAL_UNDEF(&conn->io->methods);
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
	ZEND_ARG_OBJ_INFO(0, onData, Closure, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, own, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_fd, 0, 0, IS_LONG, 0)
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

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_conn_frame_requests, 0, 5, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxTargetBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderCount, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, methods, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, remoteAddress, IS_STRING, 1)
ZEND_END_ARG_INFO()

static const zend_function_entry weft_conn_methods[] = {
	PHP_ME(Weft_Ext_Conn, __construct, arginfo_weft_conn_construct, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, watcher, arginfo_weft_conn_watcher, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, fd, arginfo_weft_conn_fd, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, write, arginfo_weft_conn_write, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, close, arginfo_weft_conn_close, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, frameRequests, arginfo_weft_conn_frame_requests, ZEND_ACC_PUBLIC)
	PHP_ME(Weft_Ext_Conn, frameNothing, arginfo_weft_conn_close, ZEND_ACC_PUBLIC)
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
	return SUCCESS;
}
