/*
 * Interposed sigaction() and the signal() family: every handler the application
 * installs runs through a trampoline that counts the delivery in the
 * receiving thread (rt_sig_count) before calling it. A thread spinning in
 * rt_block() watches that count: a handler that ran means the wait ends
 * with EINTR, as the kernel's blocking call would, without blocking and
 * restoring the signal mask around every wait (two system calls, about
 * 300 ns on the project's VM, the second of them on the path of every
 * message that ends a spin).
 *
 * The application sees its own handlers: sigaction() reports the handler
 * and SA_SIGINFO it installed, with the kernel's other flags (siginterrupt
 * and system() change them through glibc's internal sigaction). A handler
 * found installed by someone else when the library starts (or later with a
 * raw system call) is not counted; while one is known, rt_block keeps
 * blocking signals around its spin (rt_sig_counted false).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>

#include "libc.h"
#include "pl.h"
#include "rt.h"

/* What the application installed, per signal (handler NULL: none of
 * ours; the kernel's disposition stands). */
static struct {
    _Atomic(void *) fn;
    _Atomic int flags; /* of the last install through us */
    _Atomic bool seen; /* installed through us at least once */
} app[NSIG];
static _Atomic uint64_t foreign; /* signals whose handler is not counted */

static void
trampoline(int sig, siginfo_t *si, void *uc)
{
    void *fn;
    int flags;

    rt_sig_count++;
    if (sig <= 0 || sig >= NSIG)
        return;
    fn = atomic_load_explicit(&app[sig].fn, memory_order_relaxed);
    flags = atomic_load_explicit(&app[sig].flags, memory_order_relaxed);
    if (flags & SA_RESETHAND) /* the kernel has reset it to SIG_DFL */
        atomic_store_explicit(&app[sig].fn, NULL, memory_order_relaxed);
    if (fn == NULL)
        return;
    if (flags & SA_SIGINFO)
        ((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
    else
        ((void (*)(int))fn)(sig);
}

static bool
is_handler(void *fn)
{
    return fn != (void *)SIG_DFL && fn != (void *)SIG_IGN &&
           fn != (void *)SIG_ERR;
}

static void
set_foreign(int sig, bool on)
{
    uint64_t bit = 1ull << (sig % 64);

    if (on)
        atomic_fetch_or(&foreign, bit);
    else
        atomic_fetch_and(&foreign, ~bit);
    atomic_store(&rt_sig_counted, atomic_load(&foreign) == 0);
}

/* The kernel's view of sig (k) as the application should see it: our
 * trampoline shows as the application's handler, and SA_SIGINFO (which
 * the trampoline needs) as the application asked, also once SA_RESETHAND
 * has put SIG_DFL back (the kernel keeps the flags). */
static void
as_installed(int sig, struct sigaction *k, void *fn, int flags)
{
    if (k->sa_sigaction == trampoline)
        k->sa_sigaction = (void (*)(int, siginfo_t *, void *))fn;
    else if (!atomic_load(&app[sig].seen) ||
             (k->sa_handler != SIG_DFL && k->sa_handler != SIG_IGN))
        return;
    k->sa_flags = (k->sa_flags & ~SA_SIGINFO) | (flags & SA_SIGINFO);
}

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

int
sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
    struct sigaction mine, old;
    void *fn, *prev_fn;
    int prev_flags, rc;

    if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP)
        return libc_sigaction(sig, act, oact);
    prev_fn = atomic_load(&app[sig].fn);
    prev_flags = atomic_load(&app[sig].flags);
    if (act == NULL) {
        rc = libc_sigaction(sig, NULL, oact);
        if (rc == 0 && oact != NULL)
            as_installed(sig, oact, prev_fn, prev_flags);
        return rc;
    }
    fn = act->sa_flags & SA_SIGINFO ? (void *)act->sa_sigaction
                                    : (void *)act->sa_handler;
    if (!is_handler(fn)) {
        rc = libc_sigaction(sig, act, &old);
        if (rc == 0) {
            atomic_store(&app[sig].fn, NULL);
            atomic_store(&app[sig].flags, act->sa_flags);
            atomic_store(&app[sig].seen, true);
            set_foreign(sig, false);
        }
    } else {
        mine = *act;
        mine.sa_sigaction = trampoline;
        mine.sa_flags |= SA_SIGINFO;
        /* The table first: a delivery in between calls the new handler
         * through the old trampoline, as the kernel would after the
         * switch. */
        atomic_store(&app[sig].flags, act->sa_flags);
        atomic_store(&app[sig].fn, fn);
        rc = libc_sigaction(sig, &mine, &old);
        if (rc != 0) {
            atomic_store(&app[sig].fn, prev_fn);
            atomic_store(&app[sig].flags, prev_flags);
        } else {
            atomic_store(&app[sig].seen, true);
            set_foreign(sig, false);
        }
    }
    if (rc == 0 && oact != NULL) {
        *oact = old;
        as_installed(sig, oact, prev_fn, prev_flags);
    }
    return rc;
}

/* signal() as glibc defines its variants, through our sigaction. */
static __sighandler_t
install(int sig, __sighandler_t handler, bool bsd)
{
    struct sigaction act = {0}, old;

    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    if (bsd && sig > 0 && sig < NSIG)
        sigaddset(&act.sa_mask, sig);
    act.sa_flags = bsd ? SA_RESTART : SA_RESETHAND | SA_NODEFER;
    if (sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

/* BSD semantics: SA_RESTART, the signal blocked in its handler. */
__sighandler_t
signal(int sig, __sighandler_t handler)
{
    return install(sig, handler, true);
}

__sighandler_t bsd_signal(int sig, __sighandler_t handler)
    __attribute__((alias("signal"), copy(signal)));

/* System V semantics: reset on delivery, not blocked, no restart. Strict
 * ISO C programs (-std=c11 without _DEFAULT_SOURCE) get it for signal():
 * glibc's header redirects the name to __sysv_signal. */
__sighandler_t
sysv_signal(int sig, __sighandler_t handler)
{
    return install(sig, handler, false);
}

__sighandler_t __sysv_signal(int sig, __sighandler_t handler)
    __attribute__((alias("sysv_signal"), copy(sysv_signal)));

#pragma GCC visibility pop

/* At start: handlers someone installed before us are not counted. Only
 * when our sigaction is the one the program calls (preloaded, not merely
 * dlopen'ed) are later handlers counted at all. */
void
pl_signals_init(void)
{
    struct sigaction k;
    void *sym = dlsym(RTLD_DEFAULT, "sigaction");

    if (sym != (void *)sigaction)
        return;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP ||
            libc_sigaction(sig, NULL, &k) != 0)
            continue;
        if (is_handler((void *)k.sa_sigaction) && k.sa_sigaction != trampoline)
            atomic_fetch_or(&foreign, 1ull << (sig % 64));
    }
    atomic_store(&rt_sig_counted, atomic_load(&foreign) == 0);
}
