/*
 * The native event loop's C API (weft_loop.c): native code registers C handlers on the same loop that
 * runs the PHP watchers (Weft\Loop\NativeDriver), without a PHP call per event.
 *
 * A C watcher is a watcher like any other: it has an id (N + 1 for the PHP id "w<N>", so that 0 can mean
 * "failed"; handlers receive the same id), it counts in
 * watcherCount(), it keeps run() going while enabled and referenced, and enable/disable/reference/
 * unreference/cancel work on it by id from C (below) and from PHP ("w<N>"). Its handler runs from the
 * loop's dispatch, never from inside the call that registers it, exactly where a PHP callback of the same
 * kind would run (same order rules: deferred before the wait, timers by expiry then creation).
 *
 * A handler may call any function of this API, including cancel() of its own watcher, and may call PHP
 * code. If it leaves an exception in EG(exception), the loop treats it like a PHP callback's: it goes to
 * the error handler, or stops run() and is rethrown.
 *
 * The caller owns the descriptor of an fd watcher: cancel the watcher before closing it.
 */
#ifndef WEFT_LOOP_H
#define WEFT_LOOP_H

#include "php.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct weft_loop weft_loop;

#define WEFT_LOOP_READ  0x01u
#define WEFT_LOOP_WRITE 0x02u

/* An fd watcher's handler: `events` is WEFT_LOOP_READ or WEFT_LOOP_WRITE (hang-ups and errors wake both). */
typedef void (*weft_loop_fd_handler)(weft_loop *loop, zend_ulong id, int fd, uint32_t events, void *data);
/* A timer's or a deferred call's handler. */
typedef void (*weft_loop_handler)(weft_loop *loop, zend_ulong id, void *data);
/* Called once when a C watcher is gone (cancelled, a delay that fired, a deferred call that ran, the loop
 * freed), after its last handler call: release `data` here. May be NULL. */
typedef void (*weft_loop_release)(void *data);

/* The loop behind a Weft\Ext\Loop object (a NativeDriver), or NULL for any other object. */
weft_loop *weft_loop_from_object(zend_object *object);
/* The loop's PHP object (not referenced). */
zend_object *weft_loop_object(weft_loop *loop);

/* A watcher on a raw descriptor for one direction (WEFT_LOOP_READ or WEFT_LOOP_WRITE): its id, or 0 with
 * an exception (a descriptor epoll refuses other than a regular file, which is always ready). */
zend_ulong weft_loop_add_fd(weft_loop *loop, int fd, uint32_t direction, weft_loop_fd_handler handler, void *data, weft_loop_release release);
/* A timer: fires once after `seconds`, or every `seconds` (re-armed relative to its handler's call). */
zend_ulong weft_loop_add_timer(weft_loop *loop, double seconds, bool repeat, weft_loop_handler handler, void *data, weft_loop_release release);
/* A deferred call: runs once, before the loop waits for I/O again. */
zend_ulong weft_loop_add_defer(weft_loop *loop, weft_loop_handler handler, void *data, weft_loop_release release);
/* The loop's time of this tick in nanoseconds (what its PHP now() returns, in seconds). */
uint64_t weft_loop_now_ns(const weft_loop *loop);

/* By id, for C and PHP watchers alike. Return false for an unknown id (cancel: no-op), never throw,
 * except enable() of an fd watcher whose descriptor epoll refuses (false with an exception). */
bool weft_loop_enable(weft_loop *loop, zend_ulong id);
bool weft_loop_disable(weft_loop *loop, zend_ulong id);
bool weft_loop_reference(weft_loop *loop, zend_ulong id, bool referenced);
void weft_loop_cancel(weft_loop *loop, zend_ulong id);
void weft_loop_stop(weft_loop *loop);

/*
 * For a hook about to wait on fd while the loop is idle (weft_hooks.c, WEFT_WAIT_IDLE): whether the loop
 * has nothing to do now, and if so the descriptor to poll next to the hook's (the loop's epoll
 * descriptor, or -1 when nothing is registered) and *budget, the seconds until the loop's next timer or
 * the next full sweep of its streams (< 0: none). Returns false when the loop owes work first (deferred
 * calls, a due timer, a pending signal, events not handed out, a stop, not running). Never throws.
 */
bool weft_loop_idle(weft_loop *loop, int *epfd, double *budget);

/*
 * The hooks' idle poll, the one place that decides whether a hooked wait may hold the loop (together with
 * the coroutine's own answer, which only PHP's scheduler knows: see WEFT_WAIT_IDLE in weft_hooks.h).
 * weft_loop_idle_wanted(): whether to try at all (the loop is idle now, and no back-off after recent
 * misses). weft_loop_idle_poll(): polls fd for `events` (WEFT_LOOP_READ/WRITE) together with the loop's
 * epoll descriptor for at most `left` seconds (< 0: no limit) and the loop's idle budget. Returns the
 * ready events (> 0), 0 when `left` passed, or -1 when the loop has something to do first (then wait
 * through the loop as usual; a miss backs further tries off). weft_loop_idle_reset(): forget the back-off.
 */
bool weft_loop_idle_wanted(weft_loop *loop);
int weft_loop_idle_poll(weft_loop *loop, int fd, uint32_t events, double left);
void weft_loop_idle_reset(weft_loop *loop);

#endif
