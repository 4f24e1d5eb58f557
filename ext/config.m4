dnl The weft extension: native pieces of the Weft application server (see README.md).
dnl Linux only (epoll); libssl and libcrypto (the OpenSSL that PHP's openssl extension uses) for weft_tls.c.

PHP_ARG_ENABLE([weft],
  [whether to enable the weft extension],
  [AS_HELP_STRING([--enable-weft], [Enable the weft extension (epoll event loop backend)])],
  [yes])

if test "$PHP_WEFT" != "no"; then
  AC_CHECK_HEADERS([sys/epoll.h], [], [AC_MSG_ERROR([weft needs <sys/epoll.h>: it is a Linux-only extension])])
  dnl epoll_pwait2() (glibc 2.35, Linux 5.11) takes a nanosecond timeout; without it waits round up to 1 ms.
  AC_CHECK_FUNCS([epoll_pwait2])
  AC_CHECK_HEADERS([sys/inotify.h], [], [AC_MSG_ERROR([weft needs <sys/inotify.h>: it is a Linux-only extension])])
  AC_CHECK_HEADERS([openssl/ssl.h], [], [AC_MSG_ERROR([weft needs the OpenSSL headers (Debian: libssl-dev) for its TLS session tickets])])
  PHP_ADD_LIBRARY(ssl, 1, WEFT_SHARED_LIBADD)
  PHP_ADD_LIBRARY(crypto, 1, WEFT_SHARED_LIBADD)
  PHP_SUBST(WEFT_SHARED_LIBADD)
  AC_DEFINE(HAVE_WEFT, 1, [ Have the weft extension ])
  PHP_NEW_EXTENSION(weft, weft.c weft_epoll.c weft_loop.c weft_hooks.c weft_hook_stream.c weft_hook_sleep.c weft_hook_exit.c weft_hook_dns.c weft_watchdog.c weft_deadline.c weft_curl.c weft_http.c weft_inotify.c weft_output.c weft_tls.c weft_state.c weft_conn.c weft_line.c weft_encode.c, $ext_shared,, [-DZEND_ENABLE_STATIC_TSRMLS_CACHE=1 -Werror -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers])
fi
