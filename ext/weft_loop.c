/*
 * Weft\Ext\Loop: the native event loop. Weft\Loop\NativeDriver (a PHP class with no body) extends it and
 * implements the Loop\Driver contract with these methods; run() is one call into C that dispatches
 * everything: deferred calls, signals, the epoll wait, the ready streams, timers, calling each PHP
 * closure directly (zend_call_known_function with the closure's cached function, no PHP in between).
 *
 * It mirrors, rule for rule, what the PHP loop (src/Loop/Internal/AbstractDriver.php with the epoll
 * backend it replaces) does, so the two loops pass one contract suite (tests/Unit/Loop/DriverContract.php):
 *  - streams: one kernel registration per stream (keyed by its resource id; a raw descriptor by -1 - fd)
 *    with the union of its enabled watchers' interest, kept by the Weft\Ext\Epoll object this loop owns
 *    (weft_epoll.c: closed streams, data in PHP's read buffers, TLS, the owner rule, fork). Changes of
 *    interest are applied just before the next wait, except on cancel(), which applies at once;
 *  - timers: a binary heap on (millisecond due, creation sequence): never early, at most 1 ms late,
 *    timers due within one millisecond fire in creation order; a repeat re-arms from the tick's time;
 *  - signals: PHP's pcntl (pcntl_signal + pcntl_signal_dispatch once per tick), as the PHP loop does,
 *    so the handlers and masks a forked child inherits are the same as before;
 *  - an exception from a callback goes to the error handler, else stops run(), which rethrows it; exit()
 *    inside a callback ends run() at once and propagates.
 *
 * Native code registers C handlers on the same loop through weft_loop.h.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_closures.h"
#include "zend_interfaces.h"
#include "php_weft.h"
#include "weft_loop.h"

#include <sys/epoll.h>
#include <poll.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <time.h>

#define WEFT_EPOLL_CLOSED_BIT (1u << 24) /* weft_epoll.c's WEFT_EPOLL_CLOSED */
#define WEFT_LOOP_MAX_EVENTS 1024
#define WEFT_LOOP_NSIG 65

enum { W_READ = 0, W_WRITE = 1, W_DELAY = 2, W_REPEAT = 3, W_SIGNAL = 4, W_DEFER = 5 };

typedef struct weft_watcher {
	uint32_t refcount;
	uint8_t type;
	bool enabled;
	bool referenced;
	bool alive;                 /* in the loop's table: not cancelled, not done */
	zend_ulong id;
	zend_string *sid;           /* "w<id>", what PHP sees; NULL for a C watcher (no PHP callback is handed it) */
	zval callback;              /* the Closure; UNDEF for a C watcher */
	zend_fcall_info_cache fcc;
	void *handler;              /* C watcher: weft_loop_fd_handler or weft_loop_handler */
	void *data;
	weft_loop_release release;
	zend_long key;              /* streams: resource id, or -1 - fd for a raw descriptor */
	zval stream;                /* the resource, or the descriptor as an int */
	uint64_t interval_ns;
	uint64_t due_ms;
	uint64_t seq;
	uint32_t heap_pos;          /* 1-based position in the timer heap; 0: not in it */
	int signo;
} weft_watcher;

typedef struct {
	zend_long key;
	zval stream;
	uint32_t registered;        /* interest last given to the kernel */
	bool in_set;                /* registered: in the kernel's set, or always ready */
	bool always_ready;          /* a regular file (epoll refuses it) or a stream closed before it was set */
	bool dirty;                 /* its interest may differ from `registered` */
	HashTable readers;          /* id => weft_watcher*, in the order they were enabled */
	HashTable writers;
} weft_io;

struct weft_loop {
	zend_object *epoll;
	HashTable watchers;         /* id => weft_watcher* (holds one reference) */
	HashTable ios;              /* key => weft_io* */
	uint32_t ios_in_set;
	uint32_t always_ready;
	zend_long *dirty;
	uint32_t dirty_count;
	uint32_t dirty_size;
	HashTable defers;           /* id => weft_watcher* (holds one reference each), in order */
	uint32_t defer_left;        /* deferred calls of the running tick not run yet */
	weft_watcher **heap;
	uint32_t heap_count;
	uint32_t heap_size;
	uint64_t timer_seq;
	HashTable signals;          /* signo => HashTable of id => weft_watcher* */
	int *pending_signals;
	uint32_t pending_count;
	uint32_t pending_size;
	zend_ulong next_id;
	zend_long referenced;       /* enabled and referenced watchers other than deferred ones */
	uint32_t undispatched;      /* events of the running dispatch not handed out yet */
	uint32_t idle_skip;         /* hooked waits left that do not try an idle poll (see weft_loop_idle_poll) */
	uint32_t idle_backoff;      /* skip length after the next miss */
	bool running;
	bool stopped;
	bool bailing;               /* exit() inside a callback: leave run() at once */
	uint64_t now_ns;
	zval error_handler;
	zend_object *pending_error;
	zval events;                /* reused result array of the epoll wait */
	zend_object std;
};

static zend_class_entry *weft_ce_loop;
static zend_object_handlers weft_loop_handlers;
/* The loop whose signal watchers own each signal's pcntl handler (one handler per signal per process). */
static weft_loop *weft_signal_owner[WEFT_LOOP_NSIG];

static inline weft_loop *weft_loop_from_obj(zend_object *obj)
{
	return (weft_loop *) ((char *) obj - XtOffsetOf(weft_loop, std));
}

static uint64_t weft_loop_hrtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* ---- watchers ---------------------------------------------------------------------------------- */

static void weft_watcher_release(weft_watcher *w)
{
	if (--w->refcount > 0) {
		return;
	}
	if (w->release != NULL) {
		w->release(w->data);
	}
	zval_ptr_dtor(&w->callback);
	zval_ptr_dtor(&w->stream);
	if (w->sid != NULL) {
		zend_string_release(w->sid);
	}
	efree(w);
}

/* "w<id>", written by hand: every timer makes one (a sleep, a hooked wait's deadline), and the printf
 * machinery (zend_strpprintf) cost ~470 instructions of a 10 ms sleep's ~27,000. */
static zend_string *weft_watcher_sid(zend_ulong id)
{
	char buf[MAX_LENGTH_OF_LONG + 2];
	char *end = buf + sizeof(buf) - 1;
	char *start = zend_print_ulong_to_buf(end, id);
	*--start = 'w';
	return zend_string_init(start, (size_t) (end - start), 0);
}

static weft_watcher *weft_watcher_new(weft_loop *loop, uint8_t type, zval *callback)
{
	weft_watcher *w = ecalloc(1, sizeof(*w));
	w->refcount = 1;
	w->type = type;
	w->enabled = true;
	w->referenced = true;
	w->alive = true;
	w->id = loop->next_id++;
	/* A C watcher's id string would be 32 bytes per connection that nothing reads: PHP names it by
	 * number through its owner (Conn::watcher()), and weft_loop_find() parses the number. */
	w->sid = callback != NULL ? weft_watcher_sid(w->id) : NULL;
	ZVAL_UNDEF(&w->stream);
	ZVAL_UNDEF(&w->callback);
	if (callback != NULL) {
		ZVAL_COPY(&w->callback, callback);
		/* A Closure is always callable: this only fills the cache (function, scope, $this). */
		(void) zend_is_callable_ex(callback, NULL, 0, NULL, &w->fcc, NULL);
	}
	return w;
}

static weft_watcher *weft_loop_find(weft_loop *loop, zend_string *sid)
{
	const char *s = ZSTR_VAL(sid);
	size_t len = ZSTR_LEN(sid);
	if (len < 2 || len > 21 || s[0] != 'w') {
		return NULL;
	}
	zend_ulong id = 0;
	for (size_t i = 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || (i == 1 && s[i] == '0' && len > 2)) {
			return NULL;
		}
		id = id * 10 + (zend_ulong) (s[i] - '0');
	}
	return zend_hash_index_find_ptr(&loop->watchers, id);
}

static ZEND_COLD void weft_loop_throw_unknown(zend_string *sid)
{
	zend_string *name = zend_string_init("Weft\\Loop\\InvalidWatcher", sizeof("Weft\\Loop\\InvalidWatcher") - 1, 0);
	zend_class_entry *ce = zend_lookup_class(name);
	zend_string_release(name);
	if (EG(exception) != NULL) {
		return;
	}
	zend_throw_exception_ex(ce != NULL ? ce : zend_ce_error, 0, "Unknown watcher id '%s' (never created, or already cancelled)", ZSTR_VAL(sid));
}

/* ---- error handling ---------------------------------------------------------------------------- */

/* A callback left EG(exception): the error handler gets it, or run() stops and rethrows it. */
static void weft_loop_handle_error(weft_loop *loop)
{
	zend_object *ex = EG(exception);
	if (zend_is_unwind_exit(ex) || zend_is_graceful_exit(ex)) {
		loop->stopped = true;
		loop->bailing = true;
		return; /* stays in EG(exception): run() returns with it */
	}
	GC_ADDREF(ex);
	zend_clear_exception();
	if (Z_TYPE(loop->error_handler) == IS_OBJECT) {
		zval arg, retval, handler;
		ZVAL_OBJ(&arg, ex);
		ZVAL_COPY(&handler, &loop->error_handler); /* the handler may replace itself */
		zend_fcall_info_cache fcc;
		(void) zend_is_callable_ex(&handler, NULL, 0, NULL, &fcc, NULL);
		zend_call_known_function(fcc.function_handler, fcc.object, fcc.called_scope, &retval, 1, &arg, NULL);
		zval_ptr_dtor(&retval);
		zval_ptr_dtor(&handler);
		OBJ_RELEASE(ex);
		if (EG(exception) == NULL) {
			return;
		}
		ex = EG(exception);
		if (zend_is_unwind_exit(ex) || zend_is_graceful_exit(ex)) {
			loop->stopped = true;
			loop->bailing = true;
			return;
		}
		GC_ADDREF(ex);
		zend_clear_exception();
	}
	if (loop->pending_error == NULL) {
		loop->pending_error = ex;
	} else {
		OBJ_RELEASE(ex);
	}
	loop->stopped = true;
}

/* Calls a watcher's callback with (id[, arg]); for a C watcher its handler. */
static void weft_loop_invoke(weft_loop *loop, weft_watcher *w, zval *arg)
{
	if (UNEXPECTED(loop->bailing)) {
		return;
	}
	w->refcount++;
	if (Z_TYPE(w->callback) == IS_OBJECT) {
		zval params[2], retval;
		ZVAL_STR(&params[0], w->sid);
		uint32_t count = 1;
		if (arg != NULL) {
			ZVAL_COPY_VALUE(&params[1], arg);
			count = 2;
		}
		zend_call_known_function(w->fcc.function_handler, w->fcc.object, w->fcc.called_scope, &retval, count, params, NULL);
		zval_ptr_dtor(&retval);
	} else if (w->handler != NULL) {
		/* The C API's ids are the table's + 1 (0 means "failed" there). */
		if (w->type == W_READ || w->type == W_WRITE) {
			((weft_loop_fd_handler) w->handler)(loop, w->id + 1, (int) Z_LVAL(w->stream), w->type == W_READ ? WEFT_LOOP_READ : WEFT_LOOP_WRITE, w->data);
		} else {
			((weft_loop_handler) w->handler)(loop, w->id + 1, w->data);
		}
	}
	weft_watcher_release(w);
	if (UNEXPECTED(EG(exception) != NULL)) {
		weft_loop_handle_error(loop);
	}
}

/* ---- timers: a binary heap on (due millisecond, sequence) --------------------------------------- */

static inline bool weft_timer_before(const weft_watcher *a, const weft_watcher *b)
{
	return a->due_ms < b->due_ms || (a->due_ms == b->due_ms && a->seq < b->seq);
}

static void weft_heap_set(weft_loop *loop, uint32_t i, weft_watcher *w)
{
	loop->heap[i] = w;
	w->heap_pos = i + 1;
}

static void weft_heap_up(weft_loop *loop, uint32_t i)
{
	weft_watcher *w = loop->heap[i];
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!weft_timer_before(w, loop->heap[parent])) {
			break;
		}
		weft_heap_set(loop, i, loop->heap[parent]);
		i = parent;
	}
	weft_heap_set(loop, i, w);
}

static void weft_heap_down(weft_loop *loop, uint32_t i)
{
	weft_watcher *w = loop->heap[i];
	for (;;) {
		uint32_t child = 2 * i + 1;
		if (child >= loop->heap_count) {
			break;
		}
		if (child + 1 < loop->heap_count && weft_timer_before(loop->heap[child + 1], loop->heap[child])) {
			child++;
		}
		if (!weft_timer_before(loop->heap[child], w)) {
			break;
		}
		weft_heap_set(loop, i, loop->heap[child]);
		i = child;
	}
	weft_heap_set(loop, i, w);
}

static void weft_timer_insert(weft_loop *loop, weft_watcher *w, uint64_t now_ns)
{
	/* Filed under the millisecond it falls due in (rounded up): the loop wakes at whole milliseconds. */
	w->due_ms = (now_ns + w->interval_ns + 999999u) / 1000000u;
	w->seq = loop->timer_seq++;
	if (loop->heap_count == loop->heap_size) {
		loop->heap_size = loop->heap_size == 0 ? 64 : loop->heap_size * 2;
		loop->heap = safe_erealloc(loop->heap, loop->heap_size, sizeof(weft_watcher *), 0);
	}
	loop->heap[loop->heap_count] = w;
	weft_heap_up(loop, loop->heap_count++);
}

static void weft_timer_remove(weft_loop *loop, weft_watcher *w)
{
	if (w->heap_pos == 0) {
		return;
	}
	uint32_t i = w->heap_pos - 1;
	w->heap_pos = 0;
	weft_watcher *last = loop->heap[--loop->heap_count];
	if (i == loop->heap_count) {
		return;
	}
	weft_heap_set(loop, i, last);
	if (i > 0 && weft_timer_before(last, loop->heap[(i - 1) / 2])) {
		weft_heap_up(loop, i);
	} else {
		weft_heap_down(loop, i);
	}
}

/* ---- streams ----------------------------------------------------------------------------------- */

static inline uint32_t weft_io_interest(weft_io *io)
{
	return (zend_hash_num_elements(&io->readers) > 0 ? EPOLLIN : 0) | (zend_hash_num_elements(&io->writers) > 0 ? EPOLLOUT : 0);
}

static inline bool weft_io_stream_open(weft_io *io)
{
	return Z_TYPE(io->stream) == IS_LONG || (Z_TYPE(io->stream) == IS_RESOURCE && Z_RES(io->stream)->type >= 0);
}

static void weft_io_set_always_ready(weft_loop *loop, weft_io *io, bool on)
{
	if (io->always_ready != on) {
		io->always_ready = on;
		if (on) {
			loop->always_ready++;
		} else {
			loop->always_ready--;
		}
	}
}

static void weft_io_set_in_set(weft_loop *loop, weft_io *io, bool on)
{
	if (io->in_set != on) {
		io->in_set = on;
		if (on) {
			loop->ios_in_set++;
		} else {
			loop->ios_in_set--;
		}
	}
}

/* Frees an io nothing refers to any more (no watchers, not registered). */
static void weft_io_maybe_free(weft_loop *loop, weft_io *io)
{
	if (io->in_set || zend_hash_num_elements(&io->readers) > 0 || zend_hash_num_elements(&io->writers) > 0) {
		return;
	}
	zend_hash_index_del(&loop->ios, (zend_ulong) io->key);
}

static void weft_io_dtor(zval *zv)
{
	weft_io *io = Z_PTR_P(zv);
	zend_hash_destroy(&io->readers);
	zend_hash_destroy(&io->writers);
	zval_ptr_dtor(&io->stream);
	efree(io);
}

static void weft_io_mark_dirty(weft_loop *loop, weft_io *io)
{
	if (io->dirty) {
		return;
	}
	io->dirty = true;
	if (loop->dirty_count == loop->dirty_size) {
		loop->dirty_size = loop->dirty_size == 0 ? 64 : loop->dirty_size * 2;
		loop->dirty = safe_erealloc(loop->dirty, loop->dirty_size, sizeof(zend_long), 0);
	}
	loop->dirty[loop->dirty_count++] = io->key;
}

/* Brings the kernel's registration of a stream in line with its enabled watchers. */
static zend_result weft_io_apply(weft_loop *loop, weft_io *io)
{
	io->dirty = false;
	if (!io->in_set) {
		weft_io_maybe_free(loop, io);
		return SUCCESS;
	}
	uint32_t interest = weft_io_interest(io);
	if (interest == io->registered) {
		return SUCCESS;
	}
	if (interest == 0) {
		weft_io_set_in_set(loop, io, false);
		zend_result result = SUCCESS;
		if (io->always_ready) {
			weft_io_set_always_ready(loop, io, false);
		} else if (weft_epoll_remove(loop->epoll, io->key) < 0) {
			result = FAILURE;
		}
		weft_io_maybe_free(loop, io);
		return result;
	}
	io->registered = interest;
	if (!io->always_ready) {
		return weft_epoll_modify(loop->epoll, io->key, (zend_long) interest);
	}
	return SUCCESS;
}

static zend_result weft_loop_apply_dirty(weft_loop *loop)
{
	uint32_t count = loop->dirty_count;
	loop->dirty_count = 0;
	for (uint32_t i = 0; i < count; i++) {
		weft_io *io = zend_hash_index_find_ptr(&loop->ios, (zend_ulong) loop->dirty[i]);
		if (io == NULL || !io->dirty || weft_io_apply(loop, io) == SUCCESS) {
			continue;
		}
		/* One exception is enough: the rest stay dirty for the next attempt (entries before i are done,
		 * so moving them to the front overwrites nothing still needed). */
		for (uint32_t j = i + 1; j < count; j++) {
			loop->dirty[loop->dirty_count++] = loop->dirty[j];
		}
		return FAILURE;
	}
	return SUCCESS;
}

/* The first registration of a stream in the kernel. FAILURE with an exception. */
static zend_result weft_io_register(weft_loop *loop, weft_io *io)
{
	uint32_t interest = weft_io_interest(io);
	if (!weft_io_stream_open(io)) {
		/* Closed before its watcher was enabled again: the next dispatch wakes and cancels it. */
		weft_io_set_always_ready(loop, io, true);
	} else if (weft_epoll_add(loop->epoll, &io->stream, (zend_long) interest, io->key) != SUCCESS) {
		zend_object *ex = EG(exception);
		if (ex == NULL || !instanceof_function(ex->ce, zend_ce_exception)) {
			return FAILURE; /* a TypeError (not a stream), an Error (inherited loop) */
		}
		zval rv;
		zend_long code = zval_get_long(zend_read_property_ex(zend_ce_exception, ex, ZSTR_KNOWN(ZEND_STR_CODE), 1, &rv));
		if (code != EPERM) {
			zend_string *message = zval_get_string(zend_read_property_ex(zend_ce_exception, ex, ZSTR_KNOWN(ZEND_STR_MESSAGE), 1, &rv));
			zend_string *name = zend_string_init("Weft\\Loop\\UnsupportedStream", sizeof("Weft\\Loop\\UnsupportedStream") - 1, 0);
			zend_class_entry *ce = zend_lookup_class(name);
			zend_string_release(name);
			if (ce != NULL && EG(exception) == ex) {
				/* The EpollException becomes its previous one. */
				zend_throw_exception_ex(ce, code, "The epoll loop cannot watch this stream: %s", ZSTR_VAL(message));
			}
			zend_string_release(message);
			return FAILURE;
		}
		/* A regular file or directory: never blocks, so always ready (what select reports). */
		zend_clear_exception();
		weft_io_set_always_ready(loop, io, true);
	}
	io->registered = interest;
	weft_io_set_in_set(loop, io, true);
	return SUCCESS;
}

static zend_result weft_stream_activate(weft_loop *loop, weft_watcher *w)
{
	weft_io *io = zend_hash_index_find_ptr(&loop->ios, (zend_ulong) w->key);
	if (io == NULL) {
		io = emalloc(sizeof(*io));
		io->key = w->key;
		ZVAL_COPY(&io->stream, &w->stream);
		io->registered = 0;
		io->in_set = false;
		io->always_ready = false;
		io->dirty = false;
		zend_hash_init(&io->readers, 2, NULL, NULL, 0);
		zend_hash_init(&io->writers, 2, NULL, NULL, 0);
		zend_hash_index_add_new_ptr(&loop->ios, (zend_ulong) w->key, io);
	}
	zend_hash_index_update_ptr(w->type == W_READ ? &io->readers : &io->writers, w->id, w);
	if (io->in_set) {
		weft_io_mark_dirty(loop, io);
		return SUCCESS;
	}
	if (weft_io_register(loop, io) != SUCCESS) {
		zend_hash_index_del(w->type == W_READ ? &io->readers : &io->writers, w->id);
		weft_io_maybe_free(loop, io);
		return FAILURE;
	}
	return SUCCESS;
}

static void weft_stream_deactivate(weft_loop *loop, weft_watcher *w)
{
	weft_io *io = zend_hash_index_find_ptr(&loop->ios, (zend_ulong) w->key);
	if (io == NULL) {
		return;
	}
	zend_hash_index_del(w->type == W_READ ? &io->readers : &io->writers, w->id);
	if (io->in_set) {
		weft_io_mark_dirty(loop, io);
	} else {
		weft_io_maybe_free(loop, io);
	}
}

/* ---- signals (through PHP's pcntl, as the PHP loop does) --------------------------------------- */

static zend_result weft_loop_call_function(const char *name, size_t len, uint32_t count, zval *params)
{
	zend_function *fn = zend_hash_str_find_ptr(EG(function_table), name, len);
	if (fn == NULL) {
		zend_throw_error(NULL, "Signal watchers need the pcntl extension");
		return FAILURE;
	}
	zval retval;
	zend_call_known_function(fn, NULL, NULL, &retval, count, params, NULL);
	zval_ptr_dtor(&retval);
	return EG(exception) == NULL ? SUCCESS : FAILURE;
}

static zend_result weft_signal_handler_set(weft_loop *loop, int signo, bool install)
{
	zval params[2];
	ZVAL_LONG(&params[0], signo);
	if (install) {
		zend_function *fn = zend_hash_str_find_ptr(&weft_ce_loop->function_table, "signalled", sizeof("signalled") - 1);
		zend_create_fake_closure(&params[1], fn, weft_ce_loop, weft_ce_loop, NULL);
	} else {
		ZVAL_LONG(&params[1], (zend_long) (uintptr_t) SIG_DFL);
	}
	zend_result result = weft_loop_call_function("pcntl_signal", sizeof("pcntl_signal") - 1, 2, params);
	zval_ptr_dtor(&params[1]);
	if (result == SUCCESS && signo > 0 && signo < WEFT_LOOP_NSIG) {
		weft_signal_owner[signo] = install ? loop : NULL;
	}
	return result;
}

static zend_result weft_signal_activate(weft_loop *loop, weft_watcher *w)
{
	HashTable *set = zend_hash_index_find_ptr(&loop->signals, (zend_ulong) w->signo);
	if (set == NULL) {
		if (weft_signal_handler_set(loop, w->signo, true) != SUCCESS) {
			return FAILURE;
		}
		ALLOC_HASHTABLE(set);
		zend_hash_init(set, 2, NULL, NULL, 0);
		zend_hash_index_add_new_ptr(&loop->signals, (zend_ulong) w->signo, set);
	}
	zend_hash_index_update_ptr(set, w->id, w);
	return SUCCESS;
}

static void weft_signal_set_dtor(zval *zv)
{
	HashTable *set = Z_PTR_P(zv);
	zend_hash_destroy(set);
	FREE_HASHTABLE(set);
}

static void weft_signal_deactivate(weft_loop *loop, weft_watcher *w)
{
	HashTable *set = zend_hash_index_find_ptr(&loop->signals, (zend_ulong) w->signo);
	if (set == NULL) {
		return;
	}
	zend_hash_index_del(set, w->id);
	if (zend_hash_num_elements(set) == 0) {
		zend_hash_index_del(&loop->signals, (zend_ulong) w->signo);
		zend_object *pending = EG(exception);
		if (pending != NULL) {
			/* cancel() from a finally while an exception flies: restore the default all the same */
			GC_ADDREF(pending);
			zend_clear_exception();
		}
		(void) weft_signal_handler_set(loop, w->signo, false);
		if (pending != NULL) {
			if (EG(exception) != NULL) {
				zend_clear_exception();
			}
			zend_throw_exception_internal(pending);
		}
	}
}

static void weft_loop_dispatch_signals(weft_loop *loop)
{
	while (loop->pending_count > 0) {
		int signo = loop->pending_signals[0];
		memmove(loop->pending_signals, loop->pending_signals + 1, (--loop->pending_count) * sizeof(int));
		HashTable *set = zend_hash_index_find_ptr(&loop->signals, (zend_ulong) signo);
		if (set == NULL) {
			continue;
		}
		uint32_t n = zend_hash_num_elements(set), i = 0;
		weft_watcher **snapshot = safe_emalloc(n, sizeof(*snapshot), 0);
		weft_watcher *w;
		ZEND_HASH_FOREACH_PTR(set, w) {
			w->refcount++;
			snapshot[i++] = w;
		} ZEND_HASH_FOREACH_END();
		zval arg;
		ZVAL_LONG(&arg, signo);
		for (i = 0; i < n; i++) {
			if (snapshot[i]->enabled) {
				weft_loop_invoke(loop, snapshot[i], &arg);
			}
			weft_watcher_release(snapshot[i]);
		}
		efree(snapshot);
	}
}

static void weft_loop_signals(weft_loop *loop)
{
	/* A signal that arrived while PHP code ran is only queued by pcntl: run its watchers now. */
	if (weft_loop_call_function("pcntl_signal_dispatch", sizeof("pcntl_signal_dispatch") - 1, 0, NULL) != SUCCESS) {
		weft_loop_handle_error(loop);
	}
	weft_loop_dispatch_signals(loop);
}

/* ---- activation -------------------------------------------------------------------------------- */

static zend_result weft_loop_activate(weft_loop *loop, weft_watcher *w)
{
	switch (w->type) {
		case W_READ:
		case W_WRITE:
			if (weft_stream_activate(loop, w) != SUCCESS) {
				return FAILURE;
			}
			break;
		case W_DELAY:
		case W_REPEAT:
			weft_timer_insert(loop, w, weft_loop_hrtime());
			break;
		case W_SIGNAL:
			if (weft_signal_activate(loop, w) != SUCCESS) {
				return FAILURE;
			}
			break;
		case W_DEFER:
			if (zend_hash_index_add_ptr(&loop->defers, w->id, w) != NULL) {
				w->refcount++;
			}
			return SUCCESS;
	}
	if (w->referenced) {
		loop->referenced++;
	}
	return SUCCESS;
}

static void weft_loop_deactivate(weft_loop *loop, weft_watcher *w)
{
	switch (w->type) {
		case W_READ:
		case W_WRITE:
			weft_stream_deactivate(loop, w);
			break;
		case W_DELAY:
		case W_REPEAT:
			weft_timer_remove(loop, w);
			break;
		case W_SIGNAL:
			weft_signal_deactivate(loop, w);
			break;
		case W_DEFER: {
			zval *queued = zend_hash_index_find(&loop->defers, w->id);
			if (queued != NULL) {
				zend_hash_index_del(&loop->defers, w->id);
				weft_watcher_release(w);
			}
			return;
		}
	}
	if (w->referenced) {
		loop->referenced--;
	}
}

/* Adds a new watcher: its id, or NULL with an exception (it is then gone). */
static weft_watcher *weft_loop_add(weft_loop *loop, weft_watcher *w)
{
	zend_hash_index_add_new_ptr(&loop->watchers, w->id, w);
	if (weft_loop_activate(loop, w) != SUCCESS) {
		w->enabled = false;
		w->alive = false;
		zend_hash_index_del(&loop->watchers, w->id);
		weft_watcher_release(w);
		return NULL;
	}
	return w;
}

/* Takes a watcher out of the table (cancel, a delay that fired, a deferred call that runs). */
static void weft_loop_forget(weft_loop *loop, weft_watcher *w)
{
	w->alive = false;
	zend_hash_index_del(&loop->watchers, w->id);
	weft_watcher_release(w);
}

static void weft_loop_cancel_watcher(weft_loop *loop, weft_watcher *w)
{
	w->refcount++;
	if (w->enabled) {
		w->enabled = false;
		weft_loop_deactivate(loop, w);
	}
	weft_loop_forget(loop, w);
	if (w->type == W_READ || w->type == W_WRITE) {
		/* Applied at once: the stream is often closed right after, and a descriptor closed while
		 * registered stays in the kernel's set if its open file lives on in another process. */
		weft_io *io = zend_hash_index_find_ptr(&loop->ios, (zend_ulong) w->key);
		if (io != NULL && io->dirty) {
			(void) weft_io_apply(loop, io);
		}
	}
	weft_watcher_release(w);
}

/* ---- dispatch ---------------------------------------------------------------------------------- */

static void weft_loop_invoke_stream(weft_loop *loop, weft_watcher *w)
{
	if (w->enabled) {
		weft_loop_invoke(loop, w, &w->stream);
	}
}

/* Invokes a snapshot of a watcher set: one disabled meanwhile is skipped, one added meanwhile is not run. */
static void weft_loop_invoke_set(weft_loop *loop, HashTable *set)
{
	weft_watcher *stack[8], **snapshot = stack, *w;
	uint32_t n = zend_hash_num_elements(set), i = 0;
	if (n > 8) {
		snapshot = safe_emalloc(n, sizeof(*snapshot), 0);
	}
	ZEND_HASH_FOREACH_PTR(set, w) {
		w->refcount++;
		snapshot[i++] = w;
	} ZEND_HASH_FOREACH_END();
	for (i = 0; i < n; i++) {
		weft_loop_invoke_stream(loop, snapshot[i]);
		weft_watcher_release(snapshot[i]);
	}
	if (snapshot != stack) {
		efree(snapshot);
	}
}

/* A stream closed while watched: its watchers can never fire; wake them once so their owners see EOF. */
static void weft_loop_drop_closed(weft_loop *loop, weft_io *io)
{
	uint32_t n = zend_hash_num_elements(&io->readers) + zend_hash_num_elements(&io->writers), i = 0;
	weft_watcher **snapshot = safe_emalloc(n, sizeof(*snapshot), 0), *w;
	ZEND_HASH_FOREACH_PTR(&io->readers, w) {
		w->refcount++;
		snapshot[i++] = w;
	} ZEND_HASH_FOREACH_END();
	ZEND_HASH_FOREACH_PTR(&io->writers, w) {
		w->refcount++;
		snapshot[i++] = w;
	} ZEND_HASH_FOREACH_END();
	zend_long key = io->key;
	weft_io_set_in_set(loop, io, false);
	weft_io_set_always_ready(loop, io, false);
	io->dirty = false;
	for (i = 0; i < n; i++) {
		weft_loop_invoke_stream(loop, snapshot[i]);
		if (snapshot[i]->alive) {
			weft_loop_cancel_watcher(loop, snapshot[i]);
		}
		weft_watcher_release(snapshot[i]);
	}
	efree(snapshot);
	io = zend_hash_index_find_ptr(&loop->ios, (zend_ulong) key);
	if (io != NULL) {
		weft_io_maybe_free(loop, io);
	}
}

static void weft_result_or_bits(HashTable *result, zend_long key, zend_long bits)
{
	zval *seen = zend_hash_index_find(result, (zend_ulong) key);
	if (seen != NULL) {
		ZVAL_LONG(seen, bits);
	} else {
		zval value;
		ZVAL_LONG(&value, bits);
		zend_hash_index_add_new(result, (zend_ulong) key, &value);
	}
}

/* Waits for stream events for at most timeout seconds (< 0: no limit) and invokes the ready watchers. */
static zend_result weft_loop_dispatch(weft_loop *loop, double timeout)
{
	if (weft_loop_apply_dirty(loop) != SUCCESS) {
		return FAILURE;
	}
	if (loop->always_ready > 0) {
		timeout = 0.0;
	}
	HashTable *events = Z_ARRVAL(loop->events);
	zend_hash_clean(events);
	if (weft_epoll_wait(loop->epoll, timeout, WEFT_LOOP_MAX_EVENTS, &loop->events) != SUCCESS) {
		return FAILURE;
	}
	if (loop->always_ready > 0) {
		weft_io *io;
		ZEND_HASH_FOREACH_PTR(&loop->ios, io) {
			if (io->always_ready) {
				weft_result_or_bits(events, io->key, weft_io_stream_open(io) ? (zend_long) io->registered : (zend_long) WEFT_EPOLL_CLOSED_BIT);
			}
		} ZEND_HASH_FOREACH_END();
	}
	loop->undispatched = zend_hash_num_elements(events);
	if (loop->undispatched == 0) {
		return SUCCESS;
	}
	/* Callbacks cannot reach this array (no wait happens before this loop ends), but keep it safe. */
	GC_ADDREF(events);
	zend_ulong key;
	zval *flags_zv;
	ZEND_HASH_FOREACH_NUM_KEY_VAL(events, key, flags_zv) {
		loop->undispatched--;
		zend_long flags = Z_LVAL_P(flags_zv);
		weft_io *io = zend_hash_index_find_ptr(&loop->ios, key);
		if (io == NULL) {
			continue;
		}
		if (flags & (EPOLLERR | EPOLLHUP | WEFT_EPOLL_CLOSED_BIT)) {
			if (flags & WEFT_EPOLL_CLOSED_BIT) {
				weft_loop_drop_closed(loop, io);
				continue;
			}
			/* Errors and hang-ups end both directions: wake every watcher so its owner sees them. */
			flags |= EPOLLIN | EPOLLOUT;
		}
		if ((flags & EPOLLIN) && zend_hash_num_elements(&io->readers) > 0) {
			weft_loop_invoke_set(loop, &io->readers);
			io = zend_hash_index_find_ptr(&loop->ios, key);
		}
		if (io != NULL && (flags & EPOLLOUT) && zend_hash_num_elements(&io->writers) > 0) {
			weft_loop_invoke_set(loop, &io->writers);
		}
	} ZEND_HASH_FOREACH_END();
	GC_DELREF(events);
	loop->undispatched = 0;
	return SUCCESS;
}

static void weft_loop_sleep(double seconds)
{
	struct timespec ts;
	ts.tv_sec = (time_t) seconds;
	ts.tv_nsec = (long) ((seconds - (double) ts.tv_sec) * 1e9);
	(void) nanosleep(&ts, NULL); /* a signal ends it early: the tick then dispatches it */
}

static void weft_loop_run_defers(weft_loop *loop)
{
	HashTable queue = loop->defers;
	zend_hash_init(&loop->defers, 8, NULL, NULL, 0);
	loop->defer_left = zend_hash_num_elements(&queue);
	zend_ulong id;
	weft_watcher *w;
	ZEND_HASH_FOREACH_NUM_KEY_PTR(&queue, id, w) {
		zend_hash_index_del(&queue, id); /* our reference moves to this frame */
		loop->defer_left--;
		/* Disabled after being queued: it waits for enable(). Cancelled: it is gone. */
		if (w->enabled && w->alive) {
			w->refcount++;
			weft_loop_forget(loop, w);
			weft_loop_invoke(loop, w, NULL);
			weft_watcher_release(w);
		}
		weft_watcher_release(w);
		if (loop->stopped) {
			/* Stopped: what is left of this tick's queue runs first in the next run(). */
			weft_watcher *later;
			ZEND_HASH_FOREACH_NUM_KEY_PTR(&loop->defers, id, later) {
				if (zend_hash_index_add_ptr(&queue, id, later) == NULL) {
					weft_watcher_release(later);
				}
			} ZEND_HASH_FOREACH_END();
			zend_hash_destroy(&loop->defers);
			loop->defers = queue;
			loop->defer_left = 0;
			return;
		}
	} ZEND_HASH_FOREACH_END();
	zend_hash_destroy(&queue);
	loop->defer_left = 0;
}

static zend_result weft_loop_tick(weft_loop *loop)
{
	if (zend_hash_num_elements(&loop->defers) > 0) {
		weft_loop_run_defers(loop);
		if (loop->stopped) {
			return SUCCESS;
		}
	}
	if (zend_hash_num_elements(&loop->signals) > 0) {
		weft_loop_signals(loop);
	}

	uint64_t now = weft_loop_hrtime();
	loop->now_ns = now;
	double timeout = -1.0;
	if (zend_hash_num_elements(&loop->defers) > 0 || loop->stopped) {
		timeout = 0.0;
	} else if (loop->referenced <= 0) {
		return SUCCESS; /* only unreferenced watchers are left: nothing may keep run() waiting */
	} else if (loop->heap_count > 0) {
		/* Timer slack: wait until the whole millisecond of the earliest timer, so every timer due
		 * within it runs in this one tick (see weft_timer_insert). */
		uint64_t due_ns = loop->heap[0]->due_ms * 1000000u;
		timeout = due_ns <= now ? 0.0 : (double) ((due_ns - now + 999999u) / 1000000u) / 1000.0;
	}

	if (loop->ios_in_set > 0 || loop->dirty_count > 0) {
		if (weft_loop_dispatch(loop, timeout) != SUCCESS) {
			return FAILURE;
		}
	} else if (timeout < 0) {
		weft_loop_sleep(1.0); /* only signal watchers: until a signal interrupts the sleep */
	} else if (timeout > 0) {
		weft_loop_sleep(timeout);
	}

	now = weft_loop_hrtime();
	loop->now_ns = now;
	uint64_t fence = loop->timer_seq; /* timers set from here on fire in a later tick */
	while (loop->heap_count > 0 && !loop->bailing) {
		weft_watcher *w = loop->heap[0];
		if (w->due_ms * 1000000u > now || w->seq >= fence) {
			break;
		}
		weft_timer_remove(loop, w);
		w->refcount++;
		if (w->type == W_REPEAT) {
			weft_timer_insert(loop, w, now);
		} else {
			w->enabled = false;
			if (w->referenced) {
				loop->referenced--;
			}
			weft_loop_forget(loop, w);
		}
		weft_loop_invoke(loop, w, NULL);
		weft_watcher_release(w);
	}

	if (zend_hash_num_elements(&loop->signals) > 0 && !loop->bailing) {
		weft_loop_signals(loop);
	}
	return SUCCESS;
}

/* ---- the PHP class ----------------------------------------------------------------------------- */

static zend_object *weft_loop_create(zend_class_entry *ce)
{
	weft_loop *loop = zend_object_alloc(sizeof(weft_loop), ce);
	zend_object_std_init(&loop->std, ce);
	object_properties_init(&loop->std, ce);
	loop->epoll = NULL;
	zend_hash_init(&loop->watchers, 16, NULL, NULL, 0);
	zend_hash_init(&loop->ios, 16, NULL, weft_io_dtor, 0);
	zend_hash_init(&loop->defers, 8, NULL, NULL, 0);
	zend_hash_init(&loop->signals, 2, NULL, weft_signal_set_dtor, 0);
	loop->ios_in_set = 0;
	loop->always_ready = 0;
	loop->dirty = NULL;
	loop->dirty_count = loop->dirty_size = 0;
	loop->defer_left = 0;
	loop->heap = NULL;
	loop->heap_count = loop->heap_size = 0;
	loop->timer_seq = 0;
	loop->pending_signals = NULL;
	loop->pending_count = loop->pending_size = 0;
	loop->next_id = 0;
	loop->referenced = 0;
	loop->undispatched = 0;
	loop->idle_skip = loop->idle_backoff = 0;
	loop->running = loop->stopped = loop->bailing = false;
	loop->now_ns = weft_loop_hrtime();
	ZVAL_NULL(&loop->error_handler);
	loop->pending_error = NULL;
	array_init(&loop->events);
	loop->std.handlers = &weft_loop_handlers;
	return &loop->std;
}

static void weft_loop_free(zend_object *object)
{
	weft_loop *loop = weft_loop_from_obj(object);
	for (int i = 0; i < WEFT_LOOP_NSIG; i++) {
		if (weft_signal_owner[i] == loop) {
			weft_signal_owner[i] = NULL; /* its pcntl handler stays and drops what arrives */
		}
	}
	weft_watcher *w;
	ZEND_HASH_FOREACH_PTR(&loop->defers, w) {
		weft_watcher_release(w);
	} ZEND_HASH_FOREACH_END();
	zend_hash_destroy(&loop->defers);
	zend_hash_destroy(&loop->ios);
	zend_hash_destroy(&loop->signals);
	ZEND_HASH_FOREACH_PTR(&loop->watchers, w) {
		w->alive = false;
		weft_watcher_release(w);
	} ZEND_HASH_FOREACH_END();
	zend_hash_destroy(&loop->watchers);
	if (loop->heap != NULL) {
		efree(loop->heap);
	}
	if (loop->dirty != NULL) {
		efree(loop->dirty);
	}
	if (loop->pending_signals != NULL) {
		efree(loop->pending_signals);
	}
	if (loop->epoll != NULL) {
		/* In a forked child this closes only the child's copy of the descriptor. */
		OBJ_RELEASE(loop->epoll);
	}
	zval_ptr_dtor(&loop->error_handler);
	if (loop->pending_error != NULL) {
		OBJ_RELEASE(loop->pending_error);
	}
	zval_ptr_dtor(&loop->events);
	zend_object_std_dtor(&loop->std);
}

static HashTable *weft_loop_get_gc(zend_object *object, zval **table, int *n)
{
	weft_loop *loop = weft_loop_from_obj(object);
	zend_get_gc_buffer *buffer = zend_get_gc_buffer_create();
	weft_watcher *w;
	ZEND_HASH_FOREACH_PTR(&loop->watchers, w) {
		zend_get_gc_buffer_add_zval(buffer, &w->callback);
	} ZEND_HASH_FOREACH_END();
	zend_get_gc_buffer_add_zval(buffer, &loop->error_handler);
	if (loop->pending_error != NULL) {
		zend_get_gc_buffer_add_obj(buffer, loop->pending_error);
	}
	zend_get_gc_buffer_use(buffer, table, n);
	return zend_std_get_properties(object);
}

static weft_loop *weft_loop_this(zval *this_zv)
{
	weft_loop *loop = weft_loop_from_obj(Z_OBJ_P(this_zv));
	if (UNEXPECTED(loop->epoll == NULL)) {
		zend_throw_error(NULL, "Weft\\Ext\\Loop is not initialized (its constructor was not called)");
		return NULL;
	}
	return loop;
}

#define WEFT_LOOP_THIS() \
	weft_loop *loop = weft_loop_this(ZEND_THIS); \
	if (loop == NULL) { \
		RETURN_THROWS(); \
	}

PHP_METHOD(Weft_Ext_Loop, __construct)
{
	ZEND_PARSE_PARAMETERS_NONE();
	weft_loop *loop = weft_loop_from_obj(Z_OBJ_P(ZEND_THIS));
	if (loop->epoll != NULL) {
		zend_throw_error(NULL, "Weft\\Ext\\Loop::__construct() cannot be called twice");
		RETURN_THROWS();
	}
	loop->epoll = weft_epoll_new();
	if (loop->epoll == NULL) {
		RETURN_THROWS();
	}
}

static void weft_loop_add_stream(INTERNAL_FUNCTION_PARAMETERS, uint8_t type)
{
	zval *stream, *callback;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_ZVAL(stream)
		Z_PARAM_OBJECT_OF_CLASS(callback, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_LOOP_THIS();
	if (Z_TYPE_P(stream) != IS_RESOURCE || Z_RES_P(stream)->type < 0) {
		zend_type_error("Expected an open stream resource");
		RETURN_THROWS();
	}
	weft_watcher *w = weft_watcher_new(loop, type, callback);
	w->key = (zend_long) Z_RES_HANDLE_P(stream);
	ZVAL_COPY(&w->stream, stream);
	if (weft_loop_add(loop, w) == NULL) {
		RETURN_THROWS();
	}
	RETURN_STR_COPY(w->sid);
}

static void weft_loop_add_descriptor(INTERNAL_FUNCTION_PARAMETERS, uint8_t type)
{
	zend_long fd;
	zval *callback;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(fd)
		Z_PARAM_OBJECT_OF_CLASS(callback, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_LOOP_THIS();
	if (fd < 0 || fd > INT_MAX) {
		zend_value_error("A descriptor number must be >= 0");
		RETURN_THROWS();
	}
	weft_watcher *w = weft_watcher_new(loop, type, callback);
	w->key = -1 - fd;
	ZVAL_LONG(&w->stream, fd);
	if (weft_loop_add(loop, w) == NULL) {
		RETURN_THROWS();
	}
	RETURN_STR_COPY(w->sid);
}

PHP_METHOD(Weft_Ext_Loop, onReadable) { weft_loop_add_stream(INTERNAL_FUNCTION_PARAM_PASSTHRU, W_READ); }
PHP_METHOD(Weft_Ext_Loop, onWritable) { weft_loop_add_stream(INTERNAL_FUNCTION_PARAM_PASSTHRU, W_WRITE); }
PHP_METHOD(Weft_Ext_Loop, onReadableFd) { weft_loop_add_descriptor(INTERNAL_FUNCTION_PARAM_PASSTHRU, W_READ); }
PHP_METHOD(Weft_Ext_Loop, onWritableFd) { weft_loop_add_descriptor(INTERNAL_FUNCTION_PARAM_PASSTHRU, W_WRITE); }

static uint64_t weft_seconds_to_ns(double seconds)
{
	if (!(seconds > 0)) {
		return 0; /* negative and NAN: at once */
	}
	if (seconds > 1e9) {
		seconds = 1e9;
	}
	return (uint64_t) (seconds * 1e9);
}

static void weft_loop_add_timer_method(INTERNAL_FUNCTION_PARAMETERS, uint8_t type)
{
	double seconds;
	zval *callback;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_DOUBLE(seconds)
		Z_PARAM_OBJECT_OF_CLASS(callback, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_LOOP_THIS();
	weft_watcher *w = weft_watcher_new(loop, type, callback);
	w->interval_ns = weft_seconds_to_ns(seconds);
	weft_loop_add(loop, w);
	RETURN_STR_COPY(w->sid);
}

PHP_METHOD(Weft_Ext_Loop, delay) { weft_loop_add_timer_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, W_DELAY); }
PHP_METHOD(Weft_Ext_Loop, repeat) { weft_loop_add_timer_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, W_REPEAT); }

PHP_METHOD(Weft_Ext_Loop, onSignal)
{
	zend_long signo;
	zval *callback;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(signo)
		Z_PARAM_OBJECT_OF_CLASS(callback, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_LOOP_THIS();
	if (zend_hash_str_find_ptr(EG(function_table), "pcntl_signal", sizeof("pcntl_signal") - 1) == NULL) {
		zend_throw_error(NULL, "Signal watchers need the pcntl extension");
		RETURN_THROWS();
	}
	if (signo < 1 || signo >= WEFT_LOOP_NSIG) {
		zend_argument_value_error(1, "must be a signal number between 1 and %d", WEFT_LOOP_NSIG - 1);
		RETURN_THROWS();
	}
	weft_watcher *w = weft_watcher_new(loop, W_SIGNAL, callback);
	w->signo = (int) signo;
	if (weft_loop_add(loop, w) == NULL) {
		RETURN_THROWS();
	}
	RETURN_STR_COPY(w->sid);
}

/* The pcntl handler of every signal a loop watches (a fake closure of this private static method). */
PHP_METHOD(Weft_Ext_Loop, signalled)
{
	zend_long signo;
	zval *info = NULL;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_LONG(signo)
		Z_PARAM_OPTIONAL
		Z_PARAM_ZVAL(info)
	ZEND_PARSE_PARAMETERS_END();
	if (signo < 1 || signo >= WEFT_LOOP_NSIG || weft_signal_owner[signo] == NULL) {
		return;
	}
	weft_loop *loop = weft_signal_owner[signo];
	if (loop->pending_count == loop->pending_size) {
		loop->pending_size = loop->pending_size == 0 ? 8 : loop->pending_size * 2;
		loop->pending_signals = safe_erealloc(loop->pending_signals, loop->pending_size, sizeof(int), 0);
	}
	loop->pending_signals[loop->pending_count++] = (int) signo;
}

PHP_METHOD(Weft_Ext_Loop, defer)
{
	zval *callback;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_OBJECT_OF_CLASS(callback, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_LOOP_THIS();
	weft_watcher *w = weft_watcher_new(loop, W_DEFER, callback);
	weft_loop_add(loop, w);
	RETURN_STR_COPY(w->sid);
}

static weft_watcher *weft_loop_method_watcher(INTERNAL_FUNCTION_PARAMETERS, weft_loop **loop_out, bool must_exist)
{
	zend_string *sid;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(sid)
	ZEND_PARSE_PARAMETERS_END_EX(return NULL);
	weft_loop *loop = weft_loop_this(ZEND_THIS);
	if (loop == NULL) {
		return NULL;
	}
	*loop_out = loop;
	weft_watcher *w = weft_loop_find(loop, sid);
	if (w == NULL && must_exist) {
		weft_loop_throw_unknown(sid);
	}
	return w;
}

static bool weft_loop_enable_watcher(weft_loop *loop, weft_watcher *w)
{
	if (w->enabled) {
		return true;
	}
	w->enabled = true;
	if (weft_loop_activate(loop, w) != SUCCESS) {
		/* A stream epoll refuses (what the first registration would have said): the watcher is gone. */
		w->enabled = false;
		weft_loop_forget(loop, w);
		return false;
	}
	return true;
}

static void weft_loop_disable_watcher(weft_loop *loop, weft_watcher *w)
{
	if (!w->enabled) {
		return;
	}
	w->enabled = false;
	weft_loop_deactivate(loop, w);
}

static void weft_loop_reference_watcher(weft_loop *loop, weft_watcher *w, bool referenced)
{
	if (w->referenced == referenced) {
		return;
	}
	w->referenced = referenced;
	if (w->enabled && w->type != W_DEFER) {
		loop->referenced += referenced ? 1 : -1;
	}
}

PHP_METHOD(Weft_Ext_Loop, enable)
{
	weft_loop *loop = NULL;
	weft_watcher *w = weft_loop_method_watcher(INTERNAL_FUNCTION_PARAM_PASSTHRU, &loop, true);
	if (w == NULL || !weft_loop_enable_watcher(loop, w)) {
		RETURN_THROWS();
	}
}

PHP_METHOD(Weft_Ext_Loop, disable)
{
	weft_loop *loop = NULL;
	weft_watcher *w = weft_loop_method_watcher(INTERNAL_FUNCTION_PARAM_PASSTHRU, &loop, true);
	if (w == NULL) {
		RETURN_THROWS();
	}
	weft_loop_disable_watcher(loop, w);
	if (EG(exception) != NULL) {
		RETURN_THROWS();
	}
}

PHP_METHOD(Weft_Ext_Loop, cancel)
{
	weft_loop *loop = NULL;
	weft_watcher *w = weft_loop_method_watcher(INTERNAL_FUNCTION_PARAM_PASSTHRU, &loop, false);
	if (w != NULL) {
		weft_loop_cancel_watcher(loop, w);
	}
	if (EG(exception) != NULL) {
		RETURN_THROWS();
	}
}

PHP_METHOD(Weft_Ext_Loop, reference)
{
	weft_loop *loop = NULL;
	weft_watcher *w = weft_loop_method_watcher(INTERNAL_FUNCTION_PARAM_PASSTHRU, &loop, true);
	if (w == NULL) {
		RETURN_THROWS();
	}
	weft_loop_reference_watcher(loop, w, true);
}

PHP_METHOD(Weft_Ext_Loop, unreference)
{
	weft_loop *loop = NULL;
	weft_watcher *w = weft_loop_method_watcher(INTERNAL_FUNCTION_PARAM_PASSTHRU, &loop, true);
	if (w == NULL) {
		RETURN_THROWS();
	}
	weft_loop_reference_watcher(loop, w, false);
}

PHP_METHOD(Weft_Ext_Loop, run)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	if (loop->running) {
		zend_throw_error(NULL, "The event loop is already running");
		RETURN_THROWS();
	}
	loop->running = true;
	loop->stopped = false;
	loop->bailing = false;
	GC_ADDREF(&loop->std); /* a callback may drop the last other reference to this loop */
	while (!loop->stopped) {
		if (weft_loop_tick(loop) != SUCCESS) {
			break;
		}
		if (loop->bailing) {
			break;
		}
		if (loop->pending_error != NULL) {
			zend_object *error = loop->pending_error;
			loop->pending_error = NULL;
			zend_throw_exception_internal(error);
			break;
		}
		if (zend_hash_num_elements(&loop->defers) == 0 && loop->referenced <= 0) {
			break;
		}
	}
	if (loop->pending_error != NULL && EG(exception) == NULL) {
		/* stopped after the error: run() still rethrows it */
		zend_object *error = loop->pending_error;
		loop->pending_error = NULL;
		zend_throw_exception_internal(error);
	}
	loop->running = false;
	loop->bailing = false;
	OBJ_RELEASE(&loop->std);
}

PHP_METHOD(Weft_Ext_Loop, stop)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	loop->stopped = true;
}

PHP_METHOD(Weft_Ext_Loop, isRunning)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	RETURN_BOOL(loop->running);
}

/*
 * Whether the loop owes callbacks before it may wait again: events of the running dispatch not handed
 * out yet, deferred callbacks, signals caught and not dispatched, an always-ready stream. Unlike
 * weft_loop_owes_work() it changes nothing (pending interest changes stay pending).
 */
PHP_METHOD(Weft_Ext_Loop, owesWork)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	RETURN_BOOL(zend_hash_num_elements(&loop->defers) > 0 || loop->defer_left > 0 || loop->pending_count > 0
		|| loop->undispatched > 0 || loop->always_ready > 0);
}

PHP_METHOD(Weft_Ext_Loop, now)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	RETURN_DOUBLE((double) loop->now_ns / 1e9);
}

PHP_METHOD(Weft_Ext_Loop, setErrorHandler)
{
	zval *handler = NULL;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_OBJECT_OF_CLASS_OR_NULL(handler, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_LOOP_THIS();
	zval old;
	ZVAL_COPY_VALUE(&old, &loop->error_handler);
	if (handler != NULL) {
		ZVAL_COPY(&loop->error_handler, handler);
	} else {
		ZVAL_NULL(&loop->error_handler);
	}
	zval_ptr_dtor(&old);
}

PHP_METHOD(Weft_Ext_Loop, canWatch)
{
	zval *stream;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ZVAL(stream)
	ZEND_PARSE_PARAMETERS_END();
	RETURN_BOOL(weft_epoll_descriptor_of(stream) >= 0);
}

PHP_METHOD(Weft_Ext_Loop, name)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_STRINGL("epoll", 5);
}

PHP_METHOD(Weft_Ext_Loop, watcherCount)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	zend_long enabled = 0;
	weft_watcher *w;
	ZEND_HASH_FOREACH_PTR(&loop->watchers, w) {
		enabled += w->enabled ? 1 : 0;
	} ZEND_HASH_FOREACH_END();
	array_init_size(return_value, 3);
	add_assoc_long(return_value, "enabled", enabled);
	add_assoc_long(return_value, "referenced", loop->referenced);
	add_assoc_long(return_value, "total", (zend_long) zend_hash_num_elements(&loop->watchers));
}

/* Whether the loop owes work before it may wait again; applies pending interest changes first, so that a
 * poll of the epoll descriptor sees what the loop's wait would. */
static bool weft_loop_owes_work(weft_loop *loop)
{
	if (zend_hash_num_elements(&loop->defers) > 0 || loop->defer_left > 0 || loop->stopped || loop->pending_count > 0) {
		return true;
	}
	if (loop->dirty_count > 0) {
		zend_object *pending = EG(exception);
		if (weft_loop_apply_dirty(loop) != SUCCESS && pending == NULL && EG(exception) != NULL) {
			zend_clear_exception(); /* the loop's next wait meets the same failure and reports it */
			return true;
		}
	}
	return loop->undispatched > 0 || loop->always_ready > 0;
}

/* Seconds until the earliest timer (< 0: none; 0: one is due). */
static double weft_loop_next_timer(weft_loop *loop)
{
	if (loop->heap_count == 0) {
		return -1.0;
	}
	double left = (double) loop->heap[0]->due_ms / 1000.0 - (double) weft_loop_hrtime() / 1e9;
	return left > 0 ? left : 0.0;
}

/* See AbstractDriver::idleFor(): null when the loop has work to do first, else seconds to its next timer. */
PHP_METHOD(Weft_Ext_Loop, idleFor)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	if (weft_loop_owes_work(loop)) {
		RETURN_NULL();
	}
	double next = weft_loop_next_timer(loop);
	if (next == 0.0) {
		RETURN_NULL();
	}
	RETURN_DOUBLE(next);
}

/* The epoll object the loop waits on (Hooks::idleLoop() polls its descriptor). @internal */
PHP_METHOD(Weft_Ext_Loop, epoll)
{
	ZEND_PARSE_PARAMETERS_NONE();
	WEFT_LOOP_THIS();
	RETURN_OBJ_COPY(loop->epoll);
}

/* ---- the C API (weft_loop.h) ------------------------------------------------------------------- */

weft_loop *weft_loop_from_object(zend_object *object)
{
	if (object == NULL || !instanceof_function(object->ce, weft_ce_loop)) {
		return NULL;
	}
	weft_loop *loop = weft_loop_from_obj(object);
	return loop->epoll != NULL ? loop : NULL;
}

zend_object *weft_loop_object(weft_loop *loop)
{
	return &loop->std;
}

static weft_watcher *weft_loop_c_watcher(weft_loop *loop, uint8_t type, void *handler, void *data, weft_loop_release release)
{
	weft_watcher *w = weft_watcher_new(loop, type, NULL);
	w->handler = handler;
	w->data = data;
	w->release = release;
	return w;
}

zend_ulong weft_loop_add_fd(weft_loop *loop, int fd, uint32_t direction, weft_loop_fd_handler handler, void *data, weft_loop_release release)
{
	weft_watcher *w = weft_loop_c_watcher(loop, direction == WEFT_LOOP_WRITE ? W_WRITE : W_READ, (void *) handler, data, release);
	w->key = -1 - (zend_long) fd;
	ZVAL_LONG(&w->stream, fd);
	/* ids start at 0 for PHP's sake ("w0"): the C API hands out id + 1 so that 0 can mean "failed" */
	w = weft_loop_add(loop, w);
	return w == NULL ? 0 : w->id + 1;
}

zend_ulong weft_loop_add_timer(weft_loop *loop, double seconds, bool repeat, weft_loop_handler handler, void *data, weft_loop_release release)
{
	weft_watcher *w = weft_loop_c_watcher(loop, repeat ? W_REPEAT : W_DELAY, (void *) handler, data, release);
	w->interval_ns = weft_seconds_to_ns(seconds);
	weft_loop_add(loop, w);
	return w->id + 1;
}

uint64_t weft_loop_now_ns(const weft_loop *loop)
{
	return loop->now_ns;
}

zend_ulong weft_loop_add_defer(weft_loop *loop, weft_loop_handler handler, void *data, weft_loop_release release)
{
	weft_watcher *w = weft_loop_c_watcher(loop, W_DEFER, (void *) handler, data, release);
	weft_loop_add(loop, w);
	return w->id + 1;
}

static weft_watcher *weft_loop_c_find(weft_loop *loop, zend_ulong id)
{
	return id == 0 ? NULL : zend_hash_index_find_ptr(&loop->watchers, id - 1);
}

bool weft_loop_enable(weft_loop *loop, zend_ulong id)
{
	weft_watcher *w = weft_loop_c_find(loop, id);
	return w != NULL && weft_loop_enable_watcher(loop, w);
}

bool weft_loop_disable(weft_loop *loop, zend_ulong id)
{
	weft_watcher *w = weft_loop_c_find(loop, id);
	if (w != NULL) {
		weft_loop_disable_watcher(loop, w);
	}
	return w != NULL;
}

bool weft_loop_reference(weft_loop *loop, zend_ulong id, bool referenced)
{
	weft_watcher *w = weft_loop_c_find(loop, id);
	if (w != NULL) {
		weft_loop_reference_watcher(loop, w, referenced);
	}
	return w != NULL;
}

void weft_loop_cancel(weft_loop *loop, zend_ulong id)
{
	weft_watcher *w = weft_loop_c_find(loop, id);
	if (w != NULL) {
		weft_loop_cancel_watcher(loop, w);
	}
}

void weft_loop_stop(weft_loop *loop)
{
	loop->stopped = true;
}

bool weft_loop_idle(weft_loop *loop, int *epfd, double *budget)
{
	if (!loop->running || weft_loop_owes_work(loop) || weft_epoll_inherited(loop->epoll)) {
		return false;
	}
	double next = weft_loop_next_timer(loop);
	if (next == 0.0) {
		return false;
	}
	bool empty = false;
	*budget = next;
	int fd = weft_epoll_idle_fd(loop->epoll, budget, &empty);
	if (fd < 0) {
		return false;
	}
	*epfd = empty ? -1 : fd;
	return true;
}

/*
 * Back-off for idle polls that the loop interrupts at once. Under load the loop's descriptor is nearly
 * always ready, and an idle poll then only costs a call into PHP and a ppoll() before the usual wait:
 * after such a miss the next `idle_skip` waits do not try (doubling up to WEFT_IDLE_SKIP_MAX while
 * misses go on); a poll that ends with the hook's own descriptor ready starts over at once.
 */
#define WEFT_IDLE_SKIP_MAX 64

bool weft_loop_idle_wanted(weft_loop *loop)
{
	if (loop->idle_skip > 0) {
		loop->idle_skip--;
		return false;
	}
	int epfd;
	double budget;
	return weft_loop_idle(loop, &epfd, &budget);
}

void weft_loop_idle_reset(weft_loop *loop)
{
	loop->idle_skip = loop->idle_backoff = 0;
}

static short weft_loop_poll_events(uint32_t events)
{
	return (short) (((events & WEFT_LOOP_READ) ? POLLIN : 0) | ((events & WEFT_LOOP_WRITE) ? POLLOUT : 0));
}

int weft_loop_idle_poll(weft_loop *loop, int fd, uint32_t events, double left)
{
	int epfd = -1;
	double budget = -1.0;
	if (!weft_loop_idle(loop, &epfd, &budget)) {
		return -1;
	}
	double span = budget;
	bool ends_with_timeout = false;
	if (left >= 0 && (span < 0 || left <= span)) {
		span = left;
		ends_with_timeout = true;
	}
	struct timespec ts, *tsp = NULL;
	if (span >= 0) {
		if (span > 86400.0) {
			span = 86400.0;
		}
		ts.tv_sec = (time_t) span;
		ts.tv_nsec = (long) ((span - (double) ts.tv_sec) * 1e9);
		if (ts.tv_nsec > 999999999L) {
			ts.tv_nsec = 999999999L;
		}
		tsp = &ts;
	}
	struct pollfd pfds[2] = {
		{.fd = fd, .events = weft_loop_poll_events(events), .revents = 0},
		{.fd = epfd, .events = POLLIN, .revents = 0},
	};
	/* With nothing registered the loop's descriptor can never turn ready: only signals and timers end
	 * its wait, and they end this one too (EINTR, the budget). */
	int r = ppoll(pfds, epfd < 0 ? 1 : 2, tsp, NULL);
	if (r > 0 && pfds[0].revents != 0) {
		loop->idle_backoff = 0;
		short revents = pfds[0].revents;
		uint32_t ready = 0;
		if (revents & (POLLIN | POLLPRI | POLLERR | POLLHUP | POLLNVAL)) {
			ready |= WEFT_LOOP_READ;
		}
		if (revents & (POLLOUT | POLLERR | POLLHUP)) {
			ready |= WEFT_LOOP_WRITE;
		}
		return (int) ready;
	}
	if (r == 0 && ends_with_timeout) {
		return 0;
	}
	if (r > 0) {
		/* The loop had work (its descriptor is ready): a miss. */
		loop->idle_backoff = loop->idle_backoff == 0 ? 1 : (loop->idle_backoff >= WEFT_IDLE_SKIP_MAX ? WEFT_IDLE_SKIP_MAX : loop->idle_backoff * 2);
		loop->idle_skip = loop->idle_backoff;
	}
	return -1;
}

/*
 * A test seam for the C API (weft_loop.h has no other user yet): registers, with C handlers, a read
 * watcher on fd, a deferred call, a delay and a repeat that each report to $report(string $what, int $n)
 * and show what a C watcher may do: the fd watcher cancels itself, the repeat cancels itself after its
 * second call. Each handler's data holds a reference to $report, dropped by its release function.
 */
typedef struct {
	zval report;
	const char *what;
	zend_long calls;
} weft_probe;

static void weft_probe_release(void *data)
{
	weft_probe *probe = data;
	zval_ptr_dtor(&probe->report);
	efree(probe);
}

static void weft_probe_report(weft_probe *probe, zend_long n)
{
	zval args[2], retval;
	ZVAL_STRING(&args[0], probe->what);
	ZVAL_LONG(&args[1], n);
	zend_fcall_info_cache fcc;
	(void) zend_is_callable_ex(&probe->report, NULL, 0, NULL, &fcc, NULL);
	zend_call_known_function(fcc.function_handler, fcc.object, fcc.called_scope, &retval, 2, args, NULL);
	zval_ptr_dtor(&retval);
	zval_ptr_dtor(&args[0]);
}

static void weft_probe_on_fd(weft_loop *loop, zend_ulong id, int fd, uint32_t events, void *data)
{
	weft_loop_cancel(loop, id); /* cancelling itself: data stays valid until this handler returns */
	weft_probe_report(data, (zend_long) events);
}

static void weft_probe_on_call(weft_loop *loop, zend_ulong id, void *data)
{
	weft_probe *probe = data;
	probe->calls++;
	if (strcmp(probe->what, "repeat") == 0 && probe->calls == 2) {
		weft_loop_cancel(loop, id);
	}
	weft_probe_report(probe, probe->calls);
}

static weft_probe *weft_probe_new(zval *report, const char *what)
{
	weft_probe *probe = emalloc(sizeof(*probe));
	ZVAL_COPY(&probe->report, report);
	probe->what = what;
	probe->calls = 0;
	return probe;
}

PHP_METHOD(Weft_Ext_Loop, probeNativeApi)
{
	zend_long fd;
	zval *report;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(fd)
		Z_PARAM_OBJECT_OF_CLASS(report, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	WEFT_LOOP_THIS();
	weft_probe *probe = weft_probe_new(report, "fd");
	zend_ulong fd_id = weft_loop_add_fd(loop, (int) fd, WEFT_LOOP_READ, weft_probe_on_fd, probe, weft_probe_release);
	if (fd_id == 0) {
		RETURN_THROWS(); /* the release function ran: the watcher is gone */
	}
	array_init(return_value);
	add_next_index_long(return_value, (zend_long) fd_id);
	add_next_index_long(return_value, (zend_long) weft_loop_add_defer(loop, weft_probe_on_call, weft_probe_new(report, "defer"), weft_probe_release));
	add_next_index_long(return_value, (zend_long) weft_loop_add_timer(loop, 0.002, false, weft_probe_on_call, weft_probe_new(report, "delay"), weft_probe_release));
	add_next_index_long(return_value, (zend_long) weft_loop_add_timer(loop, 0.001, true, weft_probe_on_call, weft_probe_new(report, "repeat"), weft_probe_release));
}

/* ---- registration ------------------------------------------------------------------------------ */

ZEND_BEGIN_ARG_INFO_EX(arginfo_weft_loop_construct, 0, 0, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_on_stream, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, stream, IS_MIXED, 0)
	ZEND_ARG_OBJ_INFO(0, callback, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_on_fd, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, fd, IS_LONG, 0)
	ZEND_ARG_OBJ_INFO(0, callback, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_delay, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_DOUBLE, 0)
	ZEND_ARG_OBJ_INFO(0, callback, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_repeat, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, interval, IS_DOUBLE, 0)
	ZEND_ARG_OBJ_INFO(0, callback, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_on_signal, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, signal, IS_LONG, 0)
	ZEND_ARG_OBJ_INFO(0, callback, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_signalled, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, signal, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, info, IS_MIXED, 0, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_defer, 0, 1, IS_STRING, 0)
	ZEND_ARG_OBJ_INFO(0, callback, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_id, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_void, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_bool, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_float, 0, 0, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_idle_for, 0, 0, IS_DOUBLE, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_set_error_handler, 0, 1, IS_VOID, 0)
	ZEND_ARG_OBJ_INFO(0, handler, Closure, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_can_watch, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, stream, IS_MIXED, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_string, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_array, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_weft_loop_probe, 0, 2, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, fd, IS_LONG, 0)
	ZEND_ARG_OBJ_INFO(0, report, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_weft_loop_epoll, 0, 0, Weft\\Ext\\Epoll, 0)
ZEND_END_ARG_INFO()

static const zend_function_entry weft_loop_methods[] = {
	ZEND_ME(Weft_Ext_Loop, __construct, arginfo_weft_loop_construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, onReadable, arginfo_weft_loop_on_stream, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, onWritable, arginfo_weft_loop_on_stream, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, onReadableFd, arginfo_weft_loop_on_fd, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, onWritableFd, arginfo_weft_loop_on_fd, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, delay, arginfo_weft_loop_delay, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, repeat, arginfo_weft_loop_repeat, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, onSignal, arginfo_weft_loop_on_signal, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, signalled, arginfo_weft_loop_signalled, ZEND_ACC_PRIVATE | ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Loop, defer, arginfo_weft_loop_defer, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, enable, arginfo_weft_loop_id, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, disable, arginfo_weft_loop_id, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, cancel, arginfo_weft_loop_id, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, reference, arginfo_weft_loop_id, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, unreference, arginfo_weft_loop_id, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, run, arginfo_weft_loop_void, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, stop, arginfo_weft_loop_void, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, isRunning, arginfo_weft_loop_bool, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, owesWork, arginfo_weft_loop_bool, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, now, arginfo_weft_loop_float, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, setErrorHandler, arginfo_weft_loop_set_error_handler, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, canWatch, arginfo_weft_loop_can_watch, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, name, arginfo_weft_loop_string, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, watcherCount, arginfo_weft_loop_array, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, idleFor, arginfo_weft_loop_idle_for, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, epoll, arginfo_weft_loop_epoll, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Loop, probeNativeApi, arginfo_weft_loop_probe, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};

zend_result weft_loop_minit(void)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "Loop", weft_loop_methods);
	weft_ce_loop = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_loop->ce_flags |= ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	weft_ce_loop->create_object = weft_loop_create;

	memcpy(&weft_loop_handlers, &std_object_handlers, sizeof(zend_object_handlers));
	weft_loop_handlers.offset = XtOffsetOf(weft_loop, std);
	weft_loop_handlers.free_obj = weft_loop_free;
	weft_loop_handlers.get_gc = weft_loop_get_gc;
	weft_loop_handlers.clone_obj = NULL;
	return SUCCESS;
}
