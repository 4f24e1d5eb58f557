/*
 * Weft\Ext\Watchdog: notices when PHP code holds the process (a blocking call, a long computation) and
 * makes the engine call back into PHP at the next opcode boundary, so the callback can see the stack of
 * the code that did it (debug_backtrace()).
 *
 * The loop calls beat() on every turn of a repeating timer. A thread checks the time of the last beat;
 * when it is older than the threshold it raises EG(vm_interrupt) (the engine's own cross-thread signal,
 * a zend_atomic_bool, which max_execution_time uses too), once per missed beat. The engine then calls
 * zend_interrupt_function in the main thread, where we call the PHP callback with the seconds the
 * process has been held so far, and, when the engine stopped right after a call (a blocking internal
 * function is only noticed once it returns: the flag is checked between opcodes), that call's name and
 * line: $onBlocked(float $seconds, ?string $call, int $line). A loop that the tracing JIT compiled
 * without an interrupt check (seen with a busy loop around an internal call) is not caught in the act;
 * the loop lag that Weft\Hook\BlockingDetector measures still shows it.
 *
 * Some time is not counted as holding the worker, because no change to the application would save
 * it. Loading code: class autoloading (zend_autoload, which covers the autoloader's lookup, the
 * compile, the file's top-level code and the class linking) and compiling any other included file
 * (zend_compile_file: a framework's compiled views and config), work done once, on the first request
 * down each path; counting it made every worker's first requests report "blocking calls" at whatever
 * line came next. And highlighting PHP source (highlight_file() alias show_source(),
 * highlight_string()), which only a framework's debug error page does, once per frame of the trace it
 * shows. The loaders are wrapped
 * once the watchdog first starts (so after opcache has installed its own compile hook: ours measures
 * opcache's work too), the highlighters at MINIT (before any code is compiled to call them directly);
 * the time inside the outermost of them is kept in atomics that the thread subtracts from the time
 * since the last beat.
 *
 * The thread touches nothing but atomics and EG(vm_interrupt). It belongs to the process that
 * started it: after fork() the child has no thread (a pthread_atfork handler marks it stopped).
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "php_weft.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static zend_class_entry *weft_ce_watchdog;

static pthread_t weft_watchdog_thread;
static pthread_mutex_t weft_watchdog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t weft_watchdog_wake = PTHREAD_COND_INITIALIZER;
static bool weft_watchdog_running = false;   /* main thread's view, under the lock for the thread */
static bool weft_watchdog_quit = false;      /* under the lock */
static uint64_t weft_watchdog_threshold_ns = 50000000;
static _Atomic uint64_t weft_watchdog_beat_ns = 0;     /* last beat, CLOCK_MONOTONIC */
static _Atomic uint64_t weft_watchdog_pending_ns = 0;  /* beat the thread reported as missed, 0: none */
static uint64_t weft_watchdog_reported_ns = 0;         /* thread-local: last beat it reported */
/* Time not counted (see the top of the file): finished sections' total, the total at the last beat,
 * and when the section under way started (0: none). */
static _Atomic uint64_t weft_watchdog_excluded_total_ns = 0;
static _Atomic uint64_t weft_watchdog_excluded_at_beat_ns = 0;
static _Atomic uint64_t weft_watchdog_excluded_since_ns = 0;
static int weft_watchdog_excluded_depth = 0;            /* main thread only */
static bool weft_watchdog_excluded_hooked = false;
static zend_class_entry *(*weft_previous_autoload)(zend_string *name, zend_string *lc_name) = NULL;
static zend_op_array *(*weft_previous_compile_file)(zend_file_handle *file_handle, int type) = NULL;

static void (*weft_previous_interrupt)(zend_execute_data *execute_data) = NULL;
static bool weft_interrupt_installed = false;
static zval weft_watchdog_callback;
static bool weft_watchdog_in_callback = false;

static uint64_t weft_watchdog_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Time not counted since the last beat, as of now (either thread). */
static uint64_t weft_watchdog_excluded_since_beat(uint64_t now)
{
	/* The section under way first: its end adds to the total before clearing the start, so a race
	 * counts it twice (a report skipped), never not at all (a false report). */
	uint64_t since = atomic_load(&weft_watchdog_excluded_since_ns);
	uint64_t total = atomic_load(&weft_watchdog_excluded_total_ns);
	uint64_t at_beat = atomic_load(&weft_watchdog_excluded_at_beat_ns);
	uint64_t loading = total > at_beat ? total - at_beat : 0;
	if (since != 0 && now > since) {
		loading += now - since;
	}
	return loading;
}

/* How long the worker has been held since the beat, the time not counted left out. */
static uint64_t weft_watchdog_held(uint64_t beat, uint64_t now)
{
	if (now <= beat) {
		return 0;
	}
	uint64_t held = now - beat;
	uint64_t loading = weft_watchdog_excluded_since_beat(now);
	return held > loading ? held - loading : 0;
}

static void weft_watchdog_beat_now(void)
{
	atomic_store(&weft_watchdog_excluded_at_beat_ns, atomic_load(&weft_watchdog_excluded_total_ns));
	atomic_store(&weft_watchdog_beat_ns, weft_watchdog_now());
}

static void weft_watchdog_excluded_enter(void)
{
	if (weft_watchdog_excluded_depth++ == 0) {
		atomic_store(&weft_watchdog_excluded_since_ns, weft_watchdog_now());
	}
}

static void weft_watchdog_excluded_leave(void)
{
	if (weft_watchdog_excluded_depth > 0 && --weft_watchdog_excluded_depth == 0) {
		uint64_t since = atomic_load(&weft_watchdog_excluded_since_ns);
		uint64_t now = weft_watchdog_now();
		if (since != 0 && now > since) {
			atomic_fetch_add(&weft_watchdog_excluded_total_ns, now - since);
		}
		atomic_store(&weft_watchdog_excluded_since_ns, 0);
	}
}

static zend_class_entry *weft_watchdog_autoload(zend_string *name, zend_string *lc_name)
{
	zend_class_entry *ce = NULL;
	weft_watchdog_excluded_enter();
	zend_try {
		ce = weft_previous_autoload(name, lc_name);
	} zend_catch {
		/* A fatal error in the loaded file: leave the section before the bailout goes on. */
		weft_watchdog_excluded_leave();
		zend_bailout();
	} zend_end_try();
	weft_watchdog_excluded_leave();
	return ce;
}

static zend_op_array *weft_watchdog_compile_file(zend_file_handle *file_handle, int type)
{
	zend_op_array *op_array = NULL;
	weft_watchdog_excluded_enter();
	zend_try {
		op_array = weft_previous_compile_file(file_handle, type);
	} zend_catch {
		weft_watchdog_excluded_leave();
		zend_bailout();
	} zend_end_try();
	weft_watchdog_excluded_leave();
	return op_array;
}

static zif_handler weft_original_highlight_file = NULL;
static zif_handler weft_original_highlight_string = NULL;

static void weft_watchdog_excluded_call(zif_handler original, INTERNAL_FUNCTION_PARAMETERS)
{
	weft_watchdog_excluded_enter();
	zend_try {
		original(INTERNAL_FUNCTION_PARAM_PASSTHRU);
	} zend_catch {
		weft_watchdog_excluded_leave();
		zend_bailout();
	} zend_end_try();
	weft_watchdog_excluded_leave();
}

static ZEND_NAMED_FUNCTION(weft_watchdog_highlight_file)
{
	weft_watchdog_excluded_call(weft_original_highlight_file, INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

static zif_handler weft_original_show_source = NULL;

static ZEND_NAMED_FUNCTION(weft_watchdog_show_source)
{
	weft_watchdog_excluded_call(weft_original_show_source, INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

static ZEND_NAMED_FUNCTION(weft_watchdog_highlight_string)
{
	weft_watchdog_excluded_call(weft_original_highlight_string, INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

static zif_handler weft_watchdog_wrap_function(const char *name, zif_handler wrapper)
{
	zend_function *fn = zend_hash_str_find_ptr(CG(function_table), name, strlen(name));
	if (fn == NULL || fn->type != ZEND_INTERNAL_FUNCTION) {
		return NULL;
	}
	zif_handler original = fn->internal_function.handler;
	fn->internal_function.handler = wrapper;
	return original;
}

static void weft_watchdog_unwrap_function(const char *name, zif_handler wrapper, zif_handler original)
{
	zend_function *fn = original == NULL ? NULL : zend_hash_str_find_ptr(CG(function_table), name, strlen(name));
	if (fn != NULL && fn->type == ZEND_INTERNAL_FUNCTION && fn->internal_function.handler == wrapper) {
		fn->internal_function.handler = original;
	}
}

static void weft_watchdog_hook_excluded(void)
{
	if (weft_watchdog_excluded_hooked || zend_autoload == NULL || zend_compile_file == NULL) {
		return;
	}
	weft_previous_autoload = zend_autoload;
	zend_autoload = weft_watchdog_autoload;
	weft_previous_compile_file = zend_compile_file;
	zend_compile_file = weft_watchdog_compile_file;
	weft_watchdog_excluded_hooked = true;
}

static void weft_watchdog_unhook_excluded(void)
{
	if (!weft_watchdog_excluded_hooked) {
		return;
	}
	/* Only where nothing has wrapped ours since: a later wrapper still calls ours, which stays valid. */
	if (zend_autoload == weft_watchdog_autoload) {
		zend_autoload = weft_previous_autoload;
	}
	if (zend_compile_file == weft_watchdog_compile_file) {
		zend_compile_file = weft_previous_compile_file;
	}
	weft_watchdog_excluded_hooked = false;
}

static void *weft_watchdog_main(void *arg)
{
	(void) arg;
	pthread_mutex_lock(&weft_watchdog_lock);
	while (!weft_watchdog_quit) {
		uint64_t step = weft_watchdog_threshold_ns / 4;
		if (step < 2000000) {
			step = 2000000;
		}
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		uint64_t ns = (uint64_t) until.tv_nsec + step;
		until.tv_sec += (time_t) (ns / 1000000000ull);
		until.tv_nsec = (long) (ns % 1000000000ull);
		(void) pthread_cond_timedwait(&weft_watchdog_wake, &weft_watchdog_lock, &until);
		if (weft_watchdog_quit) {
			break;
		}
		uint64_t beat = atomic_load(&weft_watchdog_beat_ns);
		uint64_t now = weft_watchdog_now();
		if (beat != 0 && beat != weft_watchdog_reported_ns && weft_watchdog_held(beat, now) > weft_watchdog_threshold_ns) {
			weft_watchdog_reported_ns = beat;
			atomic_store(&weft_watchdog_pending_ns, beat);
			zend_atomic_bool_store_ex(&EG(vm_interrupt), true);
		}
	}
	pthread_mutex_unlock(&weft_watchdog_lock);
	return NULL;
}

static bool weft_is_call_end(zend_uchar opcode)
{
	return opcode == ZEND_DO_ICALL || opcode == ZEND_DO_UCALL || opcode == ZEND_DO_FCALL || opcode == ZEND_DO_FCALL_BY_NAME;
}

static bool weft_is_call_start(zend_uchar opcode)
{
	return opcode == ZEND_INIT_FCALL || opcode == ZEND_INIT_FCALL_BY_NAME || opcode == ZEND_INIT_NS_FCALL_BY_NAME
		|| opcode == ZEND_INIT_METHOD_CALL || opcode == ZEND_INIT_STATIC_METHOD_CALL || opcode == ZEND_INIT_DYNAMIC_CALL
		|| opcode == ZEND_INIT_USER_CALL || opcode == ZEND_NEW;
}

/*
 * The call that just returned, if the engine stopped right after one: a blocking internal function is
 * only noticed once it is back, with the frame's opline on the instruction after the call. Sets the
 * function's name (NULL when the opcodes do not say it) and the call's line.
 */
static bool weft_watchdog_last_call(zend_execute_data *execute_data, zend_string **name, uint32_t *line)
{
	*name = NULL;
	if (execute_data == NULL || execute_data->func == NULL || !ZEND_USER_CODE(execute_data->func->type) || execute_data->opline == NULL) {
		return false;
	}
	const zend_op_array *op_array = &execute_data->func->op_array;
	const zend_op *opline = execute_data->opline;
	if (opline <= op_array->opcodes || opline > op_array->opcodes + op_array->last) {
		return false;
	}
	const zend_op *call = opline - 1;
	if (!weft_is_call_end(call->opcode)) {
		return false;
	}
	*line = call->lineno;
	int depth = 0;
	for (const zend_op *op = call - 1; op >= op_array->opcodes; op--) {
		if (weft_is_call_end(op->opcode)) {
			depth++;
		} else if (weft_is_call_start(op->opcode)) {
			if (depth > 0) {
				depth--;
				continue;
			}
			if (op->opcode != ZEND_NEW && op->opcode != ZEND_INIT_DYNAMIC_CALL && op->opcode != ZEND_INIT_USER_CALL
				&& op->op2_type == IS_CONST) {
				zval *constant = RT_CONSTANT(op, op->op2);
				if (Z_TYPE_P(constant) == IS_STRING) {
					*name = Z_STR_P(constant);
				}
			}
			break;
		}
	}
	return true;
}

static void weft_watchdog_interrupt(zend_execute_data *execute_data)
{
	uint64_t since = atomic_exchange(&weft_watchdog_pending_ns, 0);
	if (since != 0 && Z_TYPE(weft_watchdog_callback) == IS_OBJECT && !weft_watchdog_in_callback
		&& EG(exception) == NULL && !(EG(flags) & EG_FLAGS_IN_SHUTDOWN)) {
		zval args[3], ret;
		ZVAL_DOUBLE(&args[0], (double) weft_watchdog_held(since, weft_watchdog_now()) / 1e9);
		zend_string *name;
		uint32_t line = 0;
		ZVAL_NULL(&args[1]);
		ZVAL_LONG(&args[2], 0);
		if (weft_watchdog_last_call(execute_data, &name, &line)) {
			if (name != NULL) {
				ZVAL_STR_COPY(&args[1], name);
			}
			ZVAL_LONG(&args[2], (zend_long) line);
		}
		ZVAL_UNDEF(&ret);
		weft_watchdog_in_callback = true;
		/* Hold a reference: the callback may stop the watchdog (and release its own closure). */
		zval callback;
		ZVAL_COPY(&callback, &weft_watchdog_callback);
		call_user_function(NULL, NULL, &callback, &ret, 3, args);
		zval_ptr_dtor(&args[1]);
		zval_ptr_dtor(&callback);
		zval_ptr_dtor(&ret);
		weft_watchdog_in_callback = false;
		/* Count the next hold from here: another one may follow before the loop beats again. */
		weft_watchdog_beat_now();
	}
	if (weft_previous_interrupt != NULL) {
		weft_previous_interrupt(execute_data);
	}
}

static void weft_watchdog_stop_thread(void)
{
	if (!weft_watchdog_running) {
		return;
	}
	pthread_mutex_lock(&weft_watchdog_lock);
	weft_watchdog_quit = true;
	pthread_cond_signal(&weft_watchdog_wake);
	pthread_mutex_unlock(&weft_watchdog_lock);
	pthread_join(weft_watchdog_thread, NULL);
	weft_watchdog_running = false;
}

static void weft_watchdog_release_callback(void)
{
	if (Z_TYPE(weft_watchdog_callback) != IS_UNDEF) {
		zval old;
		ZVAL_COPY_VALUE(&old, &weft_watchdog_callback);
		ZVAL_UNDEF(&weft_watchdog_callback);
		zval_ptr_dtor(&old);
	}
}

static void weft_watchdog_atfork_child(void)
{
	/* The thread did not come along; the mutex may have been held by it at fork time. */
	weft_watchdog_running = false;
	weft_watchdog_quit = false;
	pthread_mutex_init(&weft_watchdog_lock, NULL);
	pthread_cond_init(&weft_watchdog_wake, NULL);
	atomic_store(&weft_watchdog_beat_ns, 0);
	atomic_store(&weft_watchdog_pending_ns, 0);
	/* A fork in the middle of loading code (the master's autoloader) is the child's too: its depth
	 * and start stay as they are, so the section still ends once. */
}

PHP_METHOD(Weft_Ext_Watchdog, start)
{
	double threshold;
	zval *callback;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_DOUBLE(threshold)
		Z_PARAM_OBJECT_OF_CLASS(callback, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();

	if (!(threshold >= 0.001 && threshold <= 3600.0)) {
		zend_argument_value_error(1, "must be between 0.001 and 3600 seconds");
		RETURN_THROWS();
	}
	weft_watchdog_stop_thread();
	weft_watchdog_release_callback();
	ZVAL_COPY(&weft_watchdog_callback, callback);
	weft_watchdog_threshold_ns = (uint64_t) (threshold * 1e9);
	weft_watchdog_quit = false;
	weft_watchdog_reported_ns = 0;
	atomic_store(&weft_watchdog_pending_ns, 0);
	weft_watchdog_hook_excluded();
	weft_watchdog_beat_now();
	if (!weft_interrupt_installed) {
		weft_previous_interrupt = zend_interrupt_function;
		zend_interrupt_function = weft_watchdog_interrupt;
		weft_interrupt_installed = true;
	}
	int err = pthread_create(&weft_watchdog_thread, NULL, weft_watchdog_main, NULL);
	if (err != 0) {
		weft_watchdog_release_callback();
		zend_throw_error(NULL, "Cannot start the watchdog thread: %s", strerror(err));
		RETURN_THROWS();
	}
	weft_watchdog_running = true;
}

PHP_METHOD(Weft_Ext_Watchdog, beat)
{
	ZEND_PARSE_PARAMETERS_NONE();
	weft_watchdog_beat_now();
}

PHP_METHOD(Weft_Ext_Watchdog, stop)
{
	ZEND_PARSE_PARAMETERS_NONE();
	weft_watchdog_stop_thread();
	atomic_store(&weft_watchdog_pending_ns, 0);
	if (!weft_watchdog_in_callback) {
		weft_watchdog_release_callback();
	}
}

PHP_METHOD(Weft_Ext_Watchdog, isRunning)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_BOOL(weft_watchdog_running);
}

zend_result weft_watchdog_minit(const zend_function_entry *methods)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "Watchdog", methods);
	weft_ce_watchdog = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_watchdog->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	ZVAL_UNDEF(&weft_watchdog_callback);
	weft_original_highlight_file = weft_watchdog_wrap_function("highlight_file", weft_watchdog_highlight_file);
	weft_original_highlight_string = weft_watchdog_wrap_function("highlight_string", weft_watchdog_highlight_string);
	weft_original_show_source = weft_watchdog_wrap_function("show_source", weft_watchdog_show_source);
	static bool atfork = false;
	if (!atfork) {
		if (pthread_atfork(NULL, NULL, weft_watchdog_atfork_child) != 0) {
			return FAILURE;
		}
		atfork = true;
	}
	return SUCCESS;
}

/* The callback is request memory, and the thread must not outlive the module. */
void weft_watchdog_rshutdown(void)
{
	weft_watchdog_stop_thread();
	atomic_store(&weft_watchdog_pending_ns, 0);
	weft_watchdog_release_callback();
}

void weft_watchdog_mshutdown(void)
{
	weft_watchdog_stop_thread();
	weft_watchdog_unhook_excluded();
	weft_watchdog_unwrap_function("highlight_file", weft_watchdog_highlight_file, weft_original_highlight_file);
	weft_watchdog_unwrap_function("highlight_string", weft_watchdog_highlight_string, weft_original_highlight_string);
	weft_watchdog_unwrap_function("show_source", weft_watchdog_show_source, weft_original_show_source);
	if (weft_interrupt_installed && zend_interrupt_function == weft_watchdog_interrupt) {
		zend_interrupt_function = weft_previous_interrupt;
		weft_interrupt_installed = false;
	}
}
