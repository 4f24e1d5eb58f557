/*
 * The core of the hooks: which kinds are on, whether a hook may suspend right now, and the wait that
 * suspends the current coroutine through the waiter Weft's PHP side installed (see weft_hooks.h).
 * Also Weft\Ext\Hooks, the PHP-visible switchboard (see weft.stub.php).
 *
 * The waiter is PHP code (Weft\Hook\FdWaiter): it registers the descriptor with the loop, suspends the
 * coroutine's Fiber and returns when the loop saw it ready, the timeout passed, or the coroutine was
 * cancelled (it throws). Each Fiber has its own C stack, so suspending from deep inside an internal
 * function (a stream op called by mysqlnd, say) is sound: the C frames below stay where they are until
 * the Fiber is resumed.
 *
 * Process-wide state: the CLI and the server are NTS builds; under ZTS the hooks stay unavailable.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "zend_fibers.h"
#include "php_weft.h"
#include "weft_hooks.h"
#include "weft_loop.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <time.h>

static uint32_t weft_hooks_kinds = 0;       /* enabled kinds */
static uint32_t weft_hooks_available = 0;   /* kinds this build can hook (modules add theirs at MINIT) */
static bool weft_waiter_installed = false;
/*
 * What Weft's PHP side hands the hooks once, at Hooks::install() (in its parameter order), so that no hook
 * looks a PHP class or method up by name or writes a PHP exception's message itself:
 *   wait(int $fd, int $events, float $timeout): int|bool|null   a descriptor's wait (FdWaiter::wait)
 *   waitMany(array $fds, float $timeout): ?array                several descriptors, or a sleep
 *   forget(int $fd): void                                       a kept descriptor is about to close
 *   inCoroutine(): bool                                         whether a Weft coroutine runs (exit hook)
 *   exited(Throwable $exit): void                               exit() is about to end one (exit hook)
 *   concurrentUse(string $hook, ?string $call, ?string $handle, ?string $holderCall): Throwable
 *                                                               the error for a second user of a
 *                                                               connection or curl handle
 */
enum {
	WEFT_CB_WAIT,
	WEFT_CB_WAIT_MANY,
	WEFT_CB_FORGET,
	WEFT_CB_IN_COROUTINE,
	WEFT_CB_EXITED,
	WEFT_CB_CONCURRENT_USE,
	WEFT_CB_COUNT
};
typedef struct {
	zval closure;
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
} weft_hook_callback;
static weft_hook_callback weft_callbacks[WEFT_CB_COUNT];
/* The loop for idle polls (Hooks::idleLoop(): a Weft\Ext\Loop), referenced; NULL: none. What may hold
 * the loop is decided next to it, in weft_loop.c (weft_loop_idle_wanted(), weft_loop_idle_poll()). */
static zend_object *weft_idle_loop = NULL;

static zend_class_entry *weft_ce_hooks;

void weft_hooks_declare_available(uint32_t kinds)
{
#ifndef ZTS
	weft_hooks_available |= kinds;
#else
	(void) kinds;
#endif
}

uint32_t weft_hooks_enabled_kinds(void)
{
	return weft_waiter_installed ? weft_hooks_kinds : 0;
}

/* Whether the waiter may be called to suspend the current Fiber now, whatever the kind. */
static bool weft_hook_can_switch(void)
{
	if (!weft_waiter_installed) {
		return false;
	}
	zend_fiber *fiber = EG(active_fiber);
	if (fiber == NULL || (fiber->flags & ZEND_FIBER_FLAG_DESTROYED)) {
		return false;
	}
	/* GC destructors and shutdown forbid switching; an exception in flight cannot cross a call into PHP. */
	if (zend_fiber_switch_blocked() || (EG(flags) & EG_FLAGS_IN_SHUTDOWN) || EG(exception) != NULL) {
		return false;
	}
	return true;
}

bool weft_hook_can_suspend(uint32_t kind)
{
	return (weft_hooks_kinds & kind) != 0 && weft_hook_can_switch();
}

/*
 * Engine state that belongs to the code running, not to the process, and that a suspension would leak
 * into whatever runs next: the error mode (new PDO() sets EH_THROW with PDOException while it connects,
 * so a warning in another coroutine would become a PDOException) and the error level (@ lowers it for
 * its expression). weft_suspend_begin() puts the neutral values in place for the others, and
 * weft_suspend_end() gives the resumed code its own back.
 */
typedef struct {
	zend_error_handling handling;
	int error_reporting;
} weft_suspend_state;

static int weft_base_error_reporting = E_ALL;

static void weft_suspend_begin(weft_suspend_state *state)
{
	zend_save_error_handling(&state->handling);
	state->error_reporting = EG(error_reporting);
	EG(error_handling) = EH_NORMAL;
	EG(exception_class) = NULL;
	EG(error_reporting) = weft_base_error_reporting;
}

static void weft_suspend_end(weft_suspend_state *state)
{
	EG(error_handling) = state->handling.handling;
	EG(exception_class) = state->handling.exception;
	EG(error_reporting) = state->error_reporting;
}

/* Calls a waiter closure with the error state a suspension needs (see weft_suspend_begin). */
static zend_result weft_call_waiter(const zend_fcall_info *waiter, const zend_fcall_info_cache *cache, zval *args, uint32_t count, zval *ret)
{
	/* Copies on this Fiber's stack: another coroutine may call the waiter while this one is suspended. */
	zend_fcall_info fci = *waiter;
	zend_fcall_info_cache fcc = *cache;
	fci.retval = ret;
	fci.params = args;
	fci.param_count = count;
	weft_suspend_state state;
	weft_suspend_begin(&state);
	zend_result called = zend_call_function(&fci, &fcc);
	weft_suspend_end(&state);
	return called;
}

static double weft_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* What the hook would have done without Weft: poll(2) in this thread, restarted after signals. */
static int weft_block_poll(struct pollfd *fds, int n, double timeout)
{
	double deadline = timeout < 0 ? 0 : weft_now() + timeout;
	while (true) {
		int ms = -1;
		if (timeout >= 0) {
			double left = deadline - weft_now();
			ms = left <= 0 ? 0 : (left * 1000.0 >= (double) INT_MAX ? INT_MAX : (int) ceil(left * 1000.0));
		}
		int r = poll(fds, (nfds_t) n, ms);
		if (r >= 0 || errno != EINTR) {
			return r;
		}
	}
}

static int weft_revents_to_events(short revents)
{
	int ready = 0;
	if (revents & (POLLIN | POLLPRI | POLLERR | POLLHUP | POLLNVAL)) {
		ready |= WEFT_WAIT_READ;
	}
	if (revents & (POLLOUT | POLLERR | POLLHUP)) {
		ready |= WEFT_WAIT_WRITE;
	}
	return ready;
}

/* Calls the single-descriptor waiter. Returns 1 with *ret set, or -1 with EG(exception) set. */
static int weft_call_waiter_one(int fd, int events, double timeout, zval *ret)
{
	zval args[3];
	ZVAL_LONG(&args[0], fd);
	ZVAL_LONG(&args[1], events);
	ZVAL_DOUBLE(&args[2], timeout);
	ZVAL_UNDEF(ret);
	zend_result called = weft_call_waiter(&weft_callbacks[WEFT_CB_WAIT].fci, &weft_callbacks[WEFT_CB_WAIT].fcc, args, 3, ret);
	if (called != SUCCESS || EG(exception) != NULL) {
		zval_ptr_dtor(ret);
		ZVAL_UNDEF(ret);
		if (EG(exception) == NULL) {
			zend_throw_error(NULL, "The Weft hook waiter could not be called");
		}
		return -1;
	}
	return 1;
}

int weft_hook_wait_fd(int fd, int events, double timeout)
{
	if (zend_isnan(timeout)) {
		timeout = -1;
	}
	if (weft_hook_can_switch()) {
		zval ret;
		int flags = events & (WEFT_WAIT_READ | WEFT_WAIT_WRITE | WEFT_WAIT_KEEP);
		weft_loop *loop = weft_idle_loop != NULL ? weft_loop_from_object(weft_idle_loop) : NULL;
		/* The loop's side first (idle now, no back-off): only then ask the coroutine's. */
		bool idle = loop != NULL && weft_loop_idle_wanted(loop);
		/* Only an idle poll needs the deadline (its second call waits for what is left). */
		double deadline = idle && timeout >= 0 ? weft_now() + timeout : 0;
		if (weft_call_waiter_one(fd, flags | (idle ? WEFT_WAIT_IDLE : 0), timeout, &ret) < 0) {
			return -1;
		}
		if (Z_TYPE(ret) == IS_TRUE && idle) {
			double left = timeout;
			if (timeout >= 0) {
				left = deadline - weft_now();
				if (left <= 0) {
					return 0;
				}
			}
			int ready = weft_loop_idle_poll(loop, fd, (uint32_t) (events & (WEFT_WAIT_READ | WEFT_WAIT_WRITE)), left);
			if (ready >= 0) {
				return ready;
			}
			/* The loop has work: wait through it, for what is left of the timeout. */
			if (timeout >= 0) {
				left = deadline - weft_now();
				if (left <= 0) {
					return 0;
				}
			}
			if (weft_call_waiter_one(fd, flags, left, &ret) < 0) {
				return -1;
			}
		}
		if (Z_TYPE(ret) == IS_LONG) {
			zend_long ready = Z_LVAL(ret);
			return ready < 0 ? 0 : (int) (ready & (WEFT_WAIT_READ | WEFT_WAIT_WRITE));
		}
		zval_ptr_dtor(&ret);
		/* null: the waiter found no coroutine to suspend (a Fiber that is not Weft's): block below. */
	}
	struct pollfd pfd = {.fd = fd, .events = 0, .revents = 0};
	pfd.events = (short) (((events & WEFT_WAIT_READ) ? POLLIN : 0) | ((events & WEFT_WAIT_WRITE) ? POLLOUT : 0));
	int r = weft_block_poll(&pfd, 1, timeout);
	if (r < 0) {
		zend_throw_error(NULL, "poll() failed while waiting for descriptor %d: %s", fd, strerror(errno));
		return -1;
	}
	return r == 0 ? 0 : weft_revents_to_events(pfd.revents);
}

/* Calls an installed closure other than a wait (no error state to set aside). */
static zend_result weft_callback_call(int which, zval *args, uint32_t count, zval *ret)
{
	zend_fcall_info fci = weft_callbacks[which].fci;
	zend_fcall_info_cache fcc = weft_callbacks[which].fcc;
	fci.retval = ret;
	fci.params = args;
	fci.param_count = count;
	return zend_call_function(&fci, &fcc);
}

void weft_hook_forget_fd(int fd)
{
	if (!weft_waiter_installed || !EG(active)) {
		return;
	}
	zval arg, ret;
	ZVAL_LONG(&arg, fd);
	ZVAL_UNDEF(&ret);
	/* A close may run while an exception propagates (a destructor, a failed op): set it aside, or the
	 * call would not happen and a stale watcher would outlive the descriptor. */
	bool pending = EG(exception) != NULL;
	if (pending) {
		zend_exception_save();
	}
	weft_callback_call(WEFT_CB_FORGET, &arg, 1, &ret);
	zval_ptr_dtor(&ret);
	if (EG(exception) != NULL) {
		zend_clear_exception();
	}
	if (pending) {
		zend_exception_restore();
	}
}

bool weft_hook_in_coroutine(void)
{
	if (!weft_waiter_installed || EG(exception) != NULL) {
		return false;
	}
	zval ret;
	ZVAL_UNDEF(&ret);
	weft_callback_call(WEFT_CB_IN_COROUTINE, NULL, 0, &ret);
	bool in = Z_TYPE(ret) == IS_TRUE;
	zval_ptr_dtor(&ret);
	return in && EG(exception) == NULL;
}

void weft_hook_exited(zend_object *exit)
{
	if (!weft_waiter_installed || EG(exception) != NULL) {
		return;
	}
	zval arg, ret;
	ZVAL_OBJ(&arg, exit);
	ZVAL_UNDEF(&ret);
	weft_callback_call(WEFT_CB_EXITED, &arg, 1, &ret);
	zval_ptr_dtor(&ret);
	if (EG(exception) != NULL) {
		zend_clear_exception();
	}
}

static void weft_zval_string_or_null(zval *zv, const char *text)
{
	if (text != NULL) {
		ZVAL_STRING(zv, text);
	} else {
		ZVAL_NULL(zv);
	}
}

void weft_hook_throw_concurrent_use(const char *hook, const char *call, const char *handle, const char *holder_call)
{
	if (EG(exception) != NULL) {
		return;
	}
	if (!weft_waiter_installed) {
		/* Hooks::disable() while a coroutine still waits in a hooked call: nobody to write the message. */
		zend_throw_error(NULL, "A %s is in use by another coroutine", handle != NULL ? handle : "connection");
		return;
	}
	zval args[4], ret;
	ZVAL_STRING(&args[0], hook);
	weft_zval_string_or_null(&args[1], call);
	weft_zval_string_or_null(&args[2], handle);
	weft_zval_string_or_null(&args[3], holder_call);
	ZVAL_UNDEF(&ret);
	weft_callback_call(WEFT_CB_CONCURRENT_USE, args, 4, &ret);
	for (int i = 0; i < 4; i++) {
		zval_ptr_dtor(&args[i]);
	}
	if (EG(exception) != NULL) {
		zval_ptr_dtor(&ret);
		return; /* the factory failed: its exception is the error */
	}
	if (Z_TYPE(ret) == IS_OBJECT && instanceof_function(Z_OBJCE(ret), zend_ce_throwable)) {
		zend_throw_exception_object(&ret); /* takes the reference */
		return;
	}
	zval_ptr_dtor(&ret);
	zend_throw_error(NULL, "The concurrentUse closure given to Weft\\Ext\\Hooks::install() returned no Throwable");
}

int weft_hook_wait_fds(struct pollfd *fds, int n, double timeout)
{
	if (zend_isnan(timeout)) {
		timeout = -1;
	}
	for (int i = 0; i < n; i++) {
		fds[i].revents = 0;
	}
	if (weft_hook_can_switch()) {
		zval args[2], ret;
		array_init_size(&args[0], (uint32_t) n);
		for (int i = 0; i < n; i++) {
			if (fds[i].fd < 0) {
				continue; /* poll(2) ignores negative descriptors */
			}
			zend_long ev = ((fds[i].events & (POLLIN | POLLPRI)) ? WEFT_WAIT_READ : 0) | ((fds[i].events & POLLOUT) ? WEFT_WAIT_WRITE : 0);
			zval *seen = zend_hash_index_find(Z_ARRVAL(args[0]), (zend_ulong) fds[i].fd);
			if (seen != NULL) {
				Z_LVAL_P(seen) |= ev;
			} else {
				zval value;
				ZVAL_LONG(&value, ev);
				zend_hash_index_add_new(Z_ARRVAL(args[0]), (zend_ulong) fds[i].fd, &value);
			}
		}
		ZVAL_DOUBLE(&args[1], timeout);
		ZVAL_UNDEF(&ret);
		zend_result called = weft_call_waiter(&weft_callbacks[WEFT_CB_WAIT_MANY].fci, &weft_callbacks[WEFT_CB_WAIT_MANY].fcc, args, 2, &ret);
		zval_ptr_dtor(&args[0]);
		if (called != SUCCESS || EG(exception) != NULL) {
			zval_ptr_dtor(&ret);
			if (EG(exception) == NULL) {
				zend_throw_error(NULL, "The Weft hook waiter could not be called");
			}
			return -1;
		}
		if (Z_TYPE(ret) == IS_ARRAY) {
			int count = 0;
			for (int i = 0; i < n; i++) {
				if (fds[i].fd < 0) {
					continue;
				}
				zval *ready = zend_hash_index_find(Z_ARRVAL(ret), (zend_ulong) fds[i].fd);
				if (ready == NULL || Z_TYPE_P(ready) != IS_LONG || Z_LVAL_P(ready) == 0) {
					continue;
				}
				zend_long bits = Z_LVAL_P(ready);
				short revents = 0;
				if ((bits & WEFT_WAIT_READ) && (fds[i].events & (POLLIN | POLLPRI))) {
					revents |= fds[i].events & (POLLIN | POLLPRI);
				}
				if ((bits & WEFT_WAIT_WRITE) && (fds[i].events & POLLOUT)) {
					revents |= POLLOUT;
				}
				if (revents == 0) {
					/* Ready for what it did not ask: a hang-up or an error, which poll reports as such. */
					revents = POLLHUP;
				}
				fds[i].revents = revents;
				count++;
			}
			zval_ptr_dtor(&ret);
			return count;
		}
		zval_ptr_dtor(&ret);
	}
	int r = weft_block_poll(fds, n, timeout);
	if (r < 0) {
		zend_throw_error(NULL, "poll() failed: %s", strerror(errno));
		return -1;
	}
	return r;
}

zif_handler weft_hooks_replace_function(const char *name, zif_handler handler)
{
	zend_function *fn = zend_hash_str_find_ptr(CG(function_table), name, strlen(name));
	if (fn == NULL || fn->type != ZEND_INTERNAL_FUNCTION) {
		return NULL;
	}
	zif_handler previous = fn->internal_function.handler;
	fn->internal_function.handler = handler;
	return previous;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Weft\Ext\Hooks */

static void weft_idle_loop_release(void)
{
	if (weft_idle_loop != NULL) {
		zend_object *loop = weft_idle_loop;
		weft_idle_loop = NULL;
		OBJ_RELEASE(loop);
	}
}

static void weft_callbacks_release(int count)
{
	for (int i = 0; i < count; i++) {
		zval_ptr_dtor(&weft_callbacks[i].closure);
		ZVAL_UNDEF(&weft_callbacks[i].closure);
	}
}

static void weft_waiter_release(void)
{
	weft_idle_loop_release();
	if (weft_waiter_installed) {
		weft_waiter_installed = false;
		weft_callbacks_release(WEFT_CB_COUNT);
	}
}

PHP_METHOD(Weft_Ext_Hooks, install)
{
	zval *given[WEFT_CB_COUNT];

	ZEND_PARSE_PARAMETERS_START(WEFT_CB_COUNT, WEFT_CB_COUNT)
		Z_PARAM_OBJECT_OF_CLASS(given[WEFT_CB_WAIT], zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(given[WEFT_CB_WAIT_MANY], zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(given[WEFT_CB_FORGET], zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(given[WEFT_CB_IN_COROUTINE], zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(given[WEFT_CB_EXITED], zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(given[WEFT_CB_CONCURRENT_USE], zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();

	weft_waiter_release();
	for (int i = 0; i < WEFT_CB_COUNT; i++) {
		ZVAL_COPY(&weft_callbacks[i].closure, given[i]);
		char *error = NULL;
		if (zend_fcall_info_init(&weft_callbacks[i].closure, 0, &weft_callbacks[i].fci, &weft_callbacks[i].fcc, NULL, &error) != SUCCESS) {
			zend_argument_type_error((uint32_t) i + 1, "must be callable: %s", error != NULL ? error : "not callable");
			if (error != NULL) {
				efree(error);
			}
			weft_callbacks_release(i + 1);
			RETURN_THROWS();
		}
		if (error != NULL) {
			efree(error);
		}
	}
	weft_waiter_installed = true;
	/* The level the application runs at (install() is not called under @): what others see while a
	 * coroutine that silenced a call is suspended in it. */
	weft_base_error_reporting = EG(error_reporting);
}

PHP_METHOD(Weft_Ext_Hooks, idleLoop)
{
	zval *epoll = NULL;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_OBJECT_OR_NULL(epoll)
	ZEND_PARSE_PARAMETERS_END();

	if (epoll != NULL && weft_loop_from_object(Z_OBJ_P(epoll)) == NULL) {
		zend_argument_type_error(1, "must be a Weft\\Ext\\Loop (the native loop) or null, %s given", ZSTR_VAL(Z_OBJCE_P(epoll)->name));
		RETURN_THROWS();
	}
	if (epoll != NULL && !weft_waiter_installed) {
		zend_throw_error(NULL, "Hooks::idleLoop() needs a waiter: call Hooks::install() first");
		RETURN_THROWS();
	}
	/* A new loop, or the hooks installed anew: start without a back-off. */
	if (epoll != NULL) {
		weft_loop_idle_reset(weft_loop_from_object(Z_OBJ_P(epoll)));
	}
	if (epoll != NULL && Z_OBJ_P(epoll) == weft_idle_loop) {
		return;
	}
	weft_idle_loop_release();
	if (epoll != NULL) {
		weft_idle_loop = Z_OBJ_P(epoll);
		GC_ADDREF(weft_idle_loop);
	}
}

PHP_METHOD(Weft_Ext_Hooks, uninstall)
{
	ZEND_PARSE_PARAMETERS_NONE();
	weft_hooks_kinds = 0;
	weft_waiter_release();
}

PHP_METHOD(Weft_Ext_Hooks, enable)
{
	zend_long kinds;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(kinds)
	ZEND_PARSE_PARAMETERS_END();

	if (kinds < 0 || (kinds & ~(zend_long) WEFT_HOOK_ALL) != 0) {
		zend_argument_value_error(1, "must be a combination of the Hooks::STREAM, SLEEP, CURL, DNS and EXIT flags");
		RETURN_THROWS();
	}
	weft_hooks_kinds = (uint32_t) kinds & weft_hooks_available;
	RETURN_LONG((zend_long) weft_hooks_kinds);
}

PHP_METHOD(Weft_Ext_Hooks, enabled)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG((zend_long) weft_hooks_enabled_kinds());
}

PHP_METHOD(Weft_Ext_Hooks, available)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG((zend_long) weft_hooks_available);
}

PHP_METHOD(Weft_Ext_Hooks, canSuspend)
{
	zend_long kind;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(kind)
	ZEND_PARSE_PARAMETERS_END();

	RETURN_BOOL(weft_hook_can_suspend((uint32_t) kind));
}

PHP_METHOD(Weft_Ext_Hooks, waitFd)
{
	zend_long fd, events;
	double timeout = -1.0;

	ZEND_PARSE_PARAMETERS_START(2, 3)
		Z_PARAM_LONG(fd)
		Z_PARAM_LONG(events)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(timeout)
	ZEND_PARSE_PARAMETERS_END();

	if (fd < 0 || fd > INT_MAX) {
		zend_argument_value_error(1, "must be a descriptor number >= 0");
		RETURN_THROWS();
	}
	if (events <= 0 || (events & ~(zend_long) (WEFT_WAIT_READ | WEFT_WAIT_WRITE)) != 0) {
		zend_argument_value_error(2, "must be Hooks::READ, Hooks::WRITE or both");
		RETURN_THROWS();
	}
	int ready = weft_hook_wait_fd((int) fd, (int) events, timeout);
	if (ready < 0) {
		RETURN_THROWS();
	}
	RETURN_LONG(ready);
}

PHP_METHOD(Weft_Ext_Hooks, waitFds)
{
	HashTable *wanted;
	double timeout = -1.0;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_ARRAY_HT(wanted)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(timeout)
	ZEND_PARSE_PARAMETERS_END();

	uint32_t n = zend_hash_num_elements(wanted);
	struct pollfd *fds = n > 0 ? safe_emalloc(n, sizeof(struct pollfd), 0) : NULL;
	zend_ulong fd;
	zend_string *skey;
	zval *ev;
	int i = 0;
	ZEND_HASH_FOREACH_KEY_VAL(wanted, fd, skey, ev) {
		if (skey != NULL || (zend_long) fd < 0 || fd > INT_MAX || Z_TYPE_P(ev) != IS_LONG) {
			if (fds != NULL) {
				efree(fds);
			}
			zend_argument_value_error(1, "must map descriptor numbers to Hooks::READ / Hooks::WRITE");
			RETURN_THROWS();
		}
		fds[i].fd = (int) fd;
		fds[i].events = (short) (((Z_LVAL_P(ev) & WEFT_WAIT_READ) ? POLLIN : 0) | ((Z_LVAL_P(ev) & WEFT_WAIT_WRITE) ? POLLOUT : 0));
		fds[i].revents = 0;
		i++;
	} ZEND_HASH_FOREACH_END();

	int ready = weft_hook_wait_fds(fds, (int) n, timeout);
	if (ready < 0) {
		if (fds != NULL) {
			efree(fds);
		}
		RETURN_THROWS();
	}
	array_init(return_value);
	for (int j = 0; j < (int) n; j++) {
		if (fds[j].revents != 0) {
			add_index_long(return_value, (zend_ulong) fds[j].fd, weft_revents_to_events(fds[j].revents));
		}
	}
	if (fds != NULL) {
		efree(fds);
	}
}

zend_result weft_hooks_minit(const zend_function_entry *methods)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "Hooks", methods);
	weft_ce_hooks = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_hooks->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;

#define WEFT_HOOKS_CONST(name, value) zend_declare_class_constant_long(weft_ce_hooks, name, sizeof(name) - 1, (zend_long) (value))
	WEFT_HOOKS_CONST("STREAM", WEFT_HOOK_STREAM);
	WEFT_HOOKS_CONST("SLEEP", WEFT_HOOK_SLEEP);
	WEFT_HOOKS_CONST("CURL", WEFT_HOOK_CURL);
	WEFT_HOOKS_CONST("DNS", WEFT_HOOK_DNS);
	WEFT_HOOKS_CONST("EXIT", WEFT_HOOK_EXIT);
	WEFT_HOOKS_CONST("ALL", WEFT_HOOK_ALL);
	WEFT_HOOKS_CONST("READ", WEFT_WAIT_READ);
	WEFT_HOOKS_CONST("WRITE", WEFT_WAIT_WRITE);
#undef WEFT_HOOKS_CONST

	for (int i = 0; i < WEFT_CB_COUNT; i++) {
		ZVAL_UNDEF(&weft_callbacks[i].closure);
	}
	return SUCCESS;
}

/* The waiter is request memory: drop it (and every hook with it) before the engine frees that memory. */
zend_result weft_hooks_rshutdown(void)
{
	weft_hooks_kinds = 0;
	weft_waiter_release();
	return SUCCESS;
}
