/*
 * Hooks for PHP socket streams (tcp, udp, unix, udg, ssl, tls): connect, read, write and the TLS
 * handshake wait through the loop when called inside a coroutine. mysqlnd (PDO MySQL, mysqli), phpredis,
 * the http:// wrapper, fsockopen() and stream_socket_client() all open their sockets through
 * _php_stream_xport_create(), so hooking the transport factories reaches them all.
 *
 * How: at MINIT the factories of those transports are re-registered with weft_stream_factory(), which
 * calls the original one and, when stream hooks are on, points stream->ops at a per-stream copy of the
 * original ops whose read/write/set_option/cast/close are wrappers. stream->abstract is kept as it is
 * (mysqlnd and phpredis cast it to php_netstream_data_t, the public first member of every socket
 * stream's data); while an original op runs, stream->ops is the original again, because xp_socket.c
 * tells udp from tcp by comparing it.
 *
 * A wrapped op that may suspend (weft_hook_can_suspend(STREAM), the stream in blocking mode as PHP sees
 * it) runs the original op with the socket non-blocking, and when that would block waits through
 * weft_hook_wait_fd() for at most the stream's own timeout, then retries; anywhere else the original op
 * runs unchanged, with the descriptor back in blocking mode.
 *
 * Safety while a coroutine is suspended inside an op of a stream:
 *  - another coroutine's op on the same stream fails with Weft\Coroutine\ConcurrentUse: a connection
 *    serves one coroutine at a time, and two would interleave their protocol streams;
 *  - the stream cannot be freed under the suspended op: stream->in_free is raised for the wait, which
 *    makes _php_stream_free() a no-op (its recursion guard). fclose() from another coroutine instead
 *    shuts the socket down, which wakes the waiter: its op fails ("closed by another coroutine").
 * With the DNS hook on too, the name lookup of a connect runs in a thread (weft_dns_resolve_first()).
 * Persistent streams (pfsockopen, PDO::ATTR_PERSISTENT, mysqli p:, phpredis pconnect) are not hooked:
 * two coroutines opening one persistent key would race on the persistent list. They block as before.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_network.h"
#include "php_streams.h"
#include "ext/standard/file.h"
#include "zend_exceptions.h"
#include "php_weft.h"
#include "weft_hooks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>

typedef struct {
	php_stream_ops ops;              /* first member: stream->ops points here while the stream is hooked */
	const php_stream_ops *orig;
	zend_fiber *owner;               /* the Fiber suspended in an op of this stream, or NULL */
	uint32_t crypto_method;          /* ssl:// and tls://: enable TLS after connecting (0: plain) */
	bool persistent;
	bool nonblocking;                /* the descriptor is O_NONBLOCK because of us */
	bool closed_by_other;            /* fclose() by another coroutine while owner was suspended */
	bool kept;                       /* waited with WEFT_WAIT_KEEP: the waiter must forget the fd at close */
	bool crypto_touched;             /* TLS was (or may have been) enabled on it: see weft_stream_set_option */
	bool sent;                       /* the last op was a write: the next read most likely waits for a reply */
} weft_stream_hook;

/* proto => original factory; written at MINIT only. */
static HashTable weft_stream_factories;
static bool weft_stream_factories_ready = false;
static zif_handler weft_orig_fclose = NULL;

static ssize_t weft_stream_read(php_stream *stream, char *buf, size_t count);
static ssize_t weft_stream_write(php_stream *stream, const char *buf, size_t count);
static int weft_stream_close(php_stream *stream, int close_handle);
static int weft_stream_set_option(php_stream *stream, int option, int value, void *ptrparam);
static int weft_stream_cast(php_stream *stream, int castas, void **ret);
static bool weft_stream_ops_known(const php_stream_ops *ops);
static void weft_stream_wrap(php_stream *stream, uint32_t crypto);

static inline bool weft_stream_is_hooked(const php_stream *stream)
{
	return stream->ops != NULL && stream->ops->read == weft_stream_read;
}

static inline weft_stream_hook *weft_hook_of(php_stream *stream)
{
	return (weft_stream_hook *) stream->ops; /* ops is the first member */
}

/* ---------------------------------------------------------------------------------------------------- */

static bool weft_set_fd_blocking(int fd, bool blocking)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0) {
		return false;
	}
	int wanted = blocking ? (flags & ~O_NONBLOCK) : (flags | O_NONBLOCK);
	return wanted == flags || fcntl(fd, F_SETFL, wanted) == 0;
}

/* Puts the descriptor back in blocking mode if we left it non-blocking and PHP thinks it blocks. */
static void weft_stream_restore_blocking(weft_stream_hook *h, php_netstream_data_t *sock)
{
	if (h->nonblocking && sock != NULL && sock->socket >= 0 && sock->is_blocked) {
		weft_set_fd_blocking(sock->socket, true);
	}
	h->nonblocking = false;
}

/*
 * Makes the descriptor non-blocking for a hooked op. h->nonblocking caches that it is; any original op
 * run while PHP's view is "blocking" forgets it (weft_orig_*), because original code that believes the
 * stream blocks (openssl's I/O loop, for one) puts the descriptor back to blocking when it is done, and
 * a read on a blocking descriptor would block the whole process.
 */
static bool weft_stream_make_nonblocking(weft_stream_hook *h, php_netstream_data_t *sock)
{
	if (!h->nonblocking) {
		if (!weft_set_fd_blocking(sock->socket, false)) {
			return false;
		}
		h->nonblocking = true;
	}
	return true;
}

/* After an original op that ran with PHP's "blocking" view: the descriptor's mode is unknown again. */
static inline void weft_stream_forget_mode(php_stream *stream, weft_stream_hook *h)
{
	php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
	if (sock == NULL || sock->is_blocked) {
		h->nonblocking = false;
	}
}

static double weft_sock_timeout(const php_netstream_data_t *sock)
{
	if (sock->timeout.tv_sec < 0) {
		return -1;
	}
	return (double) sock->timeout.tv_sec + (double) sock->timeout.tv_usec / 1e6;
}

/*
 * Whether this op may suspend: stream hooks on and a coroutine able to switch, a connected socket that
 * PHP considers blocking, and the stream not being freed. Throws ConcurrentUse (and returns false with
 * *refused set) when another coroutine is suspended in an op of this stream.
 */
static bool weft_stream_may_suspend(php_stream *stream, weft_stream_hook *h, php_netstream_data_t *sock, bool *refused)
{
	*refused = false;
	if (h->owner != NULL && h->owner != EG(active_fiber)) {
		/* Even outside a coroutine: whoever runs now would interleave with the suspended op. */
		weft_hook_throw_concurrent_use("stream", NULL, NULL, NULL);
		*refused = true;
		return false;
	}
	if (sock == NULL || sock->socket < 0 || !sock->is_blocked || stream->in_free != 0) {
		return false;
	}
	return weft_hook_can_suspend(WEFT_HOOK_STREAM);
}

/* The same for a connect: the socket does not exist yet. */
static bool weft_stream_may_suspend_connect(php_stream *stream, weft_stream_hook *h, bool *refused)
{
	php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
	*refused = false;
	if (h->owner != NULL && h->owner != EG(active_fiber)) {
		weft_hook_throw_concurrent_use("stream", NULL, NULL, NULL);
		*refused = true;
		return false;
	}
	if (sock == NULL || !sock->is_blocked || stream->in_free != 0) {
		return false;
	}
	return weft_hook_can_suspend(WEFT_HOOK_STREAM);
}

/*
 * Waits for the stream's descriptor; the caller has set up nothing else. While suspended, the stream
 * is marked as owned (other coroutines' ops fail) and cannot be freed (in_free: see the top comment).
 * Returns what weft_hook_wait_fd() returns, or -1 with a warning when another coroutine closed it.
 */
static int weft_stream_wait(php_stream *stream, weft_stream_hook *h, int fd, int events, double timeout)
{
	h->owner = EG(active_fiber);
	stream->in_free += 2;
	/* The close of this stream tells the waiter (weft_stream_close), so it may keep its watcher. */
	h->kept = true;
	int ready = weft_hook_wait_fd(fd, events | WEFT_WAIT_KEEP, timeout);
	stream->in_free -= 2;
	h->owner = NULL;
	if (h->closed_by_other) {
		if (ready >= 0) {
			php_error_docref(NULL, E_WARNING, "The stream was closed by another coroutine while this one waited on it");
		}
		stream->eof = 1;
		return -1;
	}
	return ready;
}

/* ---------------------------------------------------------------------------------------------------- */
/* ops */

static ssize_t weft_orig_read(php_stream *stream, weft_stream_hook *h, char *buf, size_t count)
{
	stream->ops = h->orig;
	ssize_t n = h->orig->read(stream, buf, count);
	stream->ops = &h->ops;
	weft_stream_forget_mode(stream, h);
	return n;
}

static ssize_t weft_orig_write(php_stream *stream, weft_stream_hook *h, const char *buf, size_t count)
{
	stream->ops = h->orig;
	ssize_t n = h->orig->write(stream, buf, count);
	stream->ops = &h->ops;
	weft_stream_forget_mode(stream, h);
	return n;
}

static int weft_orig_set_option(php_stream *stream, weft_stream_hook *h, int option, int value, void *ptrparam)
{
	if (h->orig->set_option == NULL) {
		return PHP_STREAM_OPTION_RETURN_NOTIMPL;
	}
	stream->ops = h->orig;
	int r = h->orig->set_option(stream, option, value, ptrparam);
	stream->ops = &h->ops;
	weft_stream_forget_mode(stream, h);
	return r;
}

static ssize_t weft_stream_read(php_stream *stream, char *buf, size_t count)
{
	weft_stream_hook *h = weft_hook_of(stream);
	php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
	bool refused;
	if (!weft_stream_may_suspend(stream, h, sock, &refused)) {
		if (refused) {
			return -1;
		}
		weft_stream_restore_blocking(h, sock);
		return weft_orig_read(stream, h, buf, count);
	}
	/*
	 * A read right after a write is a client waiting for the reply to what it just sent (a query, a
	 * command): on a plain socket it is almost never there yet, so wait first instead of paying for a
	 * recv() that says EAGAIN. The loop's readiness is level-triggered, so a reply that is already
	 * there only costs a loop pass. Not with TLS: OpenSSL may hold decrypted bytes the socket no longer shows.
	 */
	bool wait_first = h->sent && !h->crypto_touched && count > 0;
	h->sent = false;
	while (true) {
		if (!weft_stream_make_nonblocking(h, sock)) {
			weft_stream_restore_blocking(h, sock);
			return weft_orig_read(stream, h, buf, count);
		}
		if (wait_first) {
			wait_first = false; /* straight to the wait below, then read */
		} else {
			sock->is_blocked = 0;
			ssize_t n = weft_orig_read(stream, h, buf, count);
			sock->is_blocked = 1;
			if (n != 0 || stream->eof || count == 0) {
				return n;
			}
		}
		/* Nothing yet (EAGAIN): wait as the original would have blocked in poll(), for the stream's timeout. */
		sock->timeout_event = 0;
		int ready = weft_stream_wait(stream, h, sock->socket, WEFT_WAIT_READ, weft_sock_timeout(sock));
		if (ready < 0) {
			stream->eof = 1;
			return -1;
		}
		if (ready == 0) {
			sock->timeout_event = 1;
			return 0;
		}
	}
}

static ssize_t weft_stream_write(php_stream *stream, const char *buf, size_t count)
{
	weft_stream_hook *h = weft_hook_of(stream);
	php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
	bool refused;
	if (!weft_stream_may_suspend(stream, h, sock, &refused)) {
		if (refused) {
			return -1;
		}
		weft_stream_restore_blocking(h, sock);
		return weft_orig_write(stream, h, buf, count);
	}
	if (count == 0) {
		return 0; /* nothing to send (and nothing that may block) */
	}
	while (true) {
		if (!weft_stream_make_nonblocking(h, sock)) {
			weft_stream_restore_blocking(h, sock);
			return weft_orig_write(stream, h, buf, count);
		}
		sock->is_blocked = 0;
		ssize_t n = weft_orig_write(stream, h, buf, count);
		sock->is_blocked = 1;
		if (n != 0) {
			h->sent = n > 0;
			return n;
		}
		sock->timeout_event = 0;
		int ready = weft_stream_wait(stream, h, sock->socket, WEFT_WAIT_WRITE, weft_sock_timeout(sock));
		if (ready < 0) {
			return -1;
		}
		if (ready == 0) {
			/* What the original says when its poll() for writability times out. */
			sock->timeout_event = 1;
			php_error_docref(NULL, E_NOTICE, "Send of %zu bytes failed with errno=%d %s", count, EAGAIN, strerror(EAGAIN));
			return -1;
		}
	}
}

static int weft_stream_cast(php_stream *stream, int castas, void **ret)
{
	weft_stream_hook *h = weft_hook_of(stream);
	if (castas != PHP_STREAM_AS_FD_FOR_SELECT) {
		/* Someone takes the descriptor itself (ext/sockets, fdopen): hand it over in the mode PHP reports. */
		weft_stream_restore_blocking(h, (php_netstream_data_t *) stream->abstract);
	}
	if (h->orig->cast == NULL) {
		return FAILURE;
	}
	stream->ops = h->orig;
	int r = h->orig->cast(stream, castas, ret);
	stream->ops = &h->ops;
	return r;
}

static int weft_stream_close(php_stream *stream, int close_handle)
{
	weft_stream_hook *h = weft_hook_of(stream);
	if (h->kept) {
		/* Before the descriptor goes: its number may come back for another file. */
		php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
		if (sock != NULL && sock->socket >= 0) {
			weft_hook_forget_fd(sock->socket);
		}
	}
	/* From here on the stream is the original's again: _php_stream_free() may look at ops after close. */
	stream->ops = h->orig;
	int r = h->orig->close(stream, close_handle);
	pefree(h, h->persistent);
	return r;
}

/*
 * With the DNS hook on, a connect to host:port looks the name up in a thread first (the original's
 * getaddrinfo() would block the worker) and connects to the address found. Returns false when the
 * coroutine was cancelled meanwhile; *name is then untouched.
 */
static bool weft_stream_resolve(weft_stream_hook *h, php_stream_xport_param *xparam, char *buf, size_t buflen)
{
	const char *label = h->orig->label;
	if (strcmp(label, "unix_socket") == 0 || strcmp(label, "udg_socket") == 0 || !weft_hook_can_suspend(WEFT_HOOK_DNS)) {
		return true;
	}
	const char *name = xparam->inputs.name;
	size_t len = xparam->inputs.namelen;
	if (name == NULL || len == 0 || name[0] == '[') {
		return true; /* an IPv6 literal */
	}
	const char *colon = memchr(name, ':', len);
	if (colon == NULL || colon == name || memchr(colon + 1, ':', len - (size_t) (colon - name) - 1) != NULL) {
		return true; /* no port, or not host:port: the original reports it */
	}
	size_t hostlen = (size_t) (colon - name);
	char host[256];
	if (hostlen >= sizeof(host)) {
		return true;
	}
	memcpy(host, name, hostlen);
	host[hostlen] = '\0';
	struct in_addr in4;
	if (inet_pton(AF_INET, host, &in4) == 1) {
		return true;
	}
	char addr[INET6_ADDRSTRLEN + 2];
	int found = weft_dns_resolve_first(host, hostlen, addr, sizeof(addr));
	if (found < 0) {
		return false;
	}
	if (found == 1) {
		int n = snprintf(buf, buflen, "%s%.*s", addr, (int) (len - hostlen), colon);
		if (n > 0 && (size_t) n < buflen) {
			xparam->inputs.name = buf;
			xparam->inputs.namelen = (size_t) n;
		}
	}
	return true;
}

/* Connect without blocking: start it asynchronously, wait until writable, then read SO_ERROR. */
static void weft_stream_connect(php_stream *stream, weft_stream_hook *h, php_stream_xport_param *xparam)
{
	php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
	char resolved[INET6_ADDRSTRLEN + 16];
	char *name = xparam->inputs.name;
	size_t namelen = xparam->inputs.namelen;
	if (!weft_stream_resolve(h, xparam, resolved, sizeof(resolved))) {
		xparam->outputs.returncode = -1;
		xparam->outputs.error_code = ECONNABORTED;
		return;
	}
	xparam->op = STREAM_XPORT_OP_CONNECT_ASYNC;
	(void) weft_orig_set_option(stream, h, PHP_STREAM_OPTION_XPORT_API, 0, xparam);
	xparam->op = STREAM_XPORT_OP_CONNECT;
	xparam->inputs.name = name;
	xparam->inputs.namelen = namelen;
	if (sock->socket >= 0) {
		int flags = fcntl(sock->socket, F_GETFL);
		h->nonblocking = flags >= 0 && (flags & O_NONBLOCK) != 0;
	}
	if (xparam->outputs.returncode != 1) {
		return; /* connected at once (unix sockets, often), or failed: as the original would report */
	}
	double timeout = xparam->inputs.timeout != NULL
		? (double) xparam->inputs.timeout->tv_sec + (double) xparam->inputs.timeout->tv_usec / 1e6 : -1;
	int ready = weft_stream_wait(stream, h, sock->socket, WEFT_WAIT_WRITE, timeout);
	int err = 0;
	if (ready < 0) {
		err = ECONNABORTED;
	} else if (ready == 0) {
		err = ETIMEDOUT;
	} else {
		socklen_t len = sizeof(err);
		if (getsockopt(sock->socket, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
			err = errno;
		}
	}
	if (err == 0) {
		xparam->outputs.returncode = 0;
		xparam->outputs.error_code = 0;
		return;
	}
	xparam->outputs.returncode = -1;
	xparam->outputs.error_code = err;
	if (xparam->want_errortext && EG(exception) == NULL) {
		if (xparam->outputs.error_text != NULL) {
			zend_string_release(xparam->outputs.error_text);
		}
		xparam->outputs.error_text = err == ETIMEDOUT ? zend_string_init("Connection timed out", sizeof("Connection timed out") - 1, 0)
			: zend_string_init(strerror(err), strlen(strerror(err)), 0);
	}
}

/* The TLS handshake in non-blocking steps: the original returns 0 while it would block. */
static int weft_stream_enable_crypto(php_stream *stream, weft_stream_hook *h, int option, int value, php_stream_xport_crypto_param *cparam)
{
	php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
	double timeout = weft_sock_timeout(sock);
	while (true) {
		if (!weft_stream_make_nonblocking(h, sock)) {
			return weft_orig_set_option(stream, h, option, value, cparam);
		}
		sock->is_blocked = 0;
		int r = weft_orig_set_option(stream, h, option, value, cparam);
		/* The handshake restores the blocking flag it found (0); PHP's view is blocking. */
		sock->is_blocked = 1;
		if (r != PHP_STREAM_OPTION_RETURN_OK || cparam->outputs.returncode != 0) {
			return r;
		}
		int ready = weft_stream_wait(stream, h, sock->socket, WEFT_WAIT_READ, timeout);
		if (ready <= 0) {
			if (ready == 0) {
				php_error_docref(NULL, E_WARNING, "SSL: Handshake timed out");
			}
			cparam->outputs.returncode = -1;
			return PHP_STREAM_OPTION_RETURN_OK;
		}
	}
}

static int weft_stream_set_option(php_stream *stream, int option, int value, void *ptrparam)
{
	weft_stream_hook *h = weft_hook_of(stream);
	php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;

	if (option == PHP_STREAM_OPTION_BLOCKING) {
		/* The application changes the mode: from now on the descriptor's mode is the one it asked for. */
		int r = weft_orig_set_option(stream, h, option, value, ptrparam);
		h->nonblocking = false;
		return r;
	}
	if (option == PHP_STREAM_OPTION_XPORT_API && ptrparam != NULL) {
		php_stream_xport_param *xparam = (php_stream_xport_param *) ptrparam;
		if (xparam->op == STREAM_XPORT_OP_CONNECT) {
			bool refused;
			if (weft_stream_may_suspend_connect(stream, h, &refused)) {
				weft_stream_connect(stream, h, xparam);
				if (xparam->outputs.returncode == 0 && h->crypto_method != 0 && EG(exception) == NULL) {
					/* ssl://, tls://: what the original transport does on connect, without blocking. */
					if (php_stream_xport_crypto_setup(stream, (php_stream_xport_crypt_method_t) h->crypto_method, NULL) < 0
						|| php_stream_xport_crypto_enable(stream, 1) < 0) {
						php_error_docref(NULL, E_WARNING, "Failed to enable crypto");
						xparam->outputs.returncode = -1;
					}
				}
				return PHP_STREAM_OPTION_RETURN_OK;
			}
			if (refused) {
				xparam->outputs.returncode = -1;
				return PHP_STREAM_OPTION_RETURN_OK;
			}
			weft_stream_restore_blocking(h, sock);
			int r = weft_orig_set_option(stream, h, option, value, ptrparam);
			if (r == PHP_STREAM_OPTION_RETURN_OK && xparam->outputs.returncode == 0 && h->crypto_method != 0) {
				if (php_stream_xport_crypto_setup(stream, (php_stream_xport_crypt_method_t) h->crypto_method, NULL) < 0
					|| php_stream_xport_crypto_enable(stream, 1) < 0) {
					php_error_docref(NULL, E_WARNING, "Failed to enable crypto");
					xparam->outputs.returncode = -1;
				}
			}
			return r;
		}
	}
	if (option == PHP_STREAM_OPTION_CRYPTO_API && ptrparam != NULL) {
		php_stream_xport_crypto_param *cparam = (php_stream_xport_crypto_param *) ptrparam;
		bool refused;
		if (cparam->op == STREAM_XPORT_CRYPTO_OP_ENABLE) {
			h->crypto_touched = true;
		}
		if (cparam->op == STREAM_XPORT_CRYPTO_OP_ENABLE && cparam->inputs.activate) {
			if (weft_stream_may_suspend(stream, h, sock, &refused)) {
				return weft_stream_enable_crypto(stream, h, option, value, cparam);
			}
			if (refused) {
				cparam->outputs.returncode = -1;
				return PHP_STREAM_OPTION_RETURN_OK;
			}
		}
		weft_stream_restore_blocking(h, sock);
		return weft_orig_set_option(stream, h, option, value, ptrparam);
	}
	if (option == PHP_STREAM_OPTION_XPORT_API && ptrparam != NULL
		&& ((php_stream_xport_param *) ptrparam)->op == STREAM_XPORT_OP_ACCEPT) {
		/* stream_socket_accept(): wait for a connection through the loop (with the accept timeout), then
		 * accept it; the new stream is hooked like one this process opened. */
		php_stream_xport_param *xparam = (php_stream_xport_param *) ptrparam;
		bool refused;
		if (weft_stream_may_suspend(stream, h, sock, &refused)) {
			double timeout = xparam->inputs.timeout != NULL
				? (double) xparam->inputs.timeout->tv_sec + (double) xparam->inputs.timeout->tv_usec / 1e6 : -1;
			int ready = weft_stream_wait(stream, h, sock->socket, WEFT_WAIT_READ, timeout);
			if (ready <= 0) {
				xparam->outputs.client = NULL;
				xparam->outputs.returncode = -1;
				if (ready == 0) {
					xparam->outputs.error_code = ETIMEDOUT;
					if (xparam->want_errortext) {
						xparam->outputs.error_text = zend_string_init("Connection timed out", sizeof("Connection timed out") - 1, 0);
					}
				}
				return PHP_STREAM_OPTION_RETURN_OK;
			}
		} else if (refused) {
			xparam->outputs.client = NULL;
			xparam->outputs.returncode = -1;
			return PHP_STREAM_OPTION_RETURN_OK;
		}
		weft_stream_restore_blocking(h, sock);
		int r = weft_orig_set_option(stream, h, option, value, ptrparam);
		php_stream *client = xparam->outputs.client;
		if (client != NULL && !client->is_persistent && weft_stream_ops_known(client->ops)
			&& (weft_hooks_enabled_kinds() & WEFT_HOOK_STREAM) != 0) {
			weft_stream_wrap(client, 0);
		}
		return r;
	}
	if (option == PHP_STREAM_OPTION_XPORT_API && ptrparam != NULL
		&& ((php_stream_xport_param *) ptrparam)->op == STREAM_XPORT_OP_RECV) {
		/* stream_socket_recvfrom(): wait until there is something to receive, then receive it. */
		php_stream_xport_param *xparam = (php_stream_xport_param *) ptrparam;
		bool refused;
		if (weft_stream_may_suspend(stream, h, sock, &refused) && !(xparam->inputs.flags & STREAM_PEEK)) {
			int ready = weft_stream_wait(stream, h, sock->socket, WEFT_WAIT_READ, -1);
			if (ready < 0) {
				xparam->outputs.returncode = -1;
				return PHP_STREAM_OPTION_RETURN_OK;
			}
		} else if (refused) {
			xparam->outputs.returncode = -1;
			return PHP_STREAM_OPTION_RETURN_OK;
		}
	}
	/* What only polls or reads state works in either mode; the rest (recvfrom/sendto, shutdown, options
	 * of other layers) sees the descriptor in the mode PHP reports. */
	if (option != PHP_STREAM_OPTION_READ_TIMEOUT && option != PHP_STREAM_OPTION_META_DATA_API
		&& option != PHP_STREAM_OPTION_CHECK_LIVENESS && option != PHP_STREAM_OPTION_READ_BUFFER
		&& option != PHP_STREAM_OPTION_WRITE_BUFFER) {
		weft_stream_restore_blocking(h, sock);
		return weft_orig_set_option(stream, h, option, value, ptrparam);
	}
	if (h->orig->set_option == NULL) {
		return PHP_STREAM_OPTION_RETURN_NOTIMPL;
	}
	/* Without TLS these are answered without touching the descriptor's mode (tcp:// is openssl's
	 * transport too, but its liveness check is then a plain poll and MSG_PEEK), so the cached
	 * "non-blocking" holds: phpredis checks liveness before every command, and forgetting it would cost
	 * fcntl() calls per command. With TLS on, openssl's check may set the mode again: forget there. */
	stream->ops = h->orig;
	int r = h->orig->set_option(stream, option, value, ptrparam);
	stream->ops = &h->ops;
	if (h->crypto_touched) {
		weft_stream_forget_mode(stream, h);
	}
	return r;
}

/* ---------------------------------------------------------------------------------------------------- */
/* factories */

/* The transports whose streams are plain sockets with a php_netstream_data_t first in their data. */
static bool weft_stream_ops_known(const php_stream_ops *ops)
{
	static const char *const labels[] = {"tcp_socket", "udp_socket", "unix_socket", "udg_socket", "tcp_socket/ssl"};
	if (ops == NULL || ops->label == NULL || ops->read == NULL || ops->write == NULL || ops->close == NULL) {
		return false;
	}
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		if (strcmp(ops->label, labels[i]) == 0) {
			return true;
		}
	}
	return false;
}

static php_stream_transport_factory weft_original_factory(const char *proto, size_t protolen)
{
	return zend_hash_str_find_ptr(&weft_stream_factories, proto, protolen);
}

static uint32_t weft_crypto_method(php_stream_context *context)
{
	uint32_t method = STREAM_CRYPTO_METHOD_TLS_ANY_CLIENT;
	zval *val;
	if (context != NULL && (val = php_stream_context_get_option(context, "ssl", "crypto_method")) != NULL) {
		method = (uint32_t) zval_get_long(val) | 1u; /* a client method, as the openssl transport makes it */
	}
	return method;
}

/* Points the stream at a hooked copy of its ops (the caller checked weft_stream_ops_known()). */
static void weft_stream_wrap(php_stream *stream, uint32_t crypto)
{
	weft_stream_hook *h = pemalloc(sizeof(*h), 0);
	memcpy(&h->ops, stream->ops, sizeof(php_stream_ops));
	h->orig = stream->ops;
	h->owner = NULL;
	h->crypto_method = crypto;
	h->persistent = false;
	h->nonblocking = false;
	h->closed_by_other = false;
	h->kept = false;
	h->crypto_touched = crypto != 0;
	h->sent = false;
	h->ops.read = weft_stream_read;
	h->ops.write = weft_stream_write;
	h->ops.close = weft_stream_close;
	h->ops.set_option = h->orig->set_option != NULL ? weft_stream_set_option : NULL;
	h->ops.cast = h->orig->cast != NULL ? weft_stream_cast : NULL;
	stream->ops = &h->ops;
}

static php_stream *weft_stream_factory(const char *proto, size_t protolen,
	const char *resourcename, size_t resourcenamelen, const char *persistent_id, int options, int flags,
	struct timeval *timeout, php_stream_context *context STREAMS_DC)
{
	bool hook = persistent_id == NULL && (weft_hooks_enabled_kinds() & WEFT_HOOK_STREAM) != 0;
	uint32_t crypto = 0;
	const char *use = proto;
	size_t uselen = protolen;
	if (hook && ((protolen == 3 && strncmp(proto, "ssl", 3) == 0) || (protolen == 3 && strncmp(proto, "tls", 3) == 0))
		&& weft_original_factory("tcp", 3) != NULL) {
		/* The openssl transport's tcp:// stream, with the handshake done by us after the connect. */
		use = "tcp";
		uselen = 3;
		crypto = weft_crypto_method(context);
	}
	php_stream_transport_factory original = weft_original_factory(use, uselen);
	if (original == NULL) {
		return NULL; /* cannot happen: only registered protocols lead here */
	}
	php_stream *stream = original(use, uselen, resourcename, resourcenamelen, persistent_id, options, flags, timeout, context STREAMS_REL_CC);
	if (stream == NULL || !hook) {
		return stream;
	}
	if (!weft_stream_ops_known(stream->ops) || (crypto != 0 && strcmp(stream->ops->label, "tcp_socket/ssl") != 0)) {
		if (crypto != 0) {
			/* Not the openssl transport after all: start again with the original ssl/tls one. */
			php_stream_close(stream);
			original = weft_original_factory(proto, protolen);
			return original != NULL ? original(proto, protolen, resourcename, resourcenamelen, persistent_id, options, flags, timeout, context STREAMS_REL_CC) : NULL;
		}
		return stream;
	}
	weft_stream_wrap(stream, crypto);
	return stream;
}

/* fclose() of a stream another coroutine is suspended on: wake that coroutine with an error. */
static ZEND_NAMED_FUNCTION(weft_fclose)
{
	if (ZEND_NUM_ARGS() == 1) {
		zval *arg = ZEND_CALL_ARG(execute_data, 1);
		ZVAL_DEREF(arg);
		if (Z_TYPE_P(arg) == IS_RESOURCE && Z_RES_P(arg)->type == php_file_le_stream()) {
			php_stream *stream = (php_stream *) Z_RES_P(arg)->ptr;
			if (stream != NULL && weft_stream_is_hooked(stream)) {
				weft_stream_hook *h = weft_hook_of(stream);
				php_netstream_data_t *sock = (php_netstream_data_t *) stream->abstract;
				if (h->owner != NULL && h->owner != EG(active_fiber)) {
					/* The stream cannot be freed under the suspended op (see the top comment): end the
					 * connection, which wakes the op; the resource goes when its last reference does. */
					h->closed_by_other = true;
					if (sock != NULL && sock->socket >= 0) {
						shutdown(sock->socket, SHUT_RDWR);
					}
				}
			}
		}
	}
	weft_orig_fclose(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

zend_result weft_hook_stream_minit(void)
{
	static const char *const protos[] = {"tcp", "udp", "unix", "udg", "ssl", "tls"};
	HashTable *xports = php_stream_xport_get_hash();
	zend_hash_init(&weft_stream_factories, 8, NULL, NULL, 1);
	weft_stream_factories_ready = true;
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		php_stream_transport_factory original = zend_hash_str_find_ptr(xports, protos[i], strlen(protos[i]));
		if (original == NULL || original == weft_stream_factory) {
			continue;
		}
		zend_hash_str_add_new_ptr(&weft_stream_factories, protos[i], strlen(protos[i]), (void *) original);
		php_stream_xport_register(protos[i], weft_stream_factory);
	}
	weft_orig_fclose = weft_hooks_replace_function("fclose", weft_fclose);
	weft_hooks_declare_available(WEFT_HOOK_STREAM);
	return SUCCESS;
}

void weft_hook_stream_mshutdown(void)
{
	if (weft_orig_fclose != NULL) {
		weft_hooks_replace_function("fclose", weft_orig_fclose);
		weft_orig_fclose = NULL;
	}
	if (!weft_stream_factories_ready) {
		return;
	}
	zend_string *proto;
	void *original;
	ZEND_HASH_FOREACH_STR_KEY_PTR(&weft_stream_factories, proto, original) {
		php_stream_xport_register(ZSTR_VAL(proto), (php_stream_transport_factory) original);
	} ZEND_HASH_FOREACH_END();
	zend_hash_destroy(&weft_stream_factories);
	weft_stream_factories_ready = false;
}
