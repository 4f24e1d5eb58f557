#ifndef PHP_WEFT_H
#define PHP_WEFT_H

extern zend_module_entry weft_module_entry;
#define phpext_weft_ptr &weft_module_entry

/* Bump when the PHP-visible API changes; PHP code may check Weft\Ext\VERSION / Weft\Ext\version(). */
#define PHP_WEFT_VERSION "0.1.0"

#if defined(ZTS) && defined(COMPILE_DL_WEFT)
ZEND_TSRMLS_CACHE_EXTERN()
#endif

/* weft.c: the Weft\WeftException interface, registered first at MINIT */
extern zend_class_entry *weft_ce_weft_exception;

/* weft_epoll.c; the method tables live in weft_arginfo.h, included by weft.c only. */
zend_result weft_epoll_minit(const zend_function_entry *epoll_methods, const zend_function_entry *exception_methods);

/* The loop's epoll descriptor for a hook's idle poll, or -1 (see weft_epoll.c). */
int weft_epoll_idle_fd(zend_object *epoll, double *budget, bool *empty);
/* The class of Weft\Ext\Epoll objects (weft_epoll.c). */
zend_class_entry *weft_epoll_class(void);
/* Epoll's methods for C callers (the native loop, weft_loop.c); see weft_epoll.c. */
zend_object *weft_epoll_new(void);
bool weft_epoll_inherited(zend_object *epoll);
int weft_epoll_descriptor_of(zval *zstream);
zend_result weft_epoll_add(zend_object *epoll, zval *zstream, zend_long events, zend_long key);
zend_result weft_epoll_modify(zend_object *epoll, zend_long key, zend_long events);
int weft_epoll_remove(zend_object *epoll, zend_long key);
zend_result weft_epoll_wait(zend_object *epoll, double timeout, zend_long max, zval *result);
/* weft_loop.c: Weft\Ext\Loop, the native event loop. */
zend_result weft_loop_minit(void);

/* weft_tls.c: a TLS stream read ahead (tlsAttach()) with decrypted data waiting in OpenSSL. */
bool weft_tls_unread(php_stream *stream);
/* weft_tls.c, for Weft\Ext\Conn: a TLS connection's I/O through the SSL of an attached stream (see there). */
#define WEFT_TLS_WAIT 0
#define WEFT_TLS_MORE 1
#define WEFT_TLS_WANT_WRITE 2
#define WEFT_TLS_END 3
#define WEFT_TLS_FAILED 4
void *weft_tls_conn_claim(php_stream *stream, int fd);
void *weft_tls_conn_handle(php_stream *stream);
bool weft_tls_conn_holds(void *handle);
size_t weft_tls_conn_read(void *handle, char *buf, size_t cap, int *state);
zend_long weft_tls_conn_write(void *handle, const char *bytes, size_t len);
/* weft_http.c: Weft\Ext\parseHead() */
zend_result weft_http_minit(void);
void weft_http_rshutdown(void);
/* RFC 9110 tchar, 1 for each byte a token (method, field name) may hold (weft_http.c). */
extern const unsigned char weft_tchar[256];
bool weft_http_frame_request(zend_string *bytes, zend_long max_header_bytes, zend_long max_target_bytes,
	zend_long max_header_count, HashTable *methods, zend_string *remote, bool https, zval *out);
/* A Request of the class checkRequestLayout() accepted: its version and header block (borrowed); false for any other object. */
bool weft_http_request_fields(zend_object *request, zend_string **version, zend_string **block);
/* weft_encode.c: Weft\Ext\encodeResponse(), the common Response's bytes */
void weft_encode_rshutdown(void);

/* weft_hooks.c */
zend_result weft_hooks_minit(const zend_function_entry *methods);
zend_result weft_hooks_rshutdown(void);
/* Swaps an internal function's handler (at MINIT/MSHUTDOWN only); returns the previous one, or NULL. */
zif_handler weft_hooks_replace_function(const char *name, zif_handler handler);

/* weft_hook_stream.c */
zend_result weft_hook_stream_minit(void);
void weft_hook_stream_mshutdown(void);

/* weft_hook_sleep.c */
zend_result weft_hook_sleep_minit(void);
void weft_hook_sleep_mshutdown(void);

/* weft_hook_exit.c */
zend_result weft_hook_exit_minit(void);
void weft_hook_exit_mshutdown(void);

/* weft_hook_dns.c */
zend_result weft_hook_dns_minit(void);
void weft_hook_dns_mshutdown(void);
/* Resolves a host name in a thread while the coroutine waits: the first address as text ("[v6]" for
 * IPv6) into out. 1: done, 0: no address (or no thread: the caller does what it did without us),
 * -1: cancelled (EG(exception) is set). Only after weft_hook_can_suspend(WEFT_HOOK_DNS). */
int weft_dns_resolve_first(const char *host, size_t len, char *out, size_t outlen);

/* weft_watchdog.c */
zend_result weft_watchdog_minit(const zend_function_entry *methods);
void weft_watchdog_rshutdown(void);
void weft_watchdog_mshutdown(void);

/* weft_deadline.c */
zend_result weft_deadline_minit(const zend_function_entry *methods);
void weft_deadline_rshutdown(void);
void weft_deadline_mshutdown(void);

/* weft_output.c: Weft\Ext\OutputStack, a coroutine's output buffers across its waits */
zend_result weft_output_minit(const zend_function_entry *methods);

/* weft_state.c: Weft\Ext\StaticProperties, the static properties that follow the coroutine */
zend_result weft_state_minit(const zend_function_entry *methods);

/* weft_conn.c: Weft\Ext\Conn, a connection's socket I/O on the native loop (plain, or TLS through weft_tls.c) */
zend_result weft_conn_minit(void);
/* weft_line.c: the line protocol's framing for Conn::frameLines() */
void weft_line_minit(void);
bool weft_line_frame(zend_string *bytes, zend_long max_length, zval *lines);

/* weft_inotify.c: Weft\Ext\Inotify, for serve --watch */
zend_result weft_inotify_minit(const zend_function_entry *inotify_methods, const zend_function_entry *exception_methods);

#endif /* PHP_WEFT_H */
