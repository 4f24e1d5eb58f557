/*
 * The contract between the hooks of the weft extension and the one wait primitive of Weft.
 *
 * A hook (a stream op, sleep, curl, ...) that would block asks weft_hook_can_suspend() first. When it
 * says no (hooks off for that kind, no waiter installed by PHP, no active Fiber, the Fiber being
 * destroyed, zend_fiber_switch_blocked(): GC destructors, shutdown), the hook runs the original code,
 * which blocks exactly as without Weft. When it says yes, the hook makes its descriptor non-blocking
 * for the call and waits through weft_hook_wait_fd() / weft_hook_wait_fds(), which suspend the current
 * coroutine (by calling the waiter that Weft's PHP side installed) until the loop sees the descriptor
 * ready, the timeout passes, or the coroutine is cancelled.
 */
#ifndef WEFT_HOOKS_H
#define WEFT_HOOKS_H

#include "php.h"
#include <poll.h>
#include <stdbool.h>

/* Kinds of hook, one bit each; `--hooks all|none|LIST` selects them. */
#define WEFT_HOOK_STREAM 0x01u /* PHP socket streams: tcp, unix, udp, ssl/tls (mysqlnd, phpredis, http wrapper) */
#define WEFT_HOOK_SLEEP  0x02u /* sleep, usleep, time_nanosleep */
#define WEFT_HOOK_CURL   0x04u /* curl_exec, curl_multi_* */
#define WEFT_HOOK_DNS    0x08u /* gethostbyname, gethostbynamel, name lookups of stream connects */
#define WEFT_HOOK_EXIT   0x10u /* exit()/die() inside a coroutine ends that request, not the worker */
#define WEFT_HOOK_ALL    0x1Fu

/* Events for weft_hook_wait_fd(). */
#define WEFT_WAIT_READ  0x01
#define WEFT_WAIT_WRITE 0x02
/*
 * With READ or WRITE: fd belongs to a hooked stream that calls weft_hook_forget_fd() before it closes
 * it, so the waiter may keep its loop watcher (and the kernel's registration) between waits instead of
 * adding and removing it for each one.
 */
#define WEFT_WAIT_KEEP  0x04
/*
 * Passed to the waiter, never by a hook, and only when the native loop (Hooks::idleLoop()) says it is
 * idle (weft_loop_idle_wanted(), weft_loop.c: the one place that decides, with its back-off): the waiter
 * may answer true, "the calling coroutine may hold the loop" (what only PHP's scheduler knows), instead
 * of waiting. The hook then polls its descriptor together with the loop's own in this thread
 * (weft_loop_idle_poll()), without a Fiber switch or any PHP code; whatever would end the loop's wait
 * (another descriptor ready, a signal, the next timer) ends this poll too, and the hook then calls the
 * waiter again, without this flag, to wait the usual way.
 */
#define WEFT_WAIT_IDLE  0x08

/* Whether a hook of this kind may suspend the current coroutine right now (see above). Cheap. */
bool weft_hook_can_suspend(uint32_t kind);

/*
 * Suspends the current coroutine until fd is ready for `events` (WEFT_WAIT_READ | WEFT_WAIT_WRITE),
 * at most `timeout` seconds (timeout < 0: no limit). Call only after weft_hook_can_suspend() said yes.
 * Returns the ready events (> 0; WEFT_WAIT_READ is also reported on hang-up or error, as poll does),
 * 0 when the timeout passed, -1 when the coroutine was cancelled or the wait failed: EG(exception) is
 * then set, and the hook must fail its operation (and discard its connection) without touching the
 * descriptor again beyond closing it.
 */
int weft_hook_wait_fd(int fd, int events, double timeout);

/*
 * The same for several descriptors at once, with poll(2)'s struct: waits until any is ready and sets
 * each revents (POLLIN / POLLOUT, POLLERR/POLLHUP reported as readable). Returns how many are ready,
 * 0 on timeout, -1 with EG(exception) set. n == 0 is a plain sleep of `timeout` seconds.
 */
int weft_hook_wait_fds(struct pollfd *fds, int n, double timeout);

/*
 * fd, waited on with WEFT_WAIT_KEEP, is about to be closed: the waiter drops what it kept for it (its
 * number may come back for another file). Call while fd is still open. Never throws; keeps a pending
 * exception.
 */
void weft_hook_forget_fd(int fd);

/*
 * What only PHP knows, asked through the closures Hooks::install() handed over (see weft_hooks.c), so
 * that no hook looks a PHP class up by name or writes a PHP exception's text:
 * weft_hook_in_coroutine(): whether a Weft coroutine runs now (a Fiber alone is not one). False while no
 *   waiter is installed or an exception is pending.
 * weft_hook_exited(): shows the exception that exit() is about to throw into the coroutine to PHP first.
 *   Never throws.
 * weft_hook_throw_concurrent_use(): throws the error for a second user of a connection or handle that
 *   another coroutine is suspended on (Weft\Coroutine\ConcurrentUse, whose class writes the message):
 *   `hook` is "stream" or "curl", `call` the hooked function (NULL for a stream op), `handle` the
 *   handle's class (NULL: a connection), `holder_call` where the holder is suspended (NULL: unknown).
 *   Does nothing when an exception is pending already.
 */
bool weft_hook_in_coroutine(void);
void weft_hook_exited(zend_object *exit);
void weft_hook_throw_concurrent_use(const char *hook, const char *call, const char *handle, const char *holder_call);

/* A module that can hook a kind says so at MINIT (Weft\Ext\Hooks::available() lists it; enable()
 * ignores kinds nobody declared). */
void weft_hooks_declare_available(uint32_t kinds);

/* The kinds enabled now (0 while no waiter is installed). */
uint32_t weft_hooks_enabled_kinds(void);

#endif
