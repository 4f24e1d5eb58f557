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
 *
 * Last words (--worker-timeout): the master sends a worker that stopped reporting SIGXCPU before it kills
 * it. PHP's own handler for it (Worker) answers every request in flight, but only at an opcode
 * boundary, which a long C call never reaches. So each request also leaves here, while the application
 * runs, its connection's descriptor and the bytes of a 503 (track()); after lastWordsOn(SIGXCPU), our
 * handler (chained before PHP's) wakes a second thread which gives PHP 1 s to claim the answering
 * (claimLastWords()), and if it did not, writes those 503s itself, shuts the connections down and
 * kills the process. write(), shutdown() and kill() are all it does outside its lock; the table it
 * reads is changed by the main thread only under that lock.
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
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
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

/* What a Fiber (a request) left here: its deadline, and its connection's last words. */
typedef struct {
	uint64_t deadline;      /* CLOCK_MONOTONIC ns, 0: none */
	int fd;                 /* -1: none */
	zend_string *words;     /* NULL: none */
} weft_deadline_entry;

/* Changed by the main thread only, under weft_deadline_table_lock (the last-words thread reads it). */
static HashTable weft_deadlines;                       /* (zend_ulong) zend_fiber* => weft_deadline_entry* */
static bool weft_deadlines_ready = false;
static pthread_mutex_t weft_deadline_table_lock = PTHREAD_MUTEX_INITIALIZER;

/* Last words. */
static sem_t weft_lw_wake;
static bool weft_lw_sem_ready = false;
static pthread_t weft_lw_thread;
static bool weft_lw_running = false;
static _Atomic bool weft_lw_quit = false;
static _Atomic bool weft_lw_claimed = false;
static int weft_lw_signal = 0;
static struct sigaction weft_lw_previous;

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

static void weft_deadline_entry_free(zval *value)
{
	weft_deadline_entry *entry = Z_PTR_P(value);
	if (entry->words != NULL) {
		zend_string_release(entry->words);
	}
	efree(entry);
}

/* The running Fiber's entry, created if needed. Under the table lock. */
static weft_deadline_entry *weft_deadline_entry_for(zend_fiber *fiber)
{
	if (!weft_deadlines_ready) {
		zend_hash_init(&weft_deadlines, 64, NULL, weft_deadline_entry_free, 0);
		weft_deadlines_ready = true;
	}
	weft_deadline_entry *entry = zend_hash_index_find_ptr(&weft_deadlines, (zend_ulong) (uintptr_t) fiber);
	if (entry == NULL) {
		entry = emalloc(sizeof(*entry));
		entry->deadline = 0;
		entry->fd = -1;
		entry->words = NULL;
		zend_hash_index_add_new_ptr(&weft_deadlines, (zend_ulong) (uintptr_t) fiber, entry);
	}
	return entry;
}

/* Writes all of $len bytes it can to a non-blocking socket; gives up on EAGAIN or an error. */
static void weft_lw_write(int fd, const char *bytes, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, bytes, len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return;
		}
		bytes += n;
		len -= (size_t) n;
	}
}

static void *weft_lw_main(void *arg)
{
	(void) arg;
	while (true) {
		while (sem_wait(&weft_lw_wake) != 0 && errno == EINTR) {
		}
		if (atomic_load(&weft_lw_quit)) {
			break;
		}
		/* PHP's own handler answers better (each request as its protocol wants, the culprit a 500),
		 * and it runs at once unless the main thread is inside a long C call: give it a moment. */
		for (int i = 0; i < 100 && !atomic_load(&weft_lw_claimed); i++) {
			struct timespec pause = {0, 10000000};
			nanosleep(&pause, NULL);
		}
		bool expected = false;
		if (!atomic_compare_exchange_strong(&weft_lw_claimed, &expected, true)) {
			continue;
		}
		int answered = 0;
		pthread_mutex_lock(&weft_deadline_table_lock);
		if (weft_deadlines_ready) {
			weft_deadline_entry *entry;
			ZEND_HASH_FOREACH_PTR(&weft_deadlines, entry) {
				if (entry->fd >= 0 && entry->words != NULL) {
					weft_lw_write(entry->fd, ZSTR_VAL(entry->words), ZSTR_LEN(entry->words));
					shutdown(entry->fd, SHUT_RDWR);
					answered++;
				}
			} ZEND_HASH_FOREACH_END();
		}
		pthread_mutex_unlock(&weft_deadline_table_lock);
		char line[256];
		int len = snprintf(line, sizeof(line),
			"Weft: stuck in a call that PHP cannot interrupt, over --worker-timeout: %d request(s) in flight answered 503; the worker exits and is replaced\n",
			answered);
		if (len > 0) {
			weft_lw_write(STDERR_FILENO, line, (size_t) len < sizeof(line) ? (size_t) len : sizeof(line) - 1);
		}
		kill(getpid(), SIGKILL);
	}
	return NULL;
}

/* Async-signal-safe: sem_post() and the previous handler (PHP's, which only queues the signal). */
static void weft_lw_handler(int signo, siginfo_t *info, void *context)
{
	int saved = errno;
	sem_post(&weft_lw_wake);
	if (weft_lw_previous.sa_flags & SA_SIGINFO) {
		if (weft_lw_previous.sa_sigaction != NULL) {
			weft_lw_previous.sa_sigaction(signo, info, context);
		}
	} else if (weft_lw_previous.sa_handler != SIG_DFL && weft_lw_previous.sa_handler != SIG_IGN && weft_lw_previous.sa_handler != NULL) {
		weft_lw_previous.sa_handler(signo);
	}
	errno = saved;
}

/* At the end of the request PHP's handler is gone too (pcntl resets its signals): the default then. */
static void weft_lw_stop(bool restore)
{
	if (weft_lw_signal != 0) {
		if (restore) {
			sigaction(weft_lw_signal, &weft_lw_previous, NULL);
		} else {
			signal(weft_lw_signal, SIG_DFL);
		}
		weft_lw_signal = 0;
	}
	if (weft_lw_running) {
		atomic_store(&weft_lw_quit, true);
		sem_post(&weft_lw_wake);
		pthread_join(weft_lw_thread, NULL);
		weft_lw_running = false;
		atomic_store(&weft_lw_quit, false);
	}
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
		uint64_t deadline = ((weft_deadline_entry *) Z_PTR_P(value))->deadline;
		if (deadline == 0) {
			continue;
		}
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
	/* The parent's Fibers are not this process's to time, nor its connections to answer. */
	pthread_mutex_init(&weft_deadline_table_lock, NULL);
	if (weft_deadlines_ready) {
		zend_hash_clean(&weft_deadlines);
	}
	weft_lw_running = false;
	atomic_store(&weft_lw_quit, false);
	atomic_store(&weft_lw_claimed, false);
	if (weft_lw_sem_ready) {
		sem_destroy(&weft_lw_wake);
		sem_init(&weft_lw_wake, 0, 0);
	}
	if (weft_lw_signal != 0) {
		sigaction(weft_lw_signal, &weft_lw_previous, NULL);
		weft_lw_signal = 0;
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
	if (!weft_deadline_start_thread()) {
		zend_throw_error(NULL, "Cannot start the deadline thread: %s", strerror(errno));
		RETURN_THROWS();
	}
	uint64_t deadline = weft_deadline_now() + (uint64_t) (seconds * 1e9);
	pthread_mutex_lock(&weft_deadline_table_lock);
	weft_deadline_entry_for(fiber)->deadline = deadline;
	pthread_mutex_unlock(&weft_deadline_table_lock);
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
		pthread_mutex_lock(&weft_deadline_table_lock);
		zend_hash_index_del(&weft_deadlines, (zend_ulong) (uintptr_t) fiber);
		pthread_mutex_unlock(&weft_deadline_table_lock);
	}
}

PHP_METHOD(Weft_Ext_Deadline, track)
{
	zend_long fd;
	zend_string *words;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(fd)
		Z_PARAM_STR(words)
	ZEND_PARSE_PARAMETERS_END();

	if (fd < 0 || fd > INT_MAX) {
		zend_argument_value_error(1, "must be a descriptor number");
		RETURN_THROWS();
	}
	zend_fiber *fiber = EG(active_fiber);
	if (fiber == NULL) {
		return;
	}
	pthread_mutex_lock(&weft_deadline_table_lock);
	weft_deadline_entry *entry = weft_deadline_entry_for(fiber);
	if (entry->words != NULL) {
		zend_string_release(entry->words);
	}
	entry->fd = (int) fd;
	entry->words = zend_string_copy(words);
	pthread_mutex_unlock(&weft_deadline_table_lock);
}

PHP_METHOD(Weft_Ext_Deadline, lastWordsOn)
{
	zend_long signo;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(signo)
	ZEND_PARSE_PARAMETERS_END();

	if (signo <= 0 || signo >= NSIG || signo == SIGKILL || signo == SIGSTOP) {
		zend_argument_value_error(1, "must be a signal that can be caught");
		RETURN_THROWS();
	}
	weft_lw_stop(true);
	if (!weft_lw_sem_ready) {
		if (sem_init(&weft_lw_wake, 0, 0) != 0) {
			zend_throw_error(NULL, "Cannot create the last words semaphore: %s", strerror(errno));
			RETURN_THROWS();
		}
		weft_lw_sem_ready = true;
	}
	atomic_store(&weft_lw_claimed, false);
	int err = pthread_create(&weft_lw_thread, NULL, weft_lw_main, NULL);
	if (err != 0) {
		zend_throw_error(NULL, "Cannot start the last words thread: %s", strerror(err));
		RETURN_THROWS();
	}
	weft_lw_running = true;
	/* Chained before the handler installed now (PHP's pcntl_signal()), which still runs. */
	struct sigaction action;
	memset(&action, 0, sizeof(action));
	action.sa_sigaction = weft_lw_handler;
	action.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&action.sa_mask);
	if (sigaction((int) signo, &action, &weft_lw_previous) != 0) {
		weft_lw_stop(true);
		zend_throw_error(NULL, "Cannot handle signal %d: %s", (int) signo, strerror(errno));
		RETURN_THROWS();
	}
	weft_lw_signal = (int) signo;
}

PHP_METHOD(Weft_Ext_Deadline, claimLastWords)
{
	ZEND_PARSE_PARAMETERS_NONE();
	bool expected = false;
	RETURN_BOOL(atomic_compare_exchange_strong(&weft_lw_claimed, &expected, true));
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
	weft_lw_stop(false);
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
	weft_lw_stop(false);
	weft_deadline_stop_thread();
	if (weft_lw_sem_ready) {
		sem_destroy(&weft_lw_wake);
		weft_lw_sem_ready = false;
	}
	if (weft_deadline_installed && zend_interrupt_function == weft_deadline_interrupt) {
		zend_interrupt_function = weft_deadline_previous_interrupt;
		weft_deadline_installed = false;
	}
	pthread_cond_destroy(&weft_deadline_wake);
}
