/*
 * Behaviour: signal dispositions read back as the program installed them
 * (the library runs handlers through a counting trampoline, which must not
 * show): the handler, SA_SIGINFO, SA_RESTART and SA_RESETHAND; signal()
 * returns the previous handler; a handler runs with its arguments; a
 * SA_RESETHAND handler is SIG_DFL once it ran (sysv_signal's too); SIG_IGN
 * and SIG_DFL read back as such.
 */
#include "scen.h"

static volatile sig_atomic_t got_plain, got_info;

static void
plain(int sig)
{
    got_plain = sig;
}

static void
info(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got_info = si != NULL && si->si_signo == sig ? sig : -1;
}

static const char *
name_of(void *h)
{
    if (h == (void *)plain)
        return "plain";
    if (h == (void *)info)
        return "info";
    if (h == (void *)SIG_DFL)
        return "SIG_DFL";
    if (h == (void *)SIG_IGN)
        return "SIG_IGN";
    return "another function";
}

static void
show(int sig, const char *what)
{
    struct sigaction sa;
    void *h;

    T(sigaction(sig, NULL, &sa));
    h = sa.sa_flags & SA_SIGINFO ? (void *)sa.sa_sigaction
                                 : (void *)sa.sa_handler;
    NOTE("%s: %s SA_SIGINFO=%d SA_RESTART=%d SA_RESETHAND=%d", what, name_of(h),
         !!(sa.sa_flags & SA_SIGINFO), !!(sa.sa_flags & SA_RESTART),
         !!(sa.sa_flags & SA_RESETHAND));
}

int
main(void)
{
    struct sigaction sa, old;
    void (*prev)(int);

    tr_init();
    show(SIGUSR1, "USR1 at start");

    prev = signal(SIGUSR1, plain);
    NOTE("signal(USR1, plain) returned %s", name_of((void *)prev));
    show(SIGUSR1, "USR1 after signal()");
    T(raise(SIGUSR1));
    NOTE("plain ran with %d", (int)got_plain);
    prev = signal(SIGUSR1, SIG_IGN);
    NOTE("signal(USR1, SIG_IGN) returned %s", name_of((void *)prev));
    show(SIGUSR1, "USR1 ignored");
    T(raise(SIGUSR1));

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = info;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    T(sigaction(SIGUSR2, &sa, &old));
    NOTE("old USR2: %s", name_of((void *)old.sa_handler));
    show(SIGUSR2, "USR2 installed");
    T(raise(SIGUSR2));
    NOTE("info ran with %d", (int)got_info);
    show(SIGUSR2, "USR2 after its delivery");

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = plain;
    sigemptyset(&sa.sa_mask);
    T(sigaction(SIGUSR1, &sa, &old));
    NOTE("old USR1: %s SA_RESTART=%d", name_of((void *)old.sa_handler),
         !!(old.sa_flags & SA_RESTART));
    show(SIGUSR1, "USR1 without SA_RESTART");
    got_plain = 0;
    T(raise(SIGUSR1));
    NOTE("plain ran with %d", (int)got_plain);
    prev = signal(SIGUSR1, SIG_DFL);
    NOTE("signal(USR1, SIG_DFL) returned %s", name_of((void *)prev));
    show(SIGUSR1, "USR1 default again");

    /* System V signal(): reset by its delivery, no SA_RESTART. */
    prev = sysv_signal(SIGUSR1, plain);
    NOTE("sysv_signal(USR1, plain) returned %s", name_of((void *)prev));
    show(SIGUSR1, "USR1 after sysv_signal()");
    got_plain = 0;
    T(raise(SIGUSR1));
    NOTE("plain ran with %d", (int)got_plain);
    show(SIGUSR1, "USR1 after its delivery");
    return 0;
}
