/*
 * The weft extension: the native pieces of the Weft application server.
 * Weft\Ext\Epoll (weft_epoll.c), the event loop backend behind Weft\Loop\EpollDriver; the hooks that make
 * blocking PHP calls suspend the current coroutine (weft_hooks.c and the weft_hook_*.c files); the HTTP
 * request head fast path Weft\Ext\parseHead() (weft_http.c); --max-request-time for code that never
 * waits, Weft\Ext\Deadline (weft_deadline.c); inotify for serve --watch, Weft\Ext\Inotify (weft_inotify.c).
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "ext/standard/info.h"
#include "zend_exceptions.h"
#include "php_weft.h"
#include "weft_arginfo.h"
#include "weft_curl.h"

/*
 * Weft\WeftException, the marker every exception Weft throws carries (src/WeftException.php declares
 * the same interface for PHP without the extension). Declared here so that the extension's own
 * exceptions carry it too; with the extension loaded the PHP file is never autoloaded, and it declares
 * the interface only when it is not there yet.
 */
zend_class_entry *weft_ce_weft_exception = NULL;

static void weft_register_exception_root(void)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft", "WeftException", NULL);
	weft_ce_weft_exception = zend_register_internal_interface(&ce);
	zend_class_implements(weft_ce_weft_exception, 1, zend_ce_throwable);
}

PHP_FUNCTION(weft_version)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_STRINGL(PHP_WEFT_VERSION, sizeof(PHP_WEFT_VERSION) - 1);
}

static PHP_MINIT_FUNCTION(weft)
{
#if defined(ZTS) && defined(COMPILE_DL_WEFT)
	ZEND_TSRMLS_CACHE_UPDATE();
#endif
	weft_register_exception_root();
	weft_curl_minit(module_number);
	REGISTER_NS_STRING_CONSTANT("Weft\\Ext", "VERSION", PHP_WEFT_VERSION, CONST_PERSISTENT);
	if (weft_http_minit() != SUCCESS
		|| weft_epoll_minit(class_Weft_Ext_Epoll_methods, class_Weft_Ext_EpollException_methods) != SUCCESS
		|| weft_loop_minit() != SUCCESS
		|| weft_hooks_minit(class_Weft_Ext_Hooks_methods) != SUCCESS
		|| weft_hook_stream_minit() != SUCCESS
		|| weft_hook_sleep_minit() != SUCCESS
		|| weft_hook_exit_minit() != SUCCESS
		|| weft_hook_dns_minit() != SUCCESS
		|| weft_watchdog_minit(class_Weft_Ext_Watchdog_methods) != SUCCESS
		|| weft_deadline_minit(class_Weft_Ext_Deadline_methods) != SUCCESS
		|| weft_inotify_minit(class_Weft_Ext_Inotify_methods, class_Weft_Ext_InotifyException_methods) != SUCCESS
		|| weft_output_minit(class_Weft_Ext_OutputStack_methods) != SUCCESS
		|| weft_state_minit(class_Weft_Ext_StaticProperties_methods) != SUCCESS
		|| weft_conn_minit() != SUCCESS) {
		return FAILURE;
	}
	return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(weft)
{
	weft_watchdog_mshutdown();
	weft_deadline_mshutdown();
	weft_hook_dns_mshutdown();
	weft_hook_exit_mshutdown();
	weft_hook_sleep_mshutdown();
	weft_hook_stream_mshutdown();
	return SUCCESS;
}

static PHP_RSHUTDOWN_FUNCTION(weft)
{
	weft_watchdog_rshutdown();
	weft_deadline_rshutdown();
	weft_http_rshutdown();
	weft_encode_rshutdown();
	return weft_hooks_rshutdown();
}

static PHP_MINFO_FUNCTION(weft)
{
	php_info_print_table_start();
	php_info_print_table_row(2, "weft support", "enabled");
	php_info_print_table_row(2, "version", PHP_WEFT_VERSION);
#ifdef HAVE_EPOLL_PWAIT2
	php_info_print_table_row(2, "epoll wait", "epoll_pwait2 (ns timeouts), epoll_wait fallback");
#else
	php_info_print_table_row(2, "epoll wait", "epoll_wait (ms timeouts)");
#endif
	php_info_print_table_end();
}

static const zend_module_dep weft_deps[] = {
	ZEND_MOD_REQUIRED("spl")
	ZEND_MOD_OPTIONAL("openssl") /* its transports (tcp, ssl, tls) must be registered before ours wrap them */
	ZEND_MOD_OPTIONAL("curl") /* loaded first, so that its libcurl is there for the curl hook (weft_curl.c) */
	ZEND_MOD_END
};

zend_module_entry weft_module_entry = {
	STANDARD_MODULE_HEADER_EX,
	NULL,
	weft_deps,
	"weft",
	ext_functions,
	PHP_MINIT(weft),
	PHP_MSHUTDOWN(weft),
	NULL,
	PHP_RSHUTDOWN(weft),
	PHP_MINFO(weft),
	PHP_WEFT_VERSION,
	STANDARD_MODULE_PROPERTIES
};

#ifdef COMPILE_DL_WEFT
# ifdef ZTS
ZEND_TSRMLS_CACHE_DEFINE()
# endif
ZEND_GET_MODULE(weft)
#endif
