/*
 * Weft\Ext\Deadline: --max-request-time for a request's own code. A request that never waits (an endless
 * loop, a long computation in PHP) never reaches a point where Weft's loop could cancel it; this makes
 * the engine stop it where it runs, as max_execution_time does: a thread raises EG(vm_interrupt) when a
 * deadline has passed, the engine calls zend_interrupt_function at the next opcode boundary (a loop's
 * back edge, a call), and there, if the Fiber running is the one whose deadline passed, an exception of
 * the configured class is thrown into its code. Its finally blocks run, the application may catch it,
 * and the server answers that request alone (504).
 *
 * Deadlines belong to Fibers (Weft runs each request in one). The thread sleeps until the earliest one,
 * then raises the interrupt once per tick for as long as a passed deadline is armed: an application that
 * catches the exception and goes on looping gets it again at the next tick. Nothing is thrown outside a
 * Fiber ({main}, the loop), while the engine forbids switching (GC destructors, shutdown), over an
 * exception in flight, or while the code running is under the exempt directory (Weft's own: an
 * exception in the middle of the server's bookkeeping would corrupt it); a tick later it is tried again.
 *
 * Costs: arm() and clear() are a hash update each, with a lock only when a deadline earlier than every
 * armed one comes in; no per-opcode work. The thread exists only once a deadline was armed in this
 * process; it touches nothing but atomics and EG(vm_interrupt) (the engine's own cross-thread signal,
 * which max_execution_time's timer sets too). A long internal call (a C function that does not return)
 * is not interrupted: the flag is only read between opcodes, so that case is left to the master's
 * --worker-timeout. A forked child has no thread (a pthread_atfork handler resets the state).
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_fibers.h"
#include "php_weft.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static zend_class_entry *weft_ce_deadline;

static pthread_t weft_deadline_thread;
static pthread_mutex_t weft_deadline_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t weft_deadline_wake;
static bool weft_deadline_running = false;
static bool weft_deadline_quit = false;                /* under the lock */
static _Atomic uint64_t weft_deadline_next_ns = 0;     /* earliest armed deadline (or a passed one), 0: none */
static _Atomic bool weft_deadline_expired = false;     /* thread -> main: a deadline has passed */
static _Atomic uint64_t weft_deadline_tick_ns = 50000000;

/* Main thread only. */
static HashTable weft_deadlines;                       /* (zend_ulong) zend_fiber* => deadline (ns, as long) */
static bool weft_deadlines_ready = false;
static zend_class_entry *weft_deadline_exception = NULL;
static zend_string *weft_deadline_message = NULL;
static zend_string *weft_deadline_exempt = NULL;
static zend_long weft_deadline_thrown = 0;

static void (*weft_deadline_previous_interrupt)(zend_execute_data *execute_data) = NULL;
static bool weft_deadline_installed = false;

static uint64_t weft_deadline_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void weft_deadline_wait_until(uint64_t when)
{
	struct timespec until;
	until.tv_sec = (time_t) (when / 1000000000ull);
	until.tv_nsec = (long) (when % 1000000000ull);
	(void) pthread_cond_timedwait(&weft_deadline_wake, &weft_deadline_lock, &until);
}

static void *weft_deadline_main(void *arg)
{
	(void) arg;
	pthread_mutex_lock(&weft_deadline_lock);
	while (!weft_deadline_quit) {
		uint64_t next = atomic_load(&weft_deadline_next_ns);
		if (next == 0) {
			(void) pthread_cond_wait(&weft_deadline_wake, &weft_deadline_lock);
			continue;
		}
		uint64_t now = weft_deadline_now();
		if (now < next) {
			weft_deadline_wait_until(next);
			continue;
		}
		atomic_store(&weft_deadline_expired, true);
		zend_atomic_bool_store_ex(&EG(vm_interrupt), true);
		/* The main thread moves next_ns on when it looks; until then, once per tick. */
		weft_deadline_wait_until(now + atomic_load(&weft_deadline_tick_ns));
	}
	pthread_mutex_unlock(&weft_deadline_lock);
	return NULL;
}

static bool weft_deadline_start_thread(void)
{
	if (weft_deadline_running) {
		return true;
	}
	weft_deadline_quit = false;
	if (pthread_create(&weft_deadline_thread, NULL, weft_deadline_main, NULL) != 0) {
		return false;
	}
	weft_deadline_running = true;
	return true;
}

static void weft_deadline_stop_thread(void)
{
	if (!weft_deadline_running) {
		return;
	}
	pthread_mutex_lock(&weft_deadline_lock);
	weft_deadline_quit = true;
	pthread_cond_signal(&weft_deadline_wake);
	pthread_mutex_unlock(&weft_deadline_lock);
	pthread_join(weft_deadline_thread, NULL);
	weft_deadline_running = false;
}

/* Whether the code of this frame is the server's own (under the exempt directory). */
static bool weft_deadline_is_exempt(zend_execute_data *execute_data)
{
	if (execute_data == NULL || execute_data->func == NULL || !ZEND_USER_CODE(execute_data->func->type)) {
		return true;
	}
	zend_string *file = execute_data->func->op_array.filename;
	zend_string *exempt = weft_deadline_exempt;
	return exempt != NULL && ZSTR_LEN(exempt) > 0 && file != NULL && ZSTR_LEN(file) >= ZSTR_LEN(exempt)
		&& memcmp(ZSTR_VAL(file), ZSTR_VAL(exempt), ZSTR_LEN(exempt)) == 0;
}

/*
 * In the main thread, at an opcode boundary, after the thread said a deadline passed: recomputes the
 * earliest deadline and throws into the running Fiber if its own has passed.
 */
static void weft_deadline_check(zend_execute_data *execute_data)
{
	if (!weft_deadlines_ready) {
		return;
	}
	zend_fiber *fiber = EG(active_fiber);
	uint64_t now = weft_deadline_now();
	uint64_t earliest = 0;
	bool mine = false;
	zend_ulong key;
	zval *value;
	ZEND_HASH_FOREACH_NUM_KEY_VAL(&weft_deadlines, key, value) {
		uint64_t deadline = (uint64_t) Z_LVAL_P(value);
		if (earliest == 0 || deadline < earliest) {
			earliest = deadline;
		}
		if (fiber != NULL && key == (zend_ulong) (uintptr_t) fiber && deadline <= now) {
			mine = true;
		}
	} ZEND_HASH_FOREACH_END();
	/* A passed deadline still armed (its Fiber is suspended, or exempt code runs) keeps the ticks going. */
	atomic_store(&weft_deadline_next_ns, earliest);
	if (!mine || weft_deadline_exception == NULL || EG(exception) != NULL || zend_fiber_switch_blocked()
		|| (EG(flags) & EG_FLAGS_IN_SHUTDOWN) || weft_deadline_is_exempt(execute_data)) {
		return;
	}
	weft_deadline_thrown++;
	zend_throw_exception(weft_deadline_exception, weft_deadline_message != NULL ? ZSTR_VAL(weft_deadline_message) : "", 0);
}

static void weft_deadline_interrupt(zend_execute_data *execute_data)
{
	/* The others first (pcntl's signal handlers): they cannot run over an exception we threw. */
	if (weft_deadline_previous_interrupt != NULL) {
		weft_deadline_previous_interrupt(execute_data);
	}
	if (atomic_load(&weft_deadline_expired) && atomic_exchange(&weft_deadline_expired, false)) {
		weft_deadline_check(execute_data);
	}
}

static void weft_deadline_atfork_child(void)
{
	/* The thread did not come along; the mutex may have been held by it at fork time. */
	weft_deadline_running = false;
	weft_deadline_quit = false;
	pthread_mutex_init(&weft_deadline_lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&weft_deadline_wake, &attr);
	pthread_condattr_destroy(&attr);
	atomic_store(&weft_deadline_next_ns, 0);
	atomic_store(&weft_deadline_expired, false);
	/* The parent's Fibers are not this process's to time. */
	if (weft_deadlines_ready) {
		zend_hash_clean(&weft_deadlines);
	}
}

static void weft_deadline_release_config(void)
{
	if (weft_deadline_message != NULL) {
		zend_string_release(weft_deadline_message);
		weft_deadline_message = NULL;
	}
	if (weft_deadline_exempt != NULL) {
		zend_string_release(weft_deadline_exempt);
		weft_deadline_exempt = NULL;
	}
	weft_deadline_exception = NULL;
}

PHP_METHOD(Weft_Ext_Deadline, configure)
{
	zend_string *name, *message, *exempt = NULL;
	double tick = 0.05;

	ZEND_PARSE_PARAMETERS_START(2, 4)
		Z_PARAM_STR(name)
		Z_PARAM_STR(message)
		Z_PARAM_OPTIONAL
		Z_PARAM_STR(exempt)
		Z_PARAM_DOUBLE(tick)
	ZEND_PARSE_PARAMETERS_END();

	zend_class_entry *ce = zend_lookup_class(name);
	if (ce == NULL || !instanceof_function(ce, zend_ce_throwable)
		|| (ce->ce_flags & (ZEND_ACC_INTERFACE | ZEND_ACC_TRAIT | ZEND_ACC_EXPLICIT_ABSTRACT_CLASS))) {
		if (!EG(exception)) {
			zend_argument_value_error(1, "must name an instantiable Throwable class, \"%s\" given", ZSTR_VAL(name));
		}
		RETURN_THROWS();
	}
	if (!(tick >= 0.001 && tick <= 60.0)) {
		zend_argument_value_error(4, "must be between 0.001 and 60 seconds");
		RETURN_THROWS();
	}
	weft_deadline_release_config();
	weft_deadline_exception = ce;
	weft_deadline_message = zend_string_copy(message);
	weft_deadline_exempt = exempt != NULL ? zend_string_copy(exempt) : NULL;
	atomic_store(&weft_deadline_tick_ns, (uint64_t) (tick * 1e9));
}

PHP_METHOD(Weft_Ext_Deadline, arm)
{
	double seconds;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_DOUBLE(seconds)
	ZEND_PARSE_PARAMETERS_END();

	if (!(seconds > 0 && seconds <= 86400.0 * 365)) {
		zend_argument_value_error(1, "must be a positive number of seconds (at most a year)");
		RETURN_THROWS();
	}
	zend_fiber *fiber = EG(active_fiber);
	if (fiber == NULL || weft_deadline_exception == NULL) {
		RETURN_FALSE;
	}
	if (!weft_deadlines_ready) {
		zend_hash_init(&weft_deadlines, 64, NULL, NULL, 0);
		weft_deadlines_ready = true;
	}
	if (!weft_deadline_start_thread()) {
		zend_throw_error(NULL, "Cannot start the deadline thread: %s", strerror(errno));
		RETURN_THROWS();
	}
	uint64_t deadline = weft_deadline_now() + (uint64_t) (seconds * 1e9);
	zval value;
	ZVAL_LONG(&value, (zend_long) deadline);
	zend_hash_index_update(&weft_deadlines, (zend_ulong) (uintptr_t) fiber, &value);
	uint64_t next = atomic_load(&weft_deadline_next_ns);
	if (next == 0 || deadline < next) {
		pthread_mutex_lock(&weft_deadline_lock);
		atomic_store(&weft_deadline_next_ns, deadline);
		pthread_cond_signal(&weft_deadline_wake);
		pthread_mutex_unlock(&weft_deadline_lock);
	}
	RETURN_TRUE;
}

PHP_METHOD(Weft_Ext_Deadline, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	zend_fiber *fiber = EG(active_fiber);
	if (fiber != NULL && weft_deadlines_ready) {
		/* next_ns is left as it is: at worst the thread wakes once for nothing and the check moves it on. */
		zend_hash_index_del(&weft_deadlines, (zend_ulong) (uintptr_t) fiber);
	}
}

PHP_METHOD(Weft_Ext_Deadline, count)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG(weft_deadlines_ready ? (zend_long) zend_hash_num_elements(&weft_deadlines) : 0);
}

PHP_METHOD(Weft_Ext_Deadline, thrown)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG(weft_deadline_thrown);
}

zend_result weft_deadline_minit(const zend_function_entry *methods)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "Deadline", methods);
	weft_ce_deadline = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_deadline->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;

	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&weft_deadline_wake, &attr);
	pthread_condattr_destroy(&attr);

	static bool atfork = false;
	if (!atfork) {
		if (pthread_atfork(NULL, NULL, weft_deadline_atfork_child) != 0) {
			return FAILURE;
		}
		atfork = true;
	}
	/* Installed once for the module's life: it costs nothing until the thread sets the flag. */
	if (!weft_deadline_installed) {
		weft_deadline_previous_interrupt = zend_interrupt_function;
		zend_interrupt_function = weft_deadline_interrupt;
		weft_deadline_installed = true;
	}
	return SUCCESS;
}

/* Deadlines and the configuration are request memory; the thread must not outlive them. */
void weft_deadline_rshutdown(void)
{
	weft_deadline_stop_thread();
	atomic_store(&weft_deadline_next_ns, 0);
	atomic_store(&weft_deadline_expired, false);
	if (weft_deadlines_ready) {
		zend_hash_destroy(&weft_deadlines);
		weft_deadlines_ready = false;
	}
	weft_deadline_release_config();
}

/* After the watchdog's, which may have chained its interrupt function onto ours. */
void weft_deadline_mshutdown(void)
{
	weft_deadline_stop_thread();
	if (weft_deadline_installed && zend_interrupt_function == weft_deadline_interrupt) {
		zend_interrupt_function = weft_deadline_previous_interrupt;
		weft_deadline_installed = false;
	}
	pthread_cond_destroy(&weft_deadline_wake);
}
