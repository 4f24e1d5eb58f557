/*
 * gethostbyname() and gethostbynamel() resolve in a thread while the calling coroutine waits on an
 * eventfd through the loop. The thread owns nothing of PHP: it gets a copy of the name and hands back a
 * getaddrinfo() result; whichever of the thread and the waiter lets go last frees the job, so a
 * coroutine cancelled mid-lookup leaves nothing behind but a thread that finishes on its own.
 *
 * IP literals and invalid names take the original path (it answers without a lookup, or with its own
 * warning). weft_dns_resolve_first() serves the stream hooks: a connect to tcp://host:port resolves the
 * host here first and connects to its first address (the original would try each address in turn).
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_weft.h"
#include "weft_hooks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#ifndef MAXFQDNLEN
# define MAXFQDNLEN 255
#endif

typedef struct {
	atomic_int refs;          /* the thread and the waiter */
	int efd;                  /* written by the thread when the lookup is done */
	char *host;
	int family;               /* AF_INET (gethostbyname) or AF_UNSPEC (stream connects) */
	int status;               /* getaddrinfo()'s */
	struct addrinfo *result;
} weft_dns_job;

static zif_handler weft_orig_gethostbyname = NULL;
static zif_handler weft_orig_gethostbynamel = NULL;

static void weft_dns_job_release(weft_dns_job *job)
{
	if (atomic_fetch_sub(&job->refs, 1) == 1) {
		if (job->result != NULL) {
			freeaddrinfo(job->result);
		}
		close(job->efd);
		free(job->host);
		free(job);
	}
}

static void *weft_dns_thread(void *arg)
{
	weft_dns_job *job = (weft_dns_job *) arg;
	struct addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = job->family;
	hints.ai_socktype = SOCK_STREAM;
	job->status = getaddrinfo(job->host, NULL, &hints, &job->result);
	uint64_t one = 1;
	ssize_t written;
	do {
		written = write(job->efd, &one, sizeof(one));
	} while (written < 0 && errno == EINTR);
	weft_dns_job_release(job);
	return NULL;
}

/*
 * Resolves in a thread, suspending the coroutine meanwhile. Returns the job (the caller releases it)
 * with status/result set, or NULL: with EG(exception) set when the coroutine was cancelled, without
 * when the thread could not be started (the caller then runs the original).
 */
static weft_dns_job *weft_dns_resolve(const char *host, size_t len, int family)
{
	weft_dns_job *job = calloc(1, sizeof(*job));
	if (job == NULL) {
		return NULL;
	}
	job->family = family;
	job->host = strndup(host, len);
	job->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (job->host == NULL || job->efd < 0) {
		if (job->efd >= 0) {
			close(job->efd);
		}
		free(job->host);
		free(job);
		return NULL;
	}
	atomic_init(&job->refs, 2);
	pthread_attr_t attr;
	pthread_t thread;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int err = pthread_create(&thread, &attr, weft_dns_thread, job);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		atomic_store(&job->refs, 1);
		weft_dns_job_release(job);
		return NULL;
	}
	/* Wait first, even if the thread is quick: the call then always lets the other coroutines run (and
	 * a cancellation always finds it suspended), whatever the resolver's speed. */
	while (true) {
		if (weft_hook_wait_fd(job->efd, WEFT_WAIT_READ, -1) < 0) {
			weft_dns_job_release(job); /* cancelled: the thread frees the job when it is done */
			return NULL;
		}
		uint64_t value;
		if (read(job->efd, &value, sizeof(value)) == (ssize_t) sizeof(value)) {
			return job;
		}
	}
}

/* A name for the lookup thread: a string of a length the original accepts, and not an IP literal. */
static bool weft_dns_takes(zend_execute_data *execute_data, zend_string **name)
{
	if (ZEND_NUM_ARGS() != 1 || !weft_hook_can_suspend(WEFT_HOOK_DNS)) {
		return false;
	}
	zval *arg = ZEND_CALL_ARG(execute_data, 1);
	ZVAL_DEREF(arg);
	if (Z_TYPE_P(arg) != IS_STRING || Z_STRLEN_P(arg) == 0 || Z_STRLEN_P(arg) > MAXFQDNLEN
		|| memchr(Z_STRVAL_P(arg), '\0', Z_STRLEN_P(arg)) != NULL) {
		return false;
	}
	struct in_addr in;
	if (inet_pton(AF_INET, Z_STRVAL_P(arg), &in) == 1) {
		return false;
	}
	*name = Z_STR_P(arg);
	return true;
}

static ZEND_NAMED_FUNCTION(weft_gethostbyname)
{
	zend_string *name;
	if (!weft_dns_takes(execute_data, &name)) {
		weft_orig_gethostbyname(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	weft_dns_job *job = weft_dns_resolve(ZSTR_VAL(name), ZSTR_LEN(name), AF_INET);
	if (job == NULL) {
		if (EG(exception) != NULL) {
			RETURN_THROWS();
		}
		weft_orig_gethostbyname(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	char text[INET_ADDRSTRLEN];
	if (job->status == 0 && job->result != NULL && job->result->ai_family == AF_INET
		&& inet_ntop(AF_INET, &((struct sockaddr_in *) job->result->ai_addr)->sin_addr, text, sizeof(text)) != NULL) {
		RETVAL_STRING(text);
	} else {
		RETVAL_STR_COPY(name); /* as the original: the name itself on failure */
	}
	weft_dns_job_release(job);
}

static ZEND_NAMED_FUNCTION(weft_gethostbynamel)
{
	zend_string *name;
	if (!weft_dns_takes(execute_data, &name)) {
		weft_orig_gethostbynamel(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	weft_dns_job *job = weft_dns_resolve(ZSTR_VAL(name), ZSTR_LEN(name), AF_INET);
	if (job == NULL) {
		if (EG(exception) != NULL) {
			RETURN_THROWS();
		}
		weft_orig_gethostbynamel(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	if (job->status != 0 || job->result == NULL) {
		weft_dns_job_release(job);
		RETURN_FALSE;
	}
	array_init(return_value);
	for (struct addrinfo *ai = job->result; ai != NULL; ai = ai->ai_next) {
		char text[INET_ADDRSTRLEN];
		if (ai->ai_family != AF_INET
			|| inet_ntop(AF_INET, &((struct sockaddr_in *) ai->ai_addr)->sin_addr, text, sizeof(text)) == NULL) {
			continue;
		}
		bool seen = false;
		zval *entry;
		ZEND_HASH_FOREACH_VAL(Z_ARRVAL_P(return_value), entry) {
			if (Z_TYPE_P(entry) == IS_STRING && strcmp(Z_STRVAL_P(entry), text) == 0) {
				seen = true;
				break;
			}
		} ZEND_HASH_FOREACH_END();
		if (!seen) {
			add_next_index_string(return_value, text);
		}
	}
	weft_dns_job_release(job);
}

int weft_dns_resolve_first(const char *host, size_t len, char *out, size_t outlen)
{
	weft_dns_job *job = weft_dns_resolve(host, len, AF_UNSPEC);
	if (job == NULL) {
		return EG(exception) != NULL ? -1 : 0;
	}
	int found = 0;
	for (struct addrinfo *ai = job->status == 0 ? job->result : NULL; ai != NULL && !found; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			found = inet_ntop(AF_INET, &((struct sockaddr_in *) ai->ai_addr)->sin_addr, out, (socklen_t) outlen) != NULL;
		} else if (ai->ai_family == AF_INET6 && outlen > 2) {
			/* Bracketed, as the transports parse it: [addr]:port */
			if (inet_ntop(AF_INET6, &((struct sockaddr_in6 *) ai->ai_addr)->sin6_addr, out + 1, (socklen_t) outlen - 2) != NULL) {
				size_t n = strlen(out + 1);
				out[0] = '[';
				out[n + 1] = ']';
				out[n + 2] = '\0';
				found = 1;
			}
		}
	}
	weft_dns_job_release(job);
	return found;
}

zend_result weft_hook_dns_minit(void)
{
	weft_orig_gethostbyname = weft_hooks_replace_function("gethostbyname", weft_gethostbyname);
	weft_orig_gethostbynamel = weft_hooks_replace_function("gethostbynamel", weft_gethostbynamel);
	if (weft_orig_gethostbyname == NULL || weft_orig_gethostbynamel == NULL) {
		weft_hook_dns_mshutdown();
		return SUCCESS;
	}
	weft_hooks_declare_available(WEFT_HOOK_DNS);
	return SUCCESS;
}

void weft_hook_dns_mshutdown(void)
{
	if (weft_orig_gethostbyname != NULL) {
		weft_hooks_replace_function("gethostbyname", weft_orig_gethostbyname);
		weft_orig_gethostbyname = NULL;
	}
	if (weft_orig_gethostbynamel != NULL) {
		weft_hooks_replace_function("gethostbynamel", weft_orig_gethostbynamel);
		weft_orig_gethostbynamel = NULL;
	}
}
