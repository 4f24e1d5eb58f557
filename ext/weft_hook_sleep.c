/*
 * sleep(), usleep() and time_nanosleep() suspend the calling coroutine (weft_hook_wait_fds() with no
 * descriptor is a timer through the loop) instead of the whole process. The internal functions'
 * handlers are swapped at MINIT (before any script is compiled, so the JIT only ever sees ours); each
 * hooked handler runs the original whenever it may not suspend, and for any argument the original
 * would refuse, so errors stay exactly the original's.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_weft.h"
#include "weft_hooks.h"

static zif_handler weft_orig_sleep = NULL;
static zif_handler weft_orig_usleep = NULL;
static zif_handler weft_orig_time_nanosleep = NULL;

/* The argument as a non-negative integer, if it is one and there is exactly `n` of them. */
static bool weft_sleep_arg(zend_execute_data *execute_data, uint32_t n, uint32_t i, zend_long *out)
{
	if (ZEND_NUM_ARGS() != n) {
		return false;
	}
	zval *arg = ZEND_CALL_ARG(execute_data, i);
	ZVAL_DEREF(arg);
	if (Z_TYPE_P(arg) != IS_LONG || Z_LVAL_P(arg) < 0) {
		return false; /* floats, strings, negatives: the original coerces or refuses them */
	}
	*out = Z_LVAL_P(arg);
	return true;
}

static ZEND_NAMED_FUNCTION(weft_sleep)
{
	zend_long seconds;
	if (!weft_hook_can_suspend(WEFT_HOOK_SLEEP) || !weft_sleep_arg(execute_data, 1, 1, &seconds)) {
		weft_orig_sleep(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	if (weft_hook_wait_fds(NULL, 0, (double) seconds) < 0) {
		RETURN_THROWS();
	}
	RETURN_LONG(0);
}

static ZEND_NAMED_FUNCTION(weft_usleep)
{
	zend_long micro;
	if (!weft_hook_can_suspend(WEFT_HOOK_SLEEP) || !weft_sleep_arg(execute_data, 1, 1, &micro)) {
		weft_orig_usleep(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	if (weft_hook_wait_fds(NULL, 0, (double) micro / 1e6) < 0) {
		RETURN_THROWS();
	}
}

static ZEND_NAMED_FUNCTION(weft_time_nanosleep)
{
	zend_long seconds, nano;
	if (!weft_hook_can_suspend(WEFT_HOOK_SLEEP) || !weft_sleep_arg(execute_data, 2, 1, &seconds)
		|| !weft_sleep_arg(execute_data, 2, 2, &nano) || nano > 999999999) {
		weft_orig_time_nanosleep(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	if (weft_hook_wait_fds(NULL, 0, (double) seconds + (double) nano / 1e9) < 0) {
		RETURN_THROWS();
	}
	RETURN_TRUE;
}

zend_result weft_hook_sleep_minit(void)
{
	weft_orig_sleep = weft_hooks_replace_function("sleep", weft_sleep);
	weft_orig_usleep = weft_hooks_replace_function("usleep", weft_usleep);
	weft_orig_time_nanosleep = weft_hooks_replace_function("time_nanosleep", weft_time_nanosleep);
	if (weft_orig_sleep == NULL || weft_orig_usleep == NULL || weft_orig_time_nanosleep == NULL) {
		/* Not all there (a build without them): put back what was swapped and hook none. */
		weft_hook_sleep_mshutdown();
		return SUCCESS;
	}
	weft_hooks_declare_available(WEFT_HOOK_SLEEP);
	return SUCCESS;
}

void weft_hook_sleep_mshutdown(void)
{
	if (weft_orig_sleep != NULL) {
		weft_hooks_replace_function("sleep", weft_orig_sleep);
		weft_orig_sleep = NULL;
	}
	if (weft_orig_usleep != NULL) {
		weft_hooks_replace_function("usleep", weft_orig_usleep);
		weft_orig_usleep = NULL;
	}
	if (weft_orig_time_nanosleep != NULL) {
		weft_hooks_replace_function("time_nanosleep", weft_orig_time_nanosleep);
		weft_orig_time_nanosleep = NULL;
	}
}
