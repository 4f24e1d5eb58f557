/*
 * Weft\Ext\Inotify: inotify(7) for `serve --watch` (src/Server/Watch/InotifySource.php).
 *
 * Deliberately small: one non-blocking, close-on-exec inotify descriptor; add()/remove() one watch at a
 * time (the PHP side walks directory trees and keeps the wd => directory map); read() drains what the
 * kernel has queued into a list of [wd, mask, cookie, name]. The descriptor is exposed as a number for
 * the event loop (fd()); the object owns it and closes it on close() or when it is freed.
 *
 * An Inotify shares its kernel object with a child after fork(): in another process than its creator
 * every method but close() and fd() throws, so that a worker can never steal the master's events.
 *
 * See weft.stub.php for the PHP-side contract.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "ext/spl/spl_exceptions.h"
#include "php_weft.h"

#include <sys/inotify.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* One read() drains at most this much; the rest stays queued and the descriptor stays readable (the loop
 * comes back). Room for at least one event with the longest name, as inotify(7) advises. */
#define WEFT_INOTIFY_BUFFER (64 * 1024)
#define WEFT_INOTIFY_ADD_FLAGS (IN_ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK | IN_MASK_ADD | IN_ONESHOT)

typedef struct {
	int fd;
	pid_t pid;                  /* creator: the only process that may add, remove and read */
	zend_object std;
} weft_inotify_object;

static zend_class_entry *weft_ce_inotify;
static zend_class_entry *weft_ce_inotify_exception;
static zend_object_handlers weft_inotify_handlers;

static inline weft_inotify_object *weft_inotify_from_obj(zend_object *obj)
{
	return (weft_inotify_object *) ((char *) obj - XtOffsetOf(weft_inotify_object, std));
}

#define Z_WEFT_INOTIFY_P(zv) weft_inotify_from_obj(Z_OBJ_P(zv))

static const char *weft_inotify_errno_name(int err)
{
	switch (err) {
		case EACCES: return "EACCES";
		case EBADF: return "EBADF";
		case EINVAL: return "EINVAL";
		case ENOENT: return "ENOENT";
		case ENOMEM: return "ENOMEM";
		case ENOSPC: return "ENOSPC";
		case ENOTDIR: return "ENOTDIR";
		case EMFILE: return "EMFILE";
		case ENFILE: return "ENFILE";
		case ENAMETOOLONG: return "ENAMETOOLONG";
		case ELOOP: return "ELOOP";
		default: return NULL;
	}
}

/* InotifyException("<what>: <strerror> (<ENAME>)") with the errno as its code. */
static ZEND_COLD void weft_inotify_throw(int err, const char *format, ...) ZEND_ATTRIBUTE_FORMAT(printf, 2, 3);
static ZEND_COLD void weft_inotify_throw(int err, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	zend_string *what = zend_vstrpprintf(0, format, args);
	va_end(args);
	const char *name = weft_inotify_errno_name(err);
	if (err == 0) {
		zend_throw_exception_ex(weft_ce_inotify_exception, 0, "%s", ZSTR_VAL(what));
	} else if (name != NULL) {
		zend_throw_exception_ex(weft_ce_inotify_exception, err, "%s: %s (%s)", ZSTR_VAL(what), strerror(err), name);
	} else {
		zend_throw_exception_ex(weft_ce_inotify_exception, err, "%s: %s", ZSTR_VAL(what), strerror(err));
	}
	zend_string_release(what);
}

/* The object behind $this when it may be used for add(), remove() and read() here; NULL with an exception. */
static weft_inotify_object *weft_inotify_usable(zval *this_zv)
{
	weft_inotify_object *obj = Z_WEFT_INOTIFY_P(this_zv);
	if (UNEXPECTED(obj->fd < 0)) {
		weft_inotify_throw(0, "This Inotify is closed (or its constructor was not called)");
		return NULL;
	}
	if (UNEXPECTED(obj->pid != getpid())) {
		weft_inotify_throw(0, "This Inotify was created by process %d before fork() and shares its kernel object with it; "
			"close() it in the child", (int) obj->pid);
		return NULL;
	}
	return obj;
}

static zend_object *weft_inotify_create(zend_class_entry *ce)
{
	weft_inotify_object *obj = zend_object_alloc(sizeof(weft_inotify_object), ce);
	obj->fd = -1;
	obj->pid = 0;
	zend_object_std_init(&obj->std, ce);
	object_properties_init(&obj->std, ce);
	obj->std.handlers = &weft_inotify_handlers;
	return &obj->std;
}

static void weft_inotify_free(zend_object *object)
{
	weft_inotify_object *obj = weft_inotify_from_obj(object);
	/* In a forked child this closes only the child's copy: the creator's watches are untouched. */
	if (obj->fd >= 0) {
		close(obj->fd);
		obj->fd = -1;
	}
	zend_object_std_dtor(&obj->std);
}

PHP_METHOD(Weft_Ext_Inotify, __construct)
{
	ZEND_PARSE_PARAMETERS_NONE();

	weft_inotify_object *obj = Z_WEFT_INOTIFY_P(ZEND_THIS);
	if (obj->pid != 0) {
		zend_throw_error(NULL, "Weft\\Ext\\Inotify::__construct() cannot be called twice");
		RETURN_THROWS();
	}
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		weft_inotify_throw(errno, "inotify_init1() failed");
		RETURN_THROWS();
	}
	obj->fd = fd;
	obj->pid = getpid();
}

PHP_METHOD(Weft_Ext_Inotify, fd)
{
	ZEND_PARSE_PARAMETERS_NONE();

	weft_inotify_object *obj = Z_WEFT_INOTIFY_P(ZEND_THIS);
	if (obj->fd < 0) {
		RETURN_NULL();
	}
	RETURN_LONG(obj->fd);
}

PHP_METHOD(Weft_Ext_Inotify, add)
{
	char *path;
	size_t path_len;
	zend_long mask;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH(path, path_len)
		Z_PARAM_LONG(mask)
	ZEND_PARSE_PARAMETERS_END();

	if (path_len == 0) {
		zend_argument_value_error(1, "cannot be empty");
		RETURN_THROWS();
	}
	if (mask <= 0 || (mask & ~(zend_long) WEFT_INOTIFY_ADD_FLAGS) != 0 || (mask & IN_ALL_EVENTS) == 0) {
		zend_argument_value_error(2, "must name at least one event and only Inotify's constants");
		RETURN_THROWS();
	}
	weft_inotify_object *obj = weft_inotify_usable(ZEND_THIS);
	if (obj == NULL) {
		RETURN_THROWS();
	}
	int wd = inotify_add_watch(obj->fd, path, (uint32_t) mask);
	if (wd < 0) {
		weft_inotify_throw(errno, "inotify_add_watch(\"%s\") failed", path);
		RETURN_THROWS();
	}
	RETURN_LONG(wd);
}

PHP_METHOD(Weft_Ext_Inotify, remove)
{
	zend_long wd;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(wd)
	ZEND_PARSE_PARAMETERS_END();

	if (wd < 0 || wd > INT_MAX) {
		zend_argument_value_error(1, "must be a watch descriptor returned by add()");
		RETURN_THROWS();
	}
	weft_inotify_object *obj = weft_inotify_usable(ZEND_THIS);
	if (obj == NULL) {
		RETURN_THROWS();
	}
	/* EINVAL: not a watch of this instance, or already gone (its directory was deleted). */
	RETURN_BOOL(inotify_rm_watch(obj->fd, (int) wd) == 0);
}

PHP_METHOD(Weft_Ext_Inotify, read)
{
	ZEND_PARSE_PARAMETERS_NONE();

	weft_inotify_object *obj = weft_inotify_usable(ZEND_THIS);
	if (obj == NULL) {
		RETURN_THROWS();
	}
	char *buffer = emalloc(WEFT_INOTIFY_BUFFER);
	ssize_t got;
	do {
		got = read(obj->fd, buffer, WEFT_INOTIFY_BUFFER);
	} while (got < 0 && errno == EINTR);
	if (got < 0) {
		int err = errno;
		efree(buffer);
		if (err == EAGAIN || err == EWOULDBLOCK) {
			RETURN_EMPTY_ARRAY();
		}
		weft_inotify_throw(err, "read() of the inotify descriptor failed");
		RETURN_THROWS();
	}

	array_init(return_value);
	size_t offset = 0;
	size_t total = (size_t) got;
	while (total - offset >= sizeof(struct inotify_event)) {
		/* Copied out rather than cast in place: the buffer's alignment is emalloc's, not the struct's. */
		struct inotify_event event;
		memcpy(&event, buffer + offset, sizeof(event));
		if (event.len > total - offset - sizeof(event)) {
			break; /* a truncated record: never the kernel's, but never read past the buffer either */
		}
		const char *name = buffer + offset + sizeof(event);
		size_t name_len = event.len > 0 ? strnlen(name, event.len) : 0;

		zval entry;
		array_init_size(&entry, 4);
		add_next_index_long(&entry, event.wd);
		add_next_index_long(&entry, (zend_long) event.mask);
		add_next_index_long(&entry, (zend_long) event.cookie);
		add_next_index_stringl(&entry, name, name_len);
		add_next_index_zval(return_value, &entry);
		offset += sizeof(event) + event.len;
	}
	efree(buffer);
}

PHP_METHOD(Weft_Ext_Inotify, close)
{
	ZEND_PARSE_PARAMETERS_NONE();

	weft_inotify_object *obj = Z_WEFT_INOTIFY_P(ZEND_THIS);
	if (obj->fd >= 0) {
		close(obj->fd);
		obj->fd = -1;
	}
}

static void weft_inotify_class_constant(const char *name, size_t len, zend_long value)
{
	zend_declare_class_constant_long(weft_ce_inotify, name, len, value);
}

zend_result weft_inotify_minit(const zend_function_entry *inotify_methods, const zend_function_entry *exception_methods)
{
	zend_class_entry ce;

	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "InotifyException", exception_methods);
	weft_ce_inotify_exception = zend_register_internal_class_ex(&ce, spl_ce_RuntimeException);
	weft_ce_inotify_exception->ce_flags |= ZEND_ACC_FINAL;
	zend_class_implements(weft_ce_inotify_exception, 1, weft_ce_weft_exception);

	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "Inotify", inotify_methods);
	weft_ce_inotify = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_inotify->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	weft_ce_inotify->create_object = weft_inotify_create;

	memcpy(&weft_inotify_handlers, &std_object_handlers, sizeof(zend_object_handlers));
	weft_inotify_handlers.offset = XtOffsetOf(weft_inotify_object, std);
	weft_inotify_handlers.free_obj = weft_inotify_free;
	weft_inotify_handlers.clone_obj = NULL;

#define WEFT_INOTIFY_CONST(name, value) weft_inotify_class_constant(name, sizeof(name) - 1, (zend_long) (value))
	WEFT_INOTIFY_CONST("ACCESS", IN_ACCESS);
	WEFT_INOTIFY_CONST("MODIFY", IN_MODIFY);
	WEFT_INOTIFY_CONST("ATTRIB", IN_ATTRIB);
	WEFT_INOTIFY_CONST("CLOSE_WRITE", IN_CLOSE_WRITE);
	WEFT_INOTIFY_CONST("CLOSE_NOWRITE", IN_CLOSE_NOWRITE);
	WEFT_INOTIFY_CONST("OPEN", IN_OPEN);
	WEFT_INOTIFY_CONST("MOVED_FROM", IN_MOVED_FROM);
	WEFT_INOTIFY_CONST("MOVED_TO", IN_MOVED_TO);
	WEFT_INOTIFY_CONST("CREATE", IN_CREATE);
	WEFT_INOTIFY_CONST("DELETE", IN_DELETE);
	WEFT_INOTIFY_CONST("DELETE_SELF", IN_DELETE_SELF);
	WEFT_INOTIFY_CONST("MOVE_SELF", IN_MOVE_SELF);
	WEFT_INOTIFY_CONST("ALL_EVENTS", IN_ALL_EVENTS);
	WEFT_INOTIFY_CONST("ONLYDIR", IN_ONLYDIR);
	WEFT_INOTIFY_CONST("DONT_FOLLOW", IN_DONT_FOLLOW);
	WEFT_INOTIFY_CONST("EXCL_UNLINK", IN_EXCL_UNLINK);
	WEFT_INOTIFY_CONST("MASK_ADD", IN_MASK_ADD);
	WEFT_INOTIFY_CONST("ONESHOT", IN_ONESHOT);
	/* Reported only */
	WEFT_INOTIFY_CONST("UNMOUNT", IN_UNMOUNT);
	WEFT_INOTIFY_CONST("Q_OVERFLOW", IN_Q_OVERFLOW);
	WEFT_INOTIFY_CONST("IGNORED", IN_IGNORED);
	WEFT_INOTIFY_CONST("ISDIR", IN_ISDIR);
#undef WEFT_INOTIFY_CONST
	return SUCCESS;
}
