/*
 * The curl hook: curl_exec() and curl_multi_select() (so Guzzle's CurlHandler and CurlMultiHandler too)
 * suspend the current coroutine instead of blocking the worker.
 *
 * Every wait of libcurl goes through one call to poll(2): curl_easy_perform() waits in curl_multi_poll(),
 * curl_multi_wait() (curl_multi_select) in the same function, both through Curl_poll(). So the hook
 * replaces libcurl's import of poll (and of __poll_chk, its _FORTIFY_SOURCE twin), the slot of its global
 * offset table that the dynamic linker filled with poll's address, by weft_curl_poll(). In a coroutine that one waits through
 * weft_hook_wait_fds() and answers with the kernel's own revents; everywhere else (outside a coroutine,
 * in destructors, at shutdown, hooks off, a zero timeout, another thread) it calls poll itself.
 *
 * Why there and not by running the easy handle on a multi handle of our own: the transfer then runs
 * exactly the code it runs without Weft (the easy handle's own multi, connection cache and DNS cache,
 * timeouts, error buffer, PHP's callbacks, curl_getinfo), nothing depends on the private layout of
 * PHP's CurlHandle object, and a PHP callback that suspends inside a transfer cannot re-enter a multi
 * handle that another coroutine is driving. What it depends on instead is the ELF dynamic section of
 * libcurl (the format the dynamic linker reads): the start-up check below verifies the slot holds
 * poll's address before writing it, and then that a real libcurl wait arrives here; when either fails
 * the slot is left (or put back) as it was and curl simply blocks, as without Weft.
 *
 * Two coroutines using one handle at once: PHP's curl_exec() empties the handle's response buffer before
 * it starts, so a second curl_exec() on a handle whose transfer is suspended would tear the first one's
 * response apart. The functions that drive or change a handle are wrapped: while a coroutine is inside
 * curl_exec() or curl_multi_exec()/curl_multi_select() on a handle, any other coroutine calling one of
 * them on that handle gets Weft\Coroutine\ConcurrentUse, and the handle is not touched.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_fibers.h"
#include "weft_curl.h"
#include "weft_hooks.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <time.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__)) && !defined(ZTS)
# define WEFT_CURL_SUPPORTED 1
#endif

#ifdef WEFT_CURL_SUPPORTED
# include <dlfcn.h>
# include <elf.h>
# include <link.h>
# include <pthread.h>
# include <sys/mman.h>
# include <unistd.h>
# if defined(__x86_64__)
#  define WEFT_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#  define WEFT_R_GLOB_DAT R_X86_64_GLOB_DAT
# else
#  define WEFT_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#  define WEFT_R_GLOB_DAT R_AARCH64_GLOB_DAT
# endif
#endif

static char weft_curl_status[256] = "unavailable: not checked";

static void weft_curl_set_status(const char *format, ...) ZEND_ATTRIBUTE_FORMAT(printf, 1, 2);
static void weft_curl_set_status(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(weft_curl_status, sizeof(weft_curl_status), format, args);
	va_end(args);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Two coroutines, one handle */

/* Who is inside a call on a handle: a record on the caller's own C stack, listed while the call runs. */
typedef struct {
	zend_fiber *owner;
	const char *function;
} weft_curl_holder;

typedef struct {
	const char *name;
	uint32_t easy_arg;   /* 1-based position of the CurlHandle, 0: none */
	uint32_t multi_arg;  /* 1-based position of the CurlMultiHandle, 0: none */
	bool holds;          /* the call may suspend: the handle is held while it runs */
	zif_handler original;
} weft_curl_guard;

static HashTable weft_curl_held;  /* (zend_ulong) zend_object* => weft_curl_holder* */

static weft_curl_guard weft_curl_guards[] = {
	{"curl_exec", 1, 0, true, NULL},
	{"curl_multi_exec", 0, 1, true, NULL},
	{"curl_multi_select", 0, 1, true, NULL},
	{"curl_setopt", 1, 0, false, NULL},
	{"curl_setopt_array", 1, 0, false, NULL},
	{"curl_reset", 1, 0, false, NULL},
	{"curl_multi_add_handle", 2, 1, false, NULL},
	{"curl_multi_remove_handle", 2, 1, false, NULL},
	{"curl_multi_setopt", 0, 1, false, NULL},
	{"curl_multi_info_read", 0, 1, false, NULL},
	{"curl_multi_close", 0, 1, false, NULL},
};

static zend_object *weft_curl_arg_object(zend_execute_data *execute_data, uint32_t position)
{
	if (position == 0 || position > ZEND_CALL_NUM_ARGS(execute_data)) {
		return NULL;
	}
	zval *arg = ZEND_CALL_ARG(execute_data, position);
	ZVAL_DEREF(arg);
	return Z_TYPE_P(arg) == IS_OBJECT ? Z_OBJ_P(arg) : NULL;
}

/* Throws and returns true when another coroutine holds `object`. */
static bool weft_curl_refuse(const weft_curl_guard *guard, zend_object *object)
{
	if (object == NULL || zend_hash_num_elements(&weft_curl_held) == 0) {
		return false;
	}
	weft_curl_holder *holder = zend_hash_index_find_ptr(&weft_curl_held, (zend_ulong) (uintptr_t) object);
	if (holder == NULL || holder->owner == EG(active_fiber)) {
		/* Free, or held by this very coroutine (a callback of its own transfer): as without Weft. */
		return false;
	}
	weft_hook_throw_concurrent_use("curl", guard->name, ZSTR_VAL(object->ce->name), holder->function);
	return true;
}

static void weft_curl_guarded_call(weft_curl_guard *guard, INTERNAL_FUNCTION_PARAMETERS)
{
	zend_object *easy = weft_curl_arg_object(execute_data, guard->easy_arg);
	zend_object *multi = weft_curl_arg_object(execute_data, guard->multi_arg);
	if (weft_curl_refuse(guard, easy) || weft_curl_refuse(guard, multi)) {
		return;
	}
	/* Outside a Fiber nothing can run while this call does: no need to hold anything. */
	zend_object *held = guard->holds && EG(active_fiber) != NULL ? (easy != NULL ? easy : multi) : NULL;
	if (held == NULL || zend_hash_index_exists(&weft_curl_held, (zend_ulong) (uintptr_t) held)) {
		guard->original(INTERNAL_FUNCTION_PARAM_PASSTHRU);
		return;
	}
	weft_curl_holder holder = {.owner = EG(active_fiber), .function = guard->name};
	zend_hash_index_add_new_ptr(&weft_curl_held, (zend_ulong) (uintptr_t) held, &holder);
	zend_try {
		guard->original(INTERNAL_FUNCTION_PARAM_PASSTHRU);
	} zend_catch {
		/* The record lives on this stack frame: it must not outlive it, even through a bailout. */
		zend_hash_index_del(&weft_curl_held, (zend_ulong) (uintptr_t) held);
		zend_bailout();
	} zend_end_try();
	zend_hash_index_del(&weft_curl_held, (zend_ulong) (uintptr_t) held);
}

#define WEFT_CURL_GUARD_HANDLER(i) \
	static ZEND_NAMED_FUNCTION(weft_curl_guard_##i) { weft_curl_guarded_call(&weft_curl_guards[i], INTERNAL_FUNCTION_PARAM_PASSTHRU); }
WEFT_CURL_GUARD_HANDLER(0)
WEFT_CURL_GUARD_HANDLER(1)
WEFT_CURL_GUARD_HANDLER(2)
WEFT_CURL_GUARD_HANDLER(3)
WEFT_CURL_GUARD_HANDLER(4)
WEFT_CURL_GUARD_HANDLER(5)
WEFT_CURL_GUARD_HANDLER(6)
WEFT_CURL_GUARD_HANDLER(7)
WEFT_CURL_GUARD_HANDLER(8)
WEFT_CURL_GUARD_HANDLER(9)
WEFT_CURL_GUARD_HANDLER(10)
static const zif_handler weft_curl_guard_handlers[] = {
	weft_curl_guard_0, weft_curl_guard_1, weft_curl_guard_2, weft_curl_guard_3, weft_curl_guard_4, weft_curl_guard_5,
	weft_curl_guard_6, weft_curl_guard_7, weft_curl_guard_8, weft_curl_guard_9, weft_curl_guard_10,
};
_Static_assert(sizeof(weft_curl_guard_handlers) / sizeof(weft_curl_guard_handlers[0]) == sizeof(weft_curl_guards) / sizeof(weft_curl_guards[0]),
	"one handler per guarded function");

/* Wraps each function; a function this PHP does not have is simply not wrapped. */
static void weft_curl_install_guards(void)
{
	zend_hash_init(&weft_curl_held, 16, NULL, NULL, 1);
	for (size_t i = 0; i < sizeof(weft_curl_guards) / sizeof(weft_curl_guards[0]); i++) {
		zend_function *fn = zend_hash_str_find_ptr(CG(function_table), weft_curl_guards[i].name, strlen(weft_curl_guards[i].name));
		if (fn == NULL || fn->type != ZEND_INTERNAL_FUNCTION) {
			continue;
		}
		weft_curl_guards[i].original = fn->internal_function.handler;
		fn->internal_function.handler = weft_curl_guard_handlers[i];
	}
}

#ifdef WEFT_CURL_SUPPORTED

/* ---------------------------------------------------------------------------------------------------- */
/* The wait */

typedef int (*weft_poll_fn)(struct pollfd *fds, nfds_t nfds, int timeout);

static weft_poll_fn weft_curl_real_poll = NULL;
static pthread_t weft_curl_php_thread;
static bool weft_curl_probing = false;
static unsigned weft_curl_probe_calls = 0;

static double weft_curl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* libcurl's poll in a coroutine: suspend until a descriptor may be ready, then let the kernel answer. */
static int weft_curl_poll_suspending(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	/* Ready already: no switch, and exactly poll's answer. */
	int r = weft_curl_real_poll(fds, n, 0);
	if (r != 0) {
		return r;
	}
	double deadline = timeout_ms < 0 ? -1.0 : weft_curl_now() + timeout_ms / 1000.0;
	struct pollfd local[8];
	struct pollfd *want = n <= 8 ? local : safe_emalloc(n, sizeof(struct pollfd), 0);
	for (nfds_t i = 0; i < n; i++) {
		/* libcurl asks with POLLRDNORM / POLLWRNORM / POLLRDBAND / POLLPRI too: the wait knows in and out. */
		want[i].fd = fds[i].fd;
		want[i].events = (short) (((fds[i].events & (POLLIN | POLLRDNORM | POLLRDBAND | POLLPRI)) ? POLLIN : 0)
			| ((fds[i].events & (POLLOUT | POLLWRNORM | POLLWRBAND)) ? POLLOUT : 0));
		want[i].revents = 0;
	}
	while (true) {
		double left = deadline < 0 ? -1.0 : deadline - weft_curl_now();
		if (deadline >= 0 && left < 0) {
			left = 0;
		}
		int woken = weft_hook_wait_fds(want, (int) n, left);
		if (woken < 0) {
			/* Cancelled (EG(exception) is set): a hard poll error makes libcurl give the transfer up,
			 * and give up its connection with it; EINTR would make it wait again. */
			r = -1;
			errno = ECANCELED;
			break;
		}
		r = weft_curl_real_poll(fds, n, 0);
		if (r != 0 || woken == 0 || (deadline >= 0 && weft_curl_now() >= deadline)) {
			break;
		}
		/* Woken, yet nothing is ready any more (spurious): wait for what is left. */
		if (!weft_hook_can_suspend(WEFT_HOOK_CURL)) {
			left = deadline < 0 ? -1.0 : deadline - weft_curl_now();
			r = weft_curl_real_poll(fds, n, left < 0 ? (deadline < 0 ? -1 : 0) : (int) ceil(left * 1000.0));
			break;
		}
	}
	if (want != local) {
		efree(want);
	}
	return r;
}

static int weft_curl_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	if (UNEXPECTED(weft_curl_probing)) {
		weft_curl_probe_calls++;
	}
	/* libcurl's own threads (the threaded resolver) must never reach PHP. */
	if (timeout_ms == 0 || !pthread_equal(pthread_self(), weft_curl_php_thread) || !weft_hook_can_suspend(WEFT_HOOK_CURL)) {
		return weft_curl_real_poll(fds, n, timeout_ms);
	}
	return weft_curl_poll_suspending(fds, n, timeout_ms);
}

typedef int (*weft_poll_chk_fn)(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);
static weft_poll_chk_fn weft_curl_real_poll_chk = NULL;

/* The _FORTIFY_SOURCE variant: its bounds check first (the real one aborts), then the same wait. */
static int weft_curl_poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n) {
		return weft_curl_real_poll_chk(fds, n, timeout_ms, fdslen);
	}
	return weft_curl_poll(fds, n, timeout_ms);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Finding libcurl's poll slot */

typedef struct {
	uintptr_t inside;        /* an address in libcurl's code */
	bool found;
	ElfW(Addr) bias;
	const ElfW(Dyn) *dynamic;
	uintptr_t relro_start, relro_end;
} weft_curl_object;

static int weft_curl_find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	weft_curl_object *object = data;
	bool mine = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && object->inside >= start && object->inside < start + ph->p_memsz) {
			mine = true;
		}
	}
	if (!mine) {
		return 0;
	}
	object->found = true;
	object->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC) {
			object->dynamic = (const ElfW(Dyn) *) (info->dlpi_addr + ph->p_vaddr);
		} else if (ph->p_type == PT_GNU_RELRO) {
			object->relro_start = info->dlpi_addr + ph->p_vaddr;
			object->relro_end = object->relro_start + ph->p_memsz;
		}
	}
	return 1;
}

/* glibc stores the dynamic section's addresses relocated, other loaders leave them relative. */
static uintptr_t weft_curl_dyn_ptr(const weft_curl_object *object, ElfW(Addr) value)
{
	return value < object->bias ? object->bias + value : value;
}

static const char weft_curl_not_imported[] = "not imported";

/* The address of the slot through which `object` calls `symbol`, or NULL (and why). */
static void **weft_curl_find_slot(const weft_curl_object *object, const char *symbol, const char **why)
{
	uintptr_t jmprel = 0, rela = 0, symtab = 0, strtab = 0;
	size_t jmprel_size = 0, rela_size = 0, strtab_size = 0;
	ElfW(Sxword) pltrel = DT_RELA;
	for (const ElfW(Dyn) *d = object->dynamic; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
			case DT_JMPREL: jmprel = weft_curl_dyn_ptr(object, d->d_un.d_ptr); break;
			case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
			case DT_PLTREL: pltrel = (ElfW(Sxword)) d->d_un.d_val; break;
			case DT_RELA: rela = weft_curl_dyn_ptr(object, d->d_un.d_ptr); break;
			case DT_RELASZ: rela_size = d->d_un.d_val; break;
			case DT_SYMTAB: symtab = weft_curl_dyn_ptr(object, d->d_un.d_ptr); break;
			case DT_STRTAB: strtab = weft_curl_dyn_ptr(object, d->d_un.d_ptr); break;
			case DT_STRSZ: strtab_size = d->d_un.d_val; break;
			default: break;
		}
	}
	if (symtab == 0 || strtab == 0 || strtab_size == 0 || pltrel != DT_RELA) {
		*why = "its dynamic section lacks a symbol table, a string table or RELA relocations";
		return NULL;
	}
	size_t symbol_length = strlen(symbol);
	const struct { uintptr_t at; size_t size; unsigned type; } tables[] = {
		{jmprel, jmprel_size, WEFT_R_JUMP_SLOT},
		{rela, rela_size, WEFT_R_GLOB_DAT},
	};
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		const ElfW(Rela) *r = (const ElfW(Rela) *) tables[t].at;
		size_t count = tables[t].at == 0 ? 0 : tables[t].size / sizeof(ElfW(Rela));
		for (size_t i = 0; i < count; i++) {
			if (ELF64_R_TYPE(r[i].r_info) != tables[t].type) {
				continue;
			}
			const ElfW(Sym) *sym = (const ElfW(Sym) *) symtab + ELF64_R_SYM(r[i].r_info);
			if (sym->st_name + symbol_length >= strtab_size) {
				continue;
			}
			if (memcmp((const char *) strtab + sym->st_name, symbol, symbol_length + 1) == 0) {
				return (void **) (object->bias + r[i].r_offset);
			}
		}
	}
	*why = weft_curl_not_imported;
	return NULL;
}

/* Writes one slot of a table that may be read-only after relocation (RELRO). */
static bool weft_curl_write_slot(const weft_curl_object *object, void **slot, void *value)
{
	uintptr_t page_size = (uintptr_t) sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t) slot & ~(page_size - 1);
	bool read_only = (uintptr_t) slot >= object->relro_start && (uintptr_t) slot < object->relro_end;
	if (read_only && mprotect((void *) page, page_size, PROT_READ | PROT_WRITE) != 0) {
		return false;
	}
	__atomic_store_n(slot, value, __ATOMIC_SEQ_CST);
	if (read_only) {
		mprotect((void *) page, page_size, PROT_READ);
	}
	return true;
}

static void weft_curl_restore(const weft_curl_object *object, void **slot, void *original)
{
	if (slot != NULL) {
		weft_curl_write_slot(object, slot, original);
	}
}

typedef void *(*weft_curl_multi_init_fn)(void);
typedef int (*weft_curl_multi_wait_fn)(void *multi, void *extra_fds, unsigned extra_nfds, int timeout_ms, int *ret);
typedef int (*weft_curl_multi_cleanup_fn)(void *multi);

static bool weft_curl_install_poll(void *curl_module_handle)
{
	void *lookup = curl_module_handle != NULL ? curl_module_handle : RTLD_DEFAULT;
	weft_curl_multi_init_fn multi_init = (weft_curl_multi_init_fn) dlsym(lookup, "curl_multi_init");
	weft_curl_multi_wait_fn multi_wait = (weft_curl_multi_wait_fn) dlsym(lookup, "curl_multi_wait");
	weft_curl_multi_cleanup_fn multi_cleanup = (weft_curl_multi_cleanup_fn) dlsym(lookup, "curl_multi_cleanup");
	if (multi_init == NULL || multi_wait == NULL || multi_cleanup == NULL) {
		weft_curl_set_status("unavailable: libcurl's curl_multi_* functions not found");
		return false;
	}
	Dl_info where;
	const char *library = dladdr((void *) multi_wait, &where) != 0 && where.dli_fname != NULL ? where.dli_fname : "libcurl";

	weft_curl_object object = {.inside = (uintptr_t) multi_wait};
	dl_iterate_phdr(weft_curl_find_object, &object);
	if (!object.found || object.dynamic == NULL) {
		weft_curl_set_status("unavailable: %s not found among the loaded objects", library);
		return false;
	}
	/* libcurl calls poll(), or __poll_chk() when built with _FORTIFY_SOURCE and a known array size. */
	struct {
		const char *name;
		void *original;
		void *replacement;
		void **slot;
	} imports[] = {
		{"poll", (void *) poll, (void *) weft_curl_poll, NULL},
		{"__poll_chk", dlsym(RTLD_DEFAULT, "__poll_chk"), (void *) weft_curl_poll_chk, NULL},
	};
	const size_t count = sizeof(imports) / sizeof(imports[0]);
	weft_curl_real_poll = poll;
	weft_curl_real_poll_chk = (weft_poll_chk_fn) imports[1].original;
	weft_curl_php_thread = pthread_self();
	int patched = 0;
	for (size_t i = 0; i < count; i++) {
		const char *why = NULL;
		void **slot = imports[i].original == NULL ? NULL : weft_curl_find_slot(&object, imports[i].name, &why);
		if (slot == NULL) {
			if (why != NULL && why != weft_curl_not_imported) {
				weft_curl_set_status("unavailable: %s: %s", library, why);
				weft_curl_restore(&object, imports[0].slot, imports[0].original);
				return false;
			}
			continue;
		}
		if (__atomic_load_n(slot, __ATOMIC_SEQ_CST) != imports[i].original) {
			weft_curl_set_status("unavailable: %s's %s() import does not hold %s's address (another hook?)", library, imports[i].name, imports[i].name);
			weft_curl_restore(&object, imports[0].slot, imports[0].original);
			return false;
		}
		if (!weft_curl_write_slot(&object, slot, imports[i].replacement)) {
			weft_curl_set_status("unavailable: %s's %s() import could not be written (%s)", library, imports[i].name, strerror(errno));
			weft_curl_restore(&object, imports[0].slot, imports[0].original);
			return false;
		}
		imports[i].slot = slot;
		patched++;
	}
	if (patched == 0) {
		weft_curl_set_status("unavailable: %s imports neither poll() nor __poll_chk()", library);
		return false;
	}

	/* The proof: a real wait of libcurl must arrive here. curl_multi_wait() on a multi handle without
	 * transfers polls only when given a descriptor: a pipe with a byte in it, so it does not even wait. */
	void *multi = multi_init();
	int pipe_fds[2] = {-1, -1};
	if (multi != NULL && pipe(pipe_fds) == 0 && write(pipe_fds[1], "x", 1) == 1) {
		/* struct curl_waitfd: {curl_socket_t fd; short events; short revents;}, CURL_WAIT_POLLIN 1 */
		struct { int fd; short events; short revents; } extra = {.fd = pipe_fds[0], .events = 1, .revents = 0};
		int numfds = 0;
		weft_curl_probe_calls = 0;
		weft_curl_probing = true;
		multi_wait(multi, &extra, 1, 0, &numfds);
		weft_curl_probing = false;
	}
	for (int i = 0; i < 2; i++) {
		if (pipe_fds[i] >= 0) {
			close(pipe_fds[i]);
		}
	}
	if (multi != NULL) {
		multi_cleanup(multi);
	}
	if (weft_curl_probe_calls == 0) {
		for (size_t i = 0; i < count; i++) {
			weft_curl_restore(&object, imports[i].slot, imports[i].original);
		}
		weft_curl_set_status("unavailable: a wait of %s did not arrive at the hook (start-up check)", library);
		return false;
	}

	/* The slot now points into this module: it must stay mapped as long as libcurl is. */
	Dl_info self;
	if (dladdr((void *) weft_curl_poll, &self) != 0 && self.dli_fname != NULL) {
		dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	}
	weft_curl_set_status("active: %s's waits go through weft_curl_poll()", library);
	return true;
}

#endif /* WEFT_CURL_SUPPORTED */

void weft_curl_minit(int module_number)
{
	zend_module_entry *curl = zend_hash_str_find_ptr(&module_registry, "curl", sizeof("curl") - 1);
	const char *switched = getenv("WEFT_CURL_HOOK");
	if (curl == NULL) {
		weft_curl_set_status("unavailable: the curl extension is not loaded");
	} else if (switched != NULL && strcmp(switched, "off") == 0) {
		/* The operator's way out: libcurl and PHP's curl functions are left entirely untouched. */
		weft_curl_set_status("unavailable: turned off by WEFT_CURL_HOOK=off");
	} else {
#ifdef WEFT_CURL_SUPPORTED
		if (weft_curl_install_poll(curl->handle)) {
			weft_curl_install_guards();
			weft_hooks_declare_available(WEFT_HOOK_CURL);
		} else {
			php_error_docref(NULL, E_WARNING, "weft: curl hook %s; curl calls will block the worker", weft_curl_status);
		}
#else
		weft_curl_set_status("unavailable: this build (ZTS, or not Linux on x86-64/arm64) has no curl hook");
#endif
	}
	zend_register_string_constant("Weft\\Ext\\CURL_HOOK", sizeof("Weft\\Ext\\CURL_HOOK") - 1, weft_curl_status,
		CONST_PERSISTENT, module_number);
}
