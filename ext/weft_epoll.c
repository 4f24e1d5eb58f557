/*
 * Weft\Ext\Epoll: epoll(7) for PHP streams, the backend of Weft\Loop\EpollDriver.
 *
 * The kernel identifies a registration by (open file, descriptor number), and PHP code may close a
 * stream while it is registered, after which the number can be reused by a new stream. So this class
 * keeps, per caller-chosen key, a reference to the stream's resource (to see that it was closed) and
 * the descriptor it registered, plus which key currently "owns" each descriptor number in the kernel's
 * set. Rules that follow:
 *  - an epoll_ctl() for a key is only issued while its stream is open, or, for the final DEL of a closed
 *    stream, only if no other key has registered that descriptor number since (the owner rule) — so an
 *    operation on behalf of a stale key never touches another stream's registration;
 *  - every event carries its key in data.u64, and events for keys no longer registered are dropped.
 *
 * See weft.stub.php for the PHP-side contract.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_streams.h"
#include "php_network.h"
#include "zend_exceptions.h"
#include "zend_interfaces.h"
#include "ext/spl/spl_exceptions.h"
#include "php_weft.h"

#include <sys/epoll.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Reported by wait() for a key whose stream PHP code closed while it was registered. Not a kernel bit
 * (those end at EPOLLRDHUP 0x2000 and restart at EPOLLEXCLUSIVE 1 << 28). */
#define WEFT_EPOLL_CLOSED (1u << 24)

/* How stale the slow path of the sweep may get (see weft_epoll_sweep). */
#define WEFT_EPOLL_FULL_SWEEP_NS (10 * 1000 * 1000)

#define WEFT_EPOLL_USER_EVENTS (EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLERR | EPOLLHUP | EPOLLRDHUP | EPOLLET | EPOLLONESHOT)
#define WEFT_EPOLL_MAX_EVENTS (1 << 20)

typedef struct {
	zend_resource *res;         /* the stream's resource, referenced while registered; NULL for a raw descriptor */
	int fd;                     /* the descriptor registered for it */
	uint32_t events;            /* interest as last set by add()/modify() */
	bool recast;                /* not a plain descriptor stream: redo the select cast after reads (TLS) */
	zend_off_t seen_position;   /* stream position at the last recast */
} weft_epoll_entry;

typedef struct {
	int epfd;
	uint32_t generation;        /* weft_fork_generation when created */
	pid_t pid;                  /* creator, for messages */
	bool busy;                  /* inside wait()'s sweep, which may call a stream's cast handler */
	HashTable entries;          /* key => weft_epoll_entry* */
	uint32_t streams;           /* entries of PHP streams (the others are raw descriptors: nothing to sweep) */
	HashTable owners;           /* descriptor => key that last registered it in the kernel */
	struct epoll_event *buf;
	int buf_size;
	zend_ulong *check;          /* keys to look at before the next wait (see weft_epoll_sweep) */
	uint32_t check_count;
	uint32_t check_size;
	uint64_t last_full_sweep;   /* CLOCK_MONOTONIC ns */
	zend_object std;
} weft_epoll_object;

static zend_class_entry *weft_ce_epoll;
static zend_class_entry *weft_ce_epoll_exception;
static zend_object_handlers weft_epoll_handlers;

/* Incremented in every child process by a pthread_atfork() handler: an Epoll whose generation differs
 * was created by an ancestor process and shares its kernel object with it. glibc unregisters the
 * handler when this library is unloaded. */
static uint32_t weft_fork_generation = 0;

#ifdef HAVE_EPOLL_PWAIT2
/* Set when the kernel (or a seccomp filter) refuses epoll_pwait2(): fall back to epoll_wait() for good. */
static bool weft_pwait2_unavailable = false;
#endif

static inline weft_epoll_object *weft_epoll_from_obj(zend_object *obj)
{
	return (weft_epoll_object *) ((char *) obj - XtOffsetOf(weft_epoll_object, std));
}

#define Z_WEFT_EPOLL_P(zv) weft_epoll_from_obj(Z_OBJ_P(zv))

static const char *weft_errno_name(int err)
{
	switch (err) {
		case EBADF: return "EBADF";
		case EEXIST: return "EEXIST";
		case ENOENT: return "ENOENT";
		case EPERM: return "EPERM";
		case EINVAL: return "EINVAL";
		case ELOOP: return "ELOOP";
		case ENOMEM: return "ENOMEM";
		case ENOSPC: return "ENOSPC";
		case EMFILE: return "EMFILE";
		case ENFILE: return "ENFILE";
		case EINTR: return "EINTR";
		case EFAULT: return "EFAULT";
		default: return NULL;
	}
}

/* A usage error that has an errno meaning: EpollException("<what> (<ENAME>)") with the errno as its code. */
static ZEND_COLD void weft_epoll_throw_key(int err, zend_long key, const char *state)
{
	zend_throw_exception_ex(weft_ce_epoll_exception, err, "Key " ZEND_LONG_FMT " is %s (%s)", key, state, weft_errno_name(err));
}

/* Throws EpollException("<what>: <strerror> (<ENAME>)") with the errno as its code. */
static ZEND_COLD void weft_epoll_throw(int err, const char *format, ...) ZEND_ATTRIBUTE_FORMAT(printf, 2, 3);
static ZEND_COLD void weft_epoll_throw(int err, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	zend_string *what = zend_vstrpprintf(0, format, args);
	va_end(args);

	const char *name = weft_errno_name(err);
	if (name != NULL) {
		zend_throw_exception_ex(weft_ce_epoll_exception, err, "%s: %s (%s)", ZSTR_VAL(what), strerror(err), name);
	} else if (err != 0) {
		zend_throw_exception_ex(weft_ce_epoll_exception, err, "%s: %s", ZSTR_VAL(what), strerror(err));
	} else {
		zend_throw_exception_ex(weft_ce_epoll_exception, 0, "%s", ZSTR_VAL(what));
	}
	zend_string_release(what);
}

static void weft_atfork_child(void)
{
	weft_fork_generation++;
}

/* The object behind $this, or NULL with an exception when it cannot be used for this call. */
static weft_epoll_object *weft_epoll_usable(zval *this_zv, bool allow_foreign)
{
	weft_epoll_object *obj = Z_WEFT_EPOLL_P(this_zv);
	if (UNEXPECTED(obj->epfd < 0)) {
		zend_throw_error(NULL, "Weft\\Ext\\Epoll object is not initialized (its constructor was not called)");
		return NULL;
	}
	if (UNEXPECTED(obj->busy)) {
		zend_throw_error(NULL, "Weft\\Ext\\Epoll is in wait(): a stream's cast handler may not call back into it");
		return NULL;
	}
	if (UNEXPECTED(!allow_foreign && obj->generation != weft_fork_generation)) {
		weft_epoll_throw(0, "This Epoll was created by process %d before fork() and shares its kernel object with it; "
			"create a new Epoll in the child (Weft: Loop::reset())", (int) obj->pid);
		return NULL;
	}
	return obj;
}

static void weft_epoll_entry_dtor(zval *zv)
{
	weft_epoll_entry *entry = Z_PTR_P(zv);
	if (entry->res != NULL) {
		zend_list_delete(entry->res);
	}
	efree(entry);
}

/* Whether PHP code closed the entry's stream. A raw descriptor (add() with an int) is never "closed" from
 * here: its owner (a hook of the extension) removes it before closing the descriptor. */
static inline bool weft_resource_closed(const zend_resource *res)
{
	return res != NULL && res->type < 0;
}

/* The descriptor stream_select() would use, or -1. */
static php_socket_t weft_stream_fd(php_stream *stream)
{
	php_socket_t fd = -1;
	if (php_stream_cast(stream, PHP_STREAM_AS_FD_FOR_SELECT | PHP_STREAM_CAST_INTERNAL, (void *) &fd, 0) != SUCCESS) {
		return -1;
	}
	return fd;
}

/*
 * Streams whose cast may do work beyond returning the descriptor: OpenSSL moves decrypted bytes it
 * already holds into PHP's read buffer there (TCP streams use the TLS-capable ops whenever ext/openssl
 * is loaded), user-space wrappers run stream_cast(). stream_select() casts on every call; wait() does
 * it for these streams only, and only after they were read from.
 */
static bool weft_stream_needs_recast(const php_stream *stream)
{
	static const char *const plain[] = {"STDIO", "generic_socket", "unix_socket", "udg_socket", "udp_socket", "tcp_socket"};
	const char *label = stream->ops->label;
	if (label == NULL) {
		return true;
	}
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		if (strcmp(label, plain[i]) == 0) {
			return false;
		}
	}
	return true;
}

static bool weft_epoll_check_events(zend_long events, uint32_t arg_num)
{
	if (events < 0 || (events & ~(zend_long) WEFT_EPOLL_USER_EVENTS) != 0) {
		zend_argument_value_error(arg_num, "must be a combination of the Epoll::IN, OUT, PRI, RDHUP, ET and ONESHOT flags");
		return false;
	}
	return true;
}

/*
 * Forgets a key. With del, and if the key still owns its descriptor number, also removes the kernel
 * registration (for a closed stream that is usually gone already: EBADF/ENOENT are expected and ignored;
 * it is still there when the stream did not own its descriptor, as with pg_socket()).
 */
static void weft_epoll_forget(weft_epoll_object *obj, zend_ulong key, weft_epoll_entry *entry, bool del)
{
	int fd = entry->fd;
	zval *owner = zend_hash_index_find(&obj->owners, (zend_ulong) fd);
	if (owner != NULL && (zend_ulong) Z_LVAL_P(owner) == key) {
		if (del) {
			struct epoll_event ev = {0};
			(void) epoll_ctl(obj->epfd, EPOLL_CTL_DEL, fd, &ev);
		}
		zend_hash_index_del(&obj->owners, (zend_ulong) fd);
	}
	if (entry->res != NULL) {
		obj->streams--;
	}
	zend_hash_index_del(&obj->entries, key); /* releases the resource */
}

static void weft_epoll_set_owner(weft_epoll_object *obj, int fd, zend_long key)
{
	zval owner;
	ZVAL_LONG(&owner, key);
	zend_hash_index_update(&obj->owners, (zend_ulong) fd, &owner);
}

/* Remembers a key PHP code is likely to act on before the next wait(): its stream is checked then. */
static void weft_epoll_note(weft_epoll_object *obj, zend_ulong key)
{
	if (obj->check_count == obj->check_size) {
		obj->check_size = obj->check_size == 0 ? 64 : obj->check_size * 2;
		obj->check = safe_erealloc(obj->check, obj->check_size, sizeof(zend_ulong), 0);
	}
	obj->check[obj->check_count++] = key;
}

static uint64_t weft_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static zend_object *weft_epoll_create(zend_class_entry *ce)
{
	weft_epoll_object *obj = zend_object_alloc(sizeof(weft_epoll_object), ce);
	zend_object_std_init(&obj->std, ce);
	object_properties_init(&obj->std, ce);
	obj->epfd = -1;
	obj->generation = weft_fork_generation;
	obj->pid = 0;
	obj->busy = false;
	obj->streams = 0;
	zend_hash_init(&obj->entries, 8, NULL, weft_epoll_entry_dtor, 0);
	zend_hash_init(&obj->owners, 8, NULL, NULL, 0);
	obj->buf = NULL;
	obj->buf_size = 0;
	obj->check = NULL;
	obj->check_count = 0;
	obj->check_size = 0;
	obj->last_full_sweep = 0;
	obj->std.handlers = &weft_epoll_handlers;
	return &obj->std;
}

static void weft_epoll_free(zend_object *object)
{
	weft_epoll_object *obj = weft_epoll_from_obj(object);
	/* In a forked child this closes only the child's copy of the descriptor: the parent's set is untouched. */
	if (obj->epfd >= 0) {
		close(obj->epfd);
		obj->epfd = -1;
	}
	zend_hash_destroy(&obj->entries);
	zend_hash_destroy(&obj->owners);
	if (obj->buf != NULL) {
		efree(obj->buf);
		obj->buf = NULL;
	}
	if (obj->check != NULL) {
		efree(obj->check);
		obj->check = NULL;
	}
	zend_object_std_dtor(&obj->std);
}

static zend_result weft_epoll_open(weft_epoll_object *obj)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0) {
		weft_epoll_throw(errno, "epoll_create1() failed");
		return FAILURE;
	}
	obj->epfd = epfd;
	obj->generation = weft_fork_generation;
	obj->pid = getpid();
	return SUCCESS;
}

/* A new, open Weft\Ext\Epoll for C callers (the native loop), or NULL with an exception. */
zend_object *weft_epoll_new(void)
{
	zend_object *object = weft_epoll_create(weft_ce_epoll);
	if (weft_epoll_open(weft_epoll_from_obj(object)) != SUCCESS) {
		OBJ_RELEASE(object);
		return NULL;
	}
	return object;
}

/* Whether this Epoll was created by an ancestor process (it shares its kernel object with it). */
bool weft_epoll_inherited(zend_object *object)
{
	return weft_epoll_from_obj(object)->generation != weft_fork_generation;
}

/* Epoll::descriptorOf() for C callers: -1 when the zval is not a stream with a descriptor. */
int weft_epoll_descriptor_of(zval *zstream)
{
	if (Z_TYPE_P(zstream) != IS_RESOURCE) {
		return -1;
	}
	zend_resource *res = Z_RES_P(zstream);
	if (res->type != php_file_le_stream() && res->type != php_file_le_pstream()) {
		return -1;
	}
	return (int) weft_stream_fd((php_stream *) res->ptr);
}

PHP_METHOD(Weft_Ext_Epoll, __construct)
{
	ZEND_PARSE_PARAMETERS_NONE();

	weft_epoll_object *obj = Z_WEFT_EPOLL_P(ZEND_THIS);
	if (obj->epfd >= 0) {
		zend_throw_error(NULL, "Weft\\Ext\\Epoll::__construct() cannot be called twice");
		RETURN_THROWS();
	}
	if (weft_epoll_open(obj) != SUCCESS) {
		RETURN_THROWS();
	}
}

/* Epoll::add() for C callers (the native loop, weft_loop.c): FAILURE with an exception. */
zend_result weft_epoll_add(zend_object *object, zval *zstream, zend_long events, zend_long key)
{
	zval this_zv;
	ZVAL_OBJ(&this_zv, object);
	weft_epoll_object *obj = weft_epoll_usable(&this_zv, false);
	if (obj == NULL) {
		return FAILURE;
	}
	php_stream *stream = NULL;
	php_socket_t fd;
	if (Z_TYPE_P(zstream) == IS_LONG) {
		/* A raw descriptor (a hook waiting on a socket that has no stream resource, or whose stream PHP
		 * code cannot reach): the caller owns it and removes it before closing it. */
		if (Z_LVAL_P(zstream) < 0 || Z_LVAL_P(zstream) > INT_MAX) {
			zend_argument_value_error(1, "must be a stream resource or a descriptor number >= 0");
			return FAILURE;
		}
		fd = (php_socket_t) Z_LVAL_P(zstream);
	} else if (Z_TYPE_P(zstream) == IS_RESOURCE) {
		stream = (php_stream *) zend_fetch_resource2(Z_RES_P(zstream), "stream", php_file_le_stream(), php_file_le_pstream());
		if (stream == NULL) {
			return FAILURE;
		}
	} else {
		zend_argument_type_error(1, "must be of type resource|int, %s given", zend_zval_type_name(zstream));
		return FAILURE;
	}
	if (!weft_epoll_check_events(events, 2)) {
		return FAILURE;
	}
	if (stream != NULL) {
		fd = weft_stream_fd(stream);
		if (fd < 0) {
			weft_epoll_throw(0, "Cannot watch a stream of type %s: it has no file descriptor", stream->ops->label);
			return FAILURE;
		}
	}

	weft_epoll_entry *existing = zend_hash_index_find_ptr(&obj->entries, (zend_ulong) key);
	if (existing != NULL) {
		if (!weft_resource_closed(existing->res)) {
			weft_epoll_throw_key(EEXIST, key, "already registered");
			return FAILURE;
		}
		weft_epoll_forget(obj, (zend_ulong) key, existing, true);
	}

	struct epoll_event ev = {0};
	ev.events = (uint32_t) events;
	ev.data.u64 = (uint64_t) key;
	if (epoll_ctl(obj->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		int err = errno;
		if (err != EEXIST) {
			weft_epoll_throw(err, "epoll_ctl(EPOLL_CTL_ADD) failed for descriptor %d", (int) fd);
			return FAILURE;
		}
		/* This open file is still registered at this number: under a key whose stream was closed without
		 * closing the descriptor (pg_socket()), take the registration over; under a live key, refuse. */
		zval *owner = zend_hash_index_find(&obj->owners, (zend_ulong) fd);
		weft_epoll_entry *previous = owner != NULL ? zend_hash_index_find_ptr(&obj->entries, (zend_ulong) Z_LVAL_P(owner)) : NULL;
		if (previous == NULL || !weft_resource_closed(previous->res)) {
			if (owner != NULL) {
				weft_epoll_throw(EEXIST, "Descriptor %d is already registered under key " ZEND_LONG_FMT
					" (two stream resources for one descriptor)", (int) fd, Z_LVAL_P(owner));
			} else {
				weft_epoll_throw(EEXIST, "epoll_ctl(EPOLL_CTL_ADD) failed for descriptor %d", (int) fd);
			}
			return FAILURE;
		}
		if (epoll_ctl(obj->epfd, EPOLL_CTL_MOD, fd, &ev) != 0) {
			weft_epoll_throw(errno, "epoll_ctl(EPOLL_CTL_MOD) failed for descriptor %d", (int) fd);
			return FAILURE;
		}
		weft_epoll_forget(obj, (zend_ulong) Z_LVAL_P(owner), previous, false);
	}

	weft_epoll_entry *entry = emalloc(sizeof(*entry));
	entry->res = stream != NULL ? Z_RES_P(zstream) : NULL;
	if (entry->res != NULL) {
		GC_ADDREF(entry->res);
	}
	entry->fd = (int) fd;
	entry->events = (uint32_t) events;
	entry->recast = stream != NULL && weft_stream_needs_recast(stream);
	entry->seen_position = -1;
	zend_hash_index_add_new_ptr(&obj->entries, (zend_ulong) key, entry);
	if (entry->res != NULL) {
		obj->streams++;
	}
	weft_epoll_set_owner(obj, (int) fd, key);
	weft_epoll_note(obj, (zend_ulong) key);
	return SUCCESS;
}

PHP_METHOD(Weft_Ext_Epoll, add)
{
	zval *zstream;
	zend_long events, key;

	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_ZVAL(zstream)
		Z_PARAM_LONG(events)
		Z_PARAM_LONG(key)
	ZEND_PARSE_PARAMETERS_END();

	if (weft_epoll_add(Z_OBJ_P(ZEND_THIS), zstream, events, key) != SUCCESS) {
		RETURN_THROWS();
	}
}

zend_result weft_epoll_modify(zend_object *object, zend_long key, zend_long events)
{
	zval this_zv;
	ZVAL_OBJ(&this_zv, object);
	weft_epoll_object *obj = weft_epoll_usable(&this_zv, false);
	if (obj == NULL) {
		return FAILURE;
	}
	if (!weft_epoll_check_events(events, 2)) {
		return FAILURE;
	}
	weft_epoll_entry *entry = zend_hash_index_find_ptr(&obj->entries, (zend_ulong) key);
	if (entry == NULL) {
		weft_epoll_throw_key(ENOENT, key, "not registered");
		return FAILURE;
	}
	entry->events = (uint32_t) events;
	weft_epoll_note(obj, (zend_ulong) key);
	if (weft_resource_closed(entry->res)) {
		return SUCCESS; /* the next wait() reports it as closed */
	}
	struct epoll_event ev = {0};
	ev.events = (uint32_t) events;
	ev.data.u64 = (uint64_t) key;
	if (epoll_ctl(obj->epfd, EPOLL_CTL_MOD, entry->fd, &ev) != 0) {
		weft_epoll_throw(errno, "epoll_ctl(EPOLL_CTL_MOD) failed for descriptor %d", entry->fd);
		return FAILURE;
	}
	return SUCCESS;
}

PHP_METHOD(Weft_Ext_Epoll, modify)
{
	zend_long key, events;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(key)
		Z_PARAM_LONG(events)
	ZEND_PARSE_PARAMETERS_END();

	if (weft_epoll_modify(Z_OBJ_P(ZEND_THIS), key, events) != SUCCESS) {
		RETURN_THROWS();
	}
}

/* Epoll::remove() for C callers: 1 removed, 0 only forgotten (closed stream, forked child), -1 exception. */
int weft_epoll_remove(zend_object *object, zend_long key)
{
	zval this_zv;
	ZVAL_OBJ(&this_zv, object);
	weft_epoll_object *obj = weft_epoll_usable(&this_zv, true);
	if (obj == NULL) {
		return -1;
	}
	weft_epoll_entry *entry = zend_hash_index_find_ptr(&obj->entries, (zend_ulong) key);
	if (entry == NULL) {
		weft_epoll_throw_key(ENOENT, key, "not registered");
		return -1;
	}
	if (obj->generation != weft_fork_generation) {
		/* A forked child: the registrations belong to the parent, which still uses them. */
		weft_epoll_forget(obj, (zend_ulong) key, entry, false);
		return 0;
	}
	if (weft_resource_closed(entry->res)) {
		weft_epoll_forget(obj, (zend_ulong) key, entry, true);
		return 0;
	}

	int fd = entry->fd;
	zval *owner = zend_hash_index_find(&obj->owners, (zend_ulong) fd);
	int err = 0;
	if (owner != NULL && Z_LVAL_P(owner) == key) {
		struct epoll_event ev = {0};
		if (epoll_ctl(obj->epfd, EPOLL_CTL_DEL, fd, &ev) != 0) {
			err = errno;
		}
	}
	weft_epoll_forget(obj, (zend_ulong) key, entry, false);
	/* EBADF/ENOENT: the descriptor was closed underneath the stream (the kernel dropped it already). */
	if (err != 0 && err != EBADF && err != ENOENT) {
		weft_epoll_throw(err, "epoll_ctl(EPOLL_CTL_DEL) failed for descriptor %d", fd);
		return -1;
	}
	return 1;
}

PHP_METHOD(Weft_Ext_Epoll, remove)
{
	zend_long key;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(key)
	ZEND_PARSE_PARAMETERS_END();

	int removed = weft_epoll_remove(Z_OBJ_P(ZEND_THIS), key);
	if (removed < 0) {
		RETURN_THROWS();
	}
	RETURN_BOOL(removed > 0);
}

/* Adds bits to result[key]. */
static void weft_result_or(HashTable *result, zend_ulong key, zend_long bits)
{
	zval *seen = zend_hash_index_find(result, key);
	if (seen != NULL) {
		Z_LVAL_P(seen) |= bits;
	} else {
		zval value;
		ZVAL_LONG(&value, bits);
		zend_hash_index_add_new(result, key, &value);
	}
}

/*
 * What the kernel cannot tell about one registered stream: that PHP code closed it (CLOSED | HUP), or
 * that data already sits in PHP's read buffer (IN), where stream_select() would see it. May run a
 * stream's cast handler (TLS, user-space wrappers); the caller checks EG(exception).
 */
static zend_long weft_epoll_check_entry(weft_epoll_entry *entry)
{
	if (UNEXPECTED(weft_resource_closed(entry->res))) {
		return WEFT_EPOLL_CLOSED | EPOLLHUP;
	}
	if (entry->res == NULL || !(entry->events & EPOLLIN)) {
		return 0; /* a raw descriptor has no PHP-side buffer */
	}
	php_stream *stream = (php_stream *) entry->res->ptr;
	if (entry->recast && stream->position != entry->seen_position) {
		entry->seen_position = stream->position;
		(void) weft_stream_fd(stream);
		if (UNEXPECTED(EG(exception) != NULL)) {
			return 0;
		}
		if (UNEXPECTED(weft_resource_closed(entry->res))) {
			return WEFT_EPOLL_CLOSED | EPOLLHUP; /* a user-space wrapper closed itself */
		}
	}
	if (stream->writepos - stream->readpos > 0) {
		return EPOLLIN;
	}
	/* A read-ahead TLS stream (weft_tls.c) may hold whole records the kernel no longer reports. */
	return entry->recast && weft_tls_unread(stream) ? EPOLLIN : 0;
}

/*
 * Before waiting: report (and forget) keys whose streams PHP code closed, and report as readable the
 * streams whose data already sits in PHP's read buffer. Looking at every stream on every wait would make
 * a wait cost O(registered streams) again (about 8 ns each: 40 us with 5,000 idle connections), so the
 * fast path looks only at the streams PHP code is likely to have touched since the last wait: those that
 * wait reported, and those added or modified since. Every WEFT_EPOLL_FULL_SWEEP_NS the slow path looks at
 * all of them, and until it has, *timeout is capped so that it runs that soon: a stream closed or read
 * behind the loop's back (not from one of its callbacks) is noticed within about 10 ms.
 * Returns how many keys it put into result.
 */
static uint32_t weft_epoll_sweep(weft_epoll_object *obj, zval *result, double *timeout)
{
	HashTable *ht = Z_ARRVAL_P(result);
	uint32_t entries = zend_hash_num_elements(&obj->entries);
	uint64_t now = weft_monotonic_ns();
	bool full = now - obj->last_full_sweep >= WEFT_EPOLL_FULL_SWEEP_NS || obj->check_count >= entries / 2;
	zend_ulong key;
	weft_epoll_entry *entry;
	zend_long bits;

	obj->busy = true;
	if (full) {
		uint32_t closed = 0;
		obj->last_full_sweep = now;
		ZEND_HASH_FOREACH_NUM_KEY_PTR(&obj->entries, key, entry) {
			bits = weft_epoll_check_entry(entry);
			if (UNEXPECTED(EG(exception) != NULL)) {
				break;
			}
			if (bits != 0) {
				weft_result_or(ht, key, bits);
				closed += (bits & WEFT_EPOLL_CLOSED) ? 1 : 0;
			}
		} ZEND_HASH_FOREACH_END();
		if (closed > 0) {
			zval *events;
			ZEND_HASH_FOREACH_NUM_KEY_VAL(ht, key, events) {
				if ((Z_LVAL_P(events) & WEFT_EPOLL_CLOSED) && (entry = zend_hash_index_find_ptr(&obj->entries, key)) != NULL) {
					weft_epoll_forget(obj, key, entry, true);
				}
			} ZEND_HASH_FOREACH_END();
		}
	} else {
		for (uint32_t i = 0; i < obj->check_count; i++) {
			key = obj->check[i];
			entry = zend_hash_index_find_ptr(&obj->entries, key);
			if (entry == NULL) {
				continue; /* removed since, or listed twice and already reported closed */
			}
			bits = weft_epoll_check_entry(entry);
			if (UNEXPECTED(EG(exception) != NULL)) {
				break;
			}
			if (bits != 0) {
				weft_result_or(ht, key, bits);
				if (bits & WEFT_EPOLL_CLOSED) {
					weft_epoll_forget(obj, key, entry, true);
				}
			}
		}
		uint64_t due = WEFT_EPOLL_FULL_SWEEP_NS - (now - obj->last_full_sweep);
		double cap = (double) due / 1e9;
		if (*timeout < 0 || *timeout > cap) {
			*timeout = cap;
		}
	}
	obj->check_count = 0;
	obj->busy = false;
	obj->streams = 0;
	return zend_hash_num_elements(ht);
}

static int weft_epoll_wait_raw(weft_epoll_object *obj, int max, double timeout)
{
#ifdef HAVE_EPOLL_PWAIT2
	if (!weft_pwait2_unavailable) {
		struct timespec ts, *tsp = NULL;
		if (timeout >= 0) {
			if (timeout > 86400.0 * 365) {
				timeout = 86400.0 * 365;
			}
			ts.tv_sec = (time_t) timeout;
			ts.tv_nsec = (long) ((timeout - (double) ts.tv_sec) * 1e9);
			if (ts.tv_nsec > 999999999L) {
				ts.tv_nsec = 999999999L;
			}
			tsp = &ts;
		}
		int n = epoll_pwait2(obj->epfd, obj->buf, max, tsp, NULL);
		if (n >= 0 || (errno != ENOSYS && errno != EPERM)) {
			return n;
		}
		weft_pwait2_unavailable = true;
	}
#endif
	int ms = -1;
	if (timeout >= 0) {
		/* Round up: rounding down would wake a timer's wait early and spin until it is due. */
		double rounded = ceil(timeout * 1000.0);
		ms = rounded >= (double) INT_MAX ? INT_MAX : (int) rounded;
	}
	return epoll_wait(obj->epfd, obj->buf, max, ms);
}

/* Whether the sweep would report nothing for this entry, without running any stream code. */
static bool weft_epoll_entry_idle(const weft_epoll_entry *entry)
{
	if (entry->res == NULL) {
		return true;
	}
	if (weft_resource_closed(entry->res) || entry->recast) {
		return false;
	}
	const php_stream *stream = (const php_stream *) entry->res->ptr;
	return !(entry->events & EPOLLIN) || stream->writepos - stream->readpos <= 0;
}

/*
 * For a hook about to suspend a coroutine while the loop has nothing else to do (weft_loop_idle(), for
 * the hooks' idle poll): the
 * descriptor to poll(2) next to the hook's own, so that whatever would end the loop's next wait ends
 * this one too. -1 when a wait() would not block in the kernel: PHP code closed a watched stream, or
 * data sits in a PHP read buffer, among the streams the next sweep looks at (the same ones it would);
 * TLS and user-space streams, whose check may run PHP code, count as "not idle" without a look.
 * *budget is capped so the idle poll ends by the time the next full sweep is due, as wait()'s is.
 * *empty says that nothing is registered: the epoll descriptor can then never become ready, and a poll
 * need not watch it. Never throws.
 */
int weft_epoll_idle_fd(zend_object *object, double *budget, bool *empty)
{
	weft_epoll_object *obj = weft_epoll_from_obj(object);
	if (obj->epfd < 0 || obj->busy || obj->generation != weft_fork_generation) {
		return -1;
	}
	uint32_t entries = zend_hash_num_elements(&obj->entries);
	*empty = entries == 0;
	if (obj->streams == 0) {
		return obj->epfd; /* raw descriptors only (or none): the sweep has nothing to look at */
	}
	uint64_t now = weft_monotonic_ns();
	uint64_t since = now - obj->last_full_sweep;
	bool full = since >= WEFT_EPOLL_FULL_SWEEP_NS;
	weft_epoll_entry *entry;
	if (full || obj->check_count >= entries / 2) {
		/* wait() would look at them all (a full sweep is due, or few streams, or most of them touched):
		 * so do we. Finding nothing is what that sweep would have found now, so it counts as one. */
		ZEND_HASH_FOREACH_PTR(&obj->entries, entry) {
			if (!weft_epoll_entry_idle(entry)) {
				return -1;
			}
		} ZEND_HASH_FOREACH_END();
		if (full) {
			obj->last_full_sweep = now;
			since = 0;
		}
	} else {
		for (uint32_t i = 0; i < obj->check_count; i++) {
			entry = zend_hash_index_find_ptr(&obj->entries, obj->check[i]);
			if (entry != NULL && !weft_epoll_entry_idle(entry)) {
				return -1;
			}
		}
	}
	double cap = (double) (WEFT_EPOLL_FULL_SWEEP_NS - since) / 1e9;
	if (*budget < 0 || *budget > cap) {
		*budget = cap;
	}
	return obj->epfd;
}

/*
 * Epoll::wait() for C callers: fills return_value, an initialized empty array, with key => events.
 * FAILURE with an exception. EINTR is a SUCCESS with what the sweep found.
 */
zend_result weft_epoll_wait(zend_object *object, double timeout, zend_long max, zval *return_value)
{
	zval this_zv;
	ZVAL_OBJ(&this_zv, object);
	weft_epoll_object *obj = weft_epoll_usable(&this_zv, false);
	if (obj == NULL) {
		return FAILURE;
	}
	if (obj->buf_size < max) {
		obj->buf = safe_erealloc(obj->buf, (size_t) max, sizeof(struct epoll_event), 0);
		obj->buf_size = (int) max;
	}

	uint32_t pending = 0;
	if (zend_hash_num_elements(&obj->entries) > 0) {
		pending = weft_epoll_sweep(obj, return_value, &timeout);
	} else {
		obj->check_count = 0;
	}
	if (UNEXPECTED(EG(exception) != NULL)) {
		return FAILURE;
	}

	int n = weft_epoll_wait_raw(obj, (int) max, pending > 0 ? 0.0 : timeout);
	if (n < 0) {
		int err = errno;
		if (err == EINTR) {
			return SUCCESS; /* a signal: the caller dispatches it and waits again */
		}
		weft_epoll_throw(err, "epoll_wait() failed");
		return FAILURE;
	}

	HashTable *result = Z_ARRVAL_P(return_value);
	for (int i = 0; i < n; i++) {
		zend_ulong key = (zend_ulong) obj->buf[i].data.u64;
		zend_long events = (zend_long) obj->buf[i].events;
		/* Not registered (any more): a registration left behind by a stream closed while its open file
		 * lived on in another process. It cannot be removed without that file; drop its events. */
		if (UNEXPECTED(!zend_hash_index_exists(&obj->entries, key))) {
			continue;
		}
		/* The callbacks about to run for it will likely read it, or close it. */
		weft_epoll_note(obj, key);
		if (pending > 0) {
			weft_result_or(result, key, events);
		} else {
			zval value;
			ZVAL_LONG(&value, events);
			zend_hash_index_add_new(result, key, &value);
		}
	}
	return SUCCESS;
}

PHP_METHOD(Weft_Ext_Epoll, wait)
{
	double timeout = -1.0;
	zend_long max = 1024;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(timeout)
		Z_PARAM_LONG(max)
	ZEND_PARSE_PARAMETERS_END();

	if (zend_isnan(timeout)) {
		zend_argument_value_error(1, "must not be NAN");
		RETURN_THROWS();
	}
	if (max < 1 || max > WEFT_EPOLL_MAX_EVENTS) {
		zend_argument_value_error(2, "must be between 1 and %d", WEFT_EPOLL_MAX_EVENTS);
		RETURN_THROWS();
	}
	array_init(return_value);
	if (weft_epoll_wait(Z_OBJ_P(ZEND_THIS), timeout, max, return_value) != SUCCESS) {
		zval_ptr_dtor(return_value);
		ZVAL_NULL(return_value);
		RETURN_THROWS();
	}
}

PHP_METHOD(Weft_Ext_Epoll, count)
{
	ZEND_PARSE_PARAMETERS_NONE();
	weft_epoll_object *obj = Z_WEFT_EPOLL_P(ZEND_THIS);
	RETURN_LONG(zend_hash_num_elements(&obj->entries));
}

PHP_METHOD(Weft_Ext_Epoll, descriptorOf)
{
	zval *zstream;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ZVAL(zstream)
	ZEND_PARSE_PARAMETERS_END();

	if (Z_TYPE_P(zstream) != IS_RESOURCE) {
		RETURN_NULL();
	}
	zend_resource *res = Z_RES_P(zstream);
	if (res->type != php_file_le_stream() && res->type != php_file_le_pstream()) {
		RETURN_NULL();
	}
	php_socket_t fd = weft_stream_fd((php_stream *) res->ptr);
	if (fd < 0) {
		RETURN_NULL();
	}
	RETURN_LONG((zend_long) fd);
}

static void weft_epoll_class_constant(const char *name, size_t len, zend_long value)
{
	zend_declare_class_constant_long(weft_ce_epoll, name, len, value);
}

zend_class_entry *weft_epoll_class(void)
{
	return weft_ce_epoll;
}

zend_result weft_epoll_minit(const zend_function_entry *epoll_methods, const zend_function_entry *exception_methods)
{
	static bool atfork_registered = false;
	zend_class_entry ce;

	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "EpollException", exception_methods);
	weft_ce_epoll_exception = zend_register_internal_class_ex(&ce, spl_ce_RuntimeException);
	weft_ce_epoll_exception->ce_flags |= ZEND_ACC_FINAL;
	zend_class_implements(weft_ce_epoll_exception, 1, weft_ce_weft_exception);

	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "Epoll", epoll_methods);
	weft_ce_epoll = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_epoll->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	weft_ce_epoll->create_object = weft_epoll_create;
	zend_class_implements(weft_ce_epoll, 1, zend_ce_countable);

	memcpy(&weft_epoll_handlers, &std_object_handlers, sizeof(zend_object_handlers));
	weft_epoll_handlers.offset = XtOffsetOf(weft_epoll_object, std);
	weft_epoll_handlers.free_obj = weft_epoll_free;
	weft_epoll_handlers.clone_obj = NULL;

#define WEFT_EPOLL_CONST(name, value) weft_epoll_class_constant(name, sizeof(name) - 1, (zend_long) (value))
	WEFT_EPOLL_CONST("IN", EPOLLIN);
	WEFT_EPOLL_CONST("OUT", EPOLLOUT);
	WEFT_EPOLL_CONST("PRI", EPOLLPRI);
	WEFT_EPOLL_CONST("ERR", EPOLLERR);
	WEFT_EPOLL_CONST("HUP", EPOLLHUP);
	WEFT_EPOLL_CONST("RDHUP", EPOLLRDHUP);
	WEFT_EPOLL_CONST("ET", EPOLLET);
	WEFT_EPOLL_CONST("ONESHOT", EPOLLONESHOT);
	WEFT_EPOLL_CONST("CLOSED", WEFT_EPOLL_CLOSED);
#undef WEFT_EPOLL_CONST

	if (!atfork_registered) {
		if (pthread_atfork(NULL, NULL, weft_atfork_child) != 0) {
			return FAILURE;
		}
		atfork_registered = true;
	}
	return SUCCESS;
}
