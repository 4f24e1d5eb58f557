/*
 * exit()/die() inside a coroutine ends that coroutine (the request it serves) with a
 * Weft\Ext\ExitException instead of unwinding the whole worker, and with it every other request in
 * flight there. Outside a coroutine (the application's boot, the worker's own code, a CLI script) and
 * wherever a Fiber cannot switch, exit() is the original.
 *
 * exit is the ZEND_EXIT opcode, not a function, so this is a user opcode handler. The JIT leaves
 * ZEND_EXIT to the VM and accepts a user handler for it (as for the silence opcodes), so the tracing
 * JIT stays on: Weft\Tests\Integration\Hook checks opcache_get_status()['jit']['on'] in a server.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_smart_str.h"
#include "php_weft.h"
#include "weft_hooks.h"

static zend_class_entry *weft_ce_exit;
static user_opcode_handler_t weft_previous_exit_handler = NULL;
static bool weft_exit_installed = false;

#define WEFT_EXIT_MESSAGE_MAX 200

static int weft_exit_handler(zend_execute_data *execute_data)
{
	if (!weft_hook_can_suspend(WEFT_HOOK_EXIT) || !weft_hook_in_coroutine()) {
		return weft_previous_exit_handler != NULL ? weft_previous_exit_handler(execute_data) : ZEND_USER_OPCODE_DISPATCH;
	}
	const zend_op *opline = EX(opline);
	zend_long status = 0;
	smart_str message = {0};
	smart_str_appends(&message, "exit() was called inside a coroutine");
	if (opline->op1_type != IS_UNUSED) {
		zval *ptr = zend_get_zval_ptr(opline, opline->op1_type, &opline->op1, execute_data);
		zval *value = ptr;
		ZVAL_DEREF(value);
		if (Z_TYPE_P(value) == IS_LONG) {
			status = Z_LVAL_P(value);
			smart_str_appends(&message, " with status ");
			smart_str_append_long(&message, status);
		} else {
			zend_string *text = zval_try_get_string(value);
			if (text != NULL) {
				/* As the original does: exit("message") prints it (into the request's output here). */
				zend_write(ZSTR_VAL(text), ZSTR_LEN(text));
				smart_str_appends(&message, " with \"");
				smart_str_appendl(&message, ZSTR_VAL(text), MIN(ZSTR_LEN(text), WEFT_EXIT_MESSAGE_MAX));
				smart_str_appends(&message, ZSTR_LEN(text) > WEFT_EXIT_MESSAGE_MAX ? "...\"" : "\"");
				zend_string_release(text);
			}
		}
		if (opline->op1_type & (IS_TMP_VAR | IS_VAR)) {
			zval_ptr_dtor_nogc(ptr);
		}
	}
	if (EG(exception) == NULL) {
		smart_str_appends(&message, ": it ends this request (or coroutine) only, not the worker");
		smart_str_0(&message);
		/* Built here rather than by zend_throw_exception(), to be shown to PHP (the exited closure of
		 * Hooks::install(): ExitTrap) before it is thrown (no PHP code runs while an exception is
		 * pending). Created at this opline, so its
		 * file, line and trace are exit()'s. */
		zval exception;
		object_init_ex(&exception, weft_ce_exit);
		zend_update_property_string(zend_ce_error, Z_OBJ(exception), "message", sizeof("message") - 1, ZSTR_VAL(message.s));
		zend_update_property_long(zend_ce_error, Z_OBJ(exception), "code", sizeof("code") - 1, status);
		weft_hook_exited(Z_OBJ(exception));
		zend_throw_exception_object(&exception);
	}
	smart_str_free(&message);
	/* The throw moved EX(opline) to the engine's exception handling op: continue there. */
	return ZEND_USER_OPCODE_CONTINUE;
}

zend_result weft_hook_exit_minit(void)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "ExitException", NULL);
	/* An Error: application code that catches \Exception around its work does not swallow it. */
	weft_ce_exit = zend_register_internal_class_ex(&ce, zend_ce_error);
	weft_ce_exit->ce_flags |= ZEND_ACC_FINAL;
	zend_class_implements(weft_ce_exit, 1, weft_ce_weft_exception);

	weft_previous_exit_handler = zend_get_user_opcode_handler(ZEND_EXIT);
	if (zend_set_user_opcode_handler(ZEND_EXIT, weft_exit_handler) == SUCCESS) {
		weft_exit_installed = true;
		weft_hooks_declare_available(WEFT_HOOK_EXIT);
	}
	return SUCCESS;
}

void weft_hook_exit_mshutdown(void)
{
	if (weft_exit_installed) {
		zend_set_user_opcode_handler(ZEND_EXIT, weft_previous_exit_handler);
		weft_exit_installed = false;
	}
}
