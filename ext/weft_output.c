/*
 * Weft\Ext\OutputStack: a coroutine's output buffers taken off PHP's one buffer stack while it waits,
 * and put back when it resumes (Weft\Coroutine\OutputBuffers).
 *
 * PHP keeps one stack of output handlers per process (OG(handlers), OG(active), OG(running): the
 * public output globals of main/php_output.h). A coroutine that waits with buffers open, even inside
 * one of their handlers (a streamed response's handler that writes to a slow client), would let every
 * other coroutine write into them. detach() moves the handler pointers above a level into an object
 * (the handlers themselves, with their buffers, flags and callbacks, are not copied nor touched), and
 * attach() pushes the same pointers back. A handler that was running when its coroutine waited is
 * running again when it resumes: the coroutine's C stack still holds it, and nothing else saw it.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "main/php_output.h"
#include "zend_exceptions.h"
#include "php_weft.h"

typedef struct {
	php_output_handler **handlers; /* outermost first */
	int count;
	php_output_handler *running;   /* the one of them running when detached, if any */
	bool attached;
	zend_object std;
} weft_output_stack;

static zend_class_entry *weft_ce_output_stack;
static zend_object_handlers weft_output_stack_handlers;

static inline weft_output_stack *weft_output_stack_from(zend_object *object)
{
	return (weft_output_stack *) ((char *) object - XtOffsetOf(weft_output_stack, std));
}

static zend_object *weft_output_stack_create(zend_class_entry *ce)
{
	weft_output_stack *stack = zend_object_alloc(sizeof(weft_output_stack), ce);
	stack->handlers = NULL;
	stack->count = 0;
	stack->running = NULL;
	stack->attached = false;
	zend_object_std_init(&stack->std, ce);
	object_properties_init(&stack->std, ce);
	stack->std.handlers = &weft_output_stack_handlers;
	return &stack->std;
}

static void weft_output_stack_free(zend_object *object)
{
	weft_output_stack *stack = weft_output_stack_from(object);
	if (stack->handlers != NULL) {
		/* Never put back (its coroutine was destroyed while it waited): the buffers are dropped. One
		 * that was running is still referenced from that coroutine's unwound C frames' view of the
		 * world only as a pointer it will not use again; it is freed with the others unless it was
		 * running, which is left allocated rather than risk a use after free. */
		if (!stack->attached && stack->running == NULL) {
			for (int i = 0; i < stack->count; i++) {
				php_output_handler *handler = stack->handlers[i];
				php_output_handler_free(&handler);
			}
		}
		efree(stack->handlers);
		stack->handlers = NULL;
	}
	zend_object_std_dtor(object);
}

static void weft_output_set_active(void)
{
	OG(active) = zend_stack_count(&OG(handlers)) > 0
		? *(php_output_handler **) zend_stack_top(&OG(handlers))
		: NULL;
}

/* Takes the handlers above $base off the stack; null when there are none. */
ZEND_METHOD(Weft_Ext_OutputStack, detach)
{
	zend_long base;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(base)
	ZEND_PARSE_PARAMETERS_END();
	if (base < 0) {
		zend_argument_value_error(1, "must be greater than or equal to 0");
		RETURN_THROWS();
	}
	if (!(OG(flags) & PHP_OUTPUT_ACTIVATED)) {
		RETURN_NULL();
	}
	int level = zend_stack_count(&OG(handlers));
	if (level <= base) {
		RETURN_NULL();
	}
	int count = level - (int) base;
	zend_object *object = weft_output_stack_create(weft_ce_output_stack);
	weft_output_stack *stack = weft_output_stack_from(object);
	stack->handlers = safe_emalloc(count, sizeof(php_output_handler *), 0);
	stack->count = count;
	for (int i = count - 1; i >= 0; i--) {
		php_output_handler **top = (php_output_handler **) zend_stack_top(&OG(handlers));
		stack->handlers[i] = *top;
		if (OG(running) == *top) {
			stack->running = *top;
		}
		zend_stack_del_top(&OG(handlers));
	}
	if (stack->running != NULL) {
		OG(running) = NULL;
	}
	weft_output_set_active();
	RETURN_OBJ(object);
}

/* Pushes the handlers back on top of the stack, as they were; once. */
ZEND_METHOD(Weft_Ext_OutputStack, attach)
{
	ZEND_PARSE_PARAMETERS_NONE();
	weft_output_stack *stack = weft_output_stack_from(Z_OBJ_P(ZEND_THIS));
	if (stack->attached || stack->handlers == NULL) {
		zend_throw_error(NULL, "These output buffers were put back already");
		RETURN_THROWS();
	}
	if (!(OG(flags) & PHP_OUTPUT_ACTIVATED)) {
		zend_throw_error(NULL, "Output buffering is not active: the buffers cannot be put back");
		RETURN_THROWS();
	}
	if (stack->running != NULL && OG(running) != NULL) {
		zend_throw_error(NULL, "An output handler is running: the buffers of a handler that waited cannot be put back inside another");
		RETURN_THROWS();
	}
	for (int i = 0; i < stack->count; i++) {
		zend_stack_push(&OG(handlers), &stack->handlers[i]);
	}
	stack->attached = true;
	weft_output_set_active();
	if (stack->running != NULL) {
		OG(running) = stack->running;
	}
}

/* How many buffers this holds. */
ZEND_METHOD(Weft_Ext_OutputStack, count)
{
	ZEND_PARSE_PARAMETERS_NONE();
	weft_output_stack *stack = weft_output_stack_from(Z_OBJ_P(ZEND_THIS));
	RETURN_LONG(stack->attached ? 0 : stack->count);
}

zend_result weft_output_minit(const zend_function_entry *methods)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "OutputStack", methods);
	weft_ce_output_stack = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_output_stack->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	weft_ce_output_stack->create_object = weft_output_stack_create;
	memcpy(&weft_output_stack_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	weft_output_stack_handlers.offset = XtOffsetOf(weft_output_stack, std);
	weft_output_stack_handlers.free_obj = weft_output_stack_free;
	weft_output_stack_handlers.clone_obj = NULL;
	return SUCCESS;
}
