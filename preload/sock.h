/*
 * The AF_INET socket object behind an fd we track (kind PL_FD_SOCK).
 *
 * Life cycle: socket() creates the kernel socket (its number is the
 * application's fd) and a pl_sock in state UNDECIDED: no stack socket, no
 * DPDK. bind/connect/listen/sendto decide (decide.h): ACCEL creates the
 * stack socket (starting the runtime on first use), replays the recorded
 * options and from then on the data path is the stack; KERNEL leaves the
 * fd to the kernel for good (the table entry is dropped; dups still
 * pointing at the object see KERNEL and pass through).
 *
 * Locking: `mu` serialises decisions and option records; every stk_* call
 * runs under rt_lock(). `stk` is written once, before `state` becomes
 * ACCEL (release), and used under rt_lock after checking the state again.
 * Lock order: s->mu -> epoll lock -> rt_lock. The whole threads and
 * locking model is written at the top of sock.c.
 *
 * Return convention: 0 / count or -errno. Nothing here touches errno.
 */
#ifndef ACCEL_PL_SOCK_H
#define ACCEL_PL_SOCK_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cfg.h"
#include "decide.h"
#include "fdtable.h"
#include "rt.h"
#include "why.h"

struct stk_sock;
struct pl_ep_item;

enum pl_sock_state {
    PL_SOCK_UNDECIDED = 0,
    PL_SOCK_ACCEL = 1,
    PL_SOCK_KERNEL = 2,
};

#define PL_OPT_MAX 24
#define PL_OPT_VAL_MAX 32

/** A setsockopt accepted by the kernel, kept for replay. */
struct pl_opt {
    int level, name;
    socklen_t len;
    unsigned char val[PL_OPT_VAL_MAX];
};

struct pl_sock {
    struct pl_fd hdr;
    pthread_mutex_t mu;
    int type;                 /* SOCK_STREAM or SOCK_DGRAM */
    int kfamily;              /* the kernel socket's: AF_INET or AF_INET6 */
    atomic_int family;        /* the application's view: kfamily, or
                                 AF_INET after IPV6_ADDRFORM */
    atomic_bool v6only;       /* AF_INET6: IPV6_V6ONLY when decided */
    atomic_int state;         /* enum pl_sock_state */
    struct stk_sock *stk;     /* set once, before state = ACCEL */
    atomic_uint epoch;        /* pl_fork_epoch when last validated */
    atomic_bool dead;         /* a fork copy another process took */
    atomic_uint served;       /* epoch + 1 while registered as serving */
    atomic_bool nonblock;     /* O_NONBLOCK of the open file */
    atomic_bool kside;        /* kernel socket bound to our port on ANY */
    atomic_int kfd;           /* our own descriptor of the kernel socket */
    atomic_bool klisten;      /* ... and listening */
    atomic_bool kshared;      /* the fd is a dup of kfile.h's template */
    atomic_bool kopts;        /* TCP: an option only the kernel socket
                                 keeps was set (accepted sockets inherit) */
    _Atomic int64_t rcvtimeo; /* SO_RCVTIMEO in ns, 0 = none */
    _Atomic int64_t sndtimeo; /* SO_SNDTIMEO in ns, 0 = none */
    int nopts;
    /* PL_OPT_MAX records, allocated at the first one: most sockets (every
     * accepted one) never record any, and a million idle connections
     * would carry 1 KB each for nothing */
    struct pl_opt *opts;
    struct pl_ep_item *ep_items; /* epoll memberships (epoll lock) */
    atomic_bool ep_queued;       /* its items are on their ready lists */
};

static inline struct pl_sock *
pl_sock_of(struct pl_fd *f)
{
    return (f != NULL && f->kind == PL_FD_SOCK) ? (struct pl_sock *)f : NULL;
}

/** The family the application sees (sockaddr forms, SO_DOMAIN). */
static inline int
pl_sock_af(const struct pl_sock *s)
{
    return atomic_load_explicit(&s->family, memory_order_relaxed);
}

static inline int
pl_sock_state(const struct pl_sock *s)
{
    return atomic_load_explicit(&s->state, memory_order_acquire);
}

/** Usable stack socket in this process. After a fork the first use in
 *  each process revalidates it: a connection copied by the fork is
 *  claimed for this process, or found taken by another (then the socket
 *  is dead here: EBADF, as for a fork child on the kernel). */
bool pl_sock_live(struct pl_sock *s);
/** Like pl_sock_live for calls that only read a socket's names or
 *  options (getsockname, getpeername, getsockopt): a connection copied by
 *  fork is answered from this process's copy and not claimed, so a
 *  process that only asks, as socat's child for SOCAT_PEERADDR and the
 *  like, never takes the connection from the process using it. */
bool pl_sock_meta(struct pl_sock *s);

/** A blocking accept (accept true) or poll/epoll wait on the listener s
 *  starts/ends: the runtime hands new connections to waiting processes
 *  first. */
void pl_sock_accept_wait(struct pl_sock *s, bool on, bool accept);
/** accept() on the listener s returned a connection. */
void pl_sock_accepted(struct pl_sock *s);

/** An event loop's wait (epoll/poll/select) begins: from now on this
 *  thread's sends are batched per loop turn (ACCEL_TX_DEFER), and what
 *  the last turn queued goes out now. */
void pl_loop_turn(void);

/** Tell the runtime this process serves (RT_SERVE_ON) or stops serving
 *  (RT_SERVE_OFF) the listener or UDP socket s, or that it exists
 *  (RT_SERVE_DECLARE), so that new connections are spread over the
 *  processes that accept them. No-op for other sockets; cheap when
 *  repeated. */
void pl_sock_serve(struct pl_sock *s, int how);

/** Whether socket(domain, type, proto) is a candidate (AF_INET or
 *  AF_INET6 TCP/UDP allowed by the configuration). Loads the
 *  configuration. When false for an AF_INET/AF_INET6 socket in a process
 *  that accelerates, *why says why (else it is set to PL_WHY_COUNT). */
bool pl_sock_candidate(int domain, int type, int protocol, enum pl_why *why);

/** The live state region's socket table (statsocks.c; base/statreg.h's
 *  base_sr_socks_fn). */
struct base_sr_sock;
uint32_t pl_sr_socks(struct base_sr_sock *out, uint32_t max, uint32_t *total);

/** The stack's addressing from the configuration. */
void pl_sock_net(struct pl_net *net);

/** At library start: the stack's readiness callback. */
void pl_sock_init(void);

/** New UNDECIDED object with one reference; NULL on ENOMEM. */
struct pl_sock *pl_sock_new(int family, int type, bool nonblock);

/** New ACCEL object around a stack socket accepted on the listener l;
 *  NULL on ENOMEM. */
struct pl_sock *pl_sock_new_accepted(const struct pl_sock *l,
                                     struct stk_sock *stk, bool nonblock);

/**
 * Accelerate s (s->mu held, state UNDECIDED): start the runtime, create the
 * stack socket and replay the recorded options. -ENODEV when the data path
 * cannot start, -ENOBUFS when no stack socket could be made (the caller
 * then makes the socket a kernel one, with pl_sock_accel_why's reason).
 */
int pl_sock_accelerate(struct pl_sock *s, int fd);

static inline enum pl_why
pl_sock_accel_why(int rc)
{
    return rc == -ENODEV ? PL_WHY_start : PL_WHY_nostack;
}

/** Make s a kernel socket for good (s->mu held): fd's entry is dropped,
 *  epoll registrations move to the kernel epoll. why, call and a/len are
 *  the reason and the call that decided it (why.h). */
void pl_sock_to_kernel(struct pl_sock *s, int fd, enum pl_why why,
                       const char *call, const struct sockaddr *a,
                       socklen_t len);

/** Bind the kernel socket to the stack socket's port on 0.0.0.0 or ::
 *  (the socket's family; IPV6_V6ONLY as the application set it) and take
 *  its kernel side (pl_sock_kside_on); s->mu held. 0 or -errno. */
int pl_sock_kbind_any(struct pl_sock *s, int fd);

/** s's private descriptor of its kernel socket (s->kfd), made now if it
 *  has none yet. */
void pl_sock_kfd_own(struct pl_sock *s, int fd);

/** Shared address (base_cfg.ip_shared, or ip6_shared for v6, the
 *  destination's family): an accelerated socket without a local port gets
 *  one from the kernel first (its kernel socket binds the stack's address
 *  of that family, port 0), then the stack socket binds it; UDP sockets
 *  also read the kernel socket (pl_sock_kside_on). A no-op when the
 *  address is not shared or the socket is bound. s->mu held; 0 or -errno
 *  (the kernel's bind error: EADDRNOTAVAIL, out of ports). */
int pl_sock_kreserve(struct pl_sock *s, int fd, bool v6);

/** The stack shares an address of either family with the kernel. */
static inline bool
pl_shared_addr(void)
{
    return base_cfg.ip_shared || base_cfg.ip6_shared;
}

/** IPV6_V6ONLY of an AF_INET6 socket (false for AF_INET): the kernel
 *  socket's while undecided, the value when it was accelerated after. */
bool pl_sock_v6only(struct pl_sock *s, int fd);

/** What the address a given to s is (decide.h's pl_in6_view with the
 *  socket's IPV6_V6ONLY, filling v4 for PL_IN6_V4); PL_IN6_ASIS for an
 *  AF_INET socket. bind true for a bind, which takes no sockaddr_in and
 *  no NULL. The stack always gets a as given (an AF_INET6 stack socket
 *  reads Linux's forms itself); the IPv4 view is for the decisions. */
enum pl_in6 pl_sock_view(struct pl_sock *s, int fd, bool bind,
                         const struct sockaddr *a, socklen_t len,
                         struct sockaddr_in *v4);

/** The address the IPv4 decisions look at: v4 for PL_IN6_V4 (*len set),
 *  a otherwise. */
const struct sockaddr *pl_sock_route_addr(enum pl_in6 k,
                                          const struct sockaddr *a,
                                          socklen_t *len,
                                          const struct sockaddr_in *v4);

/**
 * The decision for an UNDECIDED socket s (s->mu held) whose connect or
 * sendto (call) names the remote address a/len, of which pl_sock_view
 * said k (and v4). Accelerates s, or moves it to the kernel with the
 * reason; PL_ROUTE_PASS: undecided, the kernel socket answers the call.
 */
enum pl_route pl_sock_decide_remote(struct pl_sock *s, int fd, enum pl_in6 k,
                                    const struct sockaddr *a, socklen_t len,
                                    const struct sockaddr_in *v4,
                                    const char *call);

/** After IPV6_ADDRFORM: the stack's sockaddr_in6 name n6 (an IPv4-mapped
 *  one) as the sockaddr_in the application now expects, with Linux's
 *  truncation to *len and the full length in *len. */
void pl_sock_name_v4(const struct sockaddr_in6 *n6, socklen_t n6len,
                     struct sockaddr *out, socklen_t *len);

/**
 * The kernel side of s is now in use (bound to our port on INADDR_ANY,
 * or sending to loopback): s->mu held. Takes a private duplicate of the
 * kernel socket (close-on-exec, above the application's fd range), then
 * sets kside. Every later kernel-side operation of the data path (the
 * kernel accept queue, UDP datagrams from loopback, readiness, waits) goes
 * through pl_sock_kfd(), never through the application's number: another
 * thread may close that number while a call is blocked, and the kernel
 * may give it to an unrelated file (Linux's blocked call keeps its own
 * reference to the file; so does ours). Closed with the object.
 */
void pl_sock_kside_on(struct pl_sock *s, int fd);

/** The descriptor for kernel-side operations: the private duplicate, or
 *  fd when none could be made (no free slot above the base). */
static inline int
pl_sock_kfd(const struct pl_sock *s, int fd)
{
    int k = atomic_load_explicit(&s->kfd, memory_order_acquire);

    return k >= 0 ? k : fd;
}

/** Record a kernel-accepted option for replay (s->mu held). */
void pl_sock_record_opt(struct pl_sock *s, int level, int name, const void *val,
                        socklen_t len);

/** O_NONBLOCK changed by the application (F_SETFL / FIONBIO). Applies it
 *  to the kernel socket when that is what the application observes. */
int pl_sock_set_nonblock(struct pl_sock *s, int fd, bool on);

/** Stack readiness (EPOLL* bits) plus the kernel side's POLLIN. */
uint32_t pl_sock_events(struct pl_sock *s, int fd, uint32_t *gen);

/**
 * Block until the stack socket may have progressed towards `want`
 * (EPOLLIN/EPOLLOUT), the kernel side of fd is readable (when want has
 * EPOLLIN), the deadline passes (-EAGAIN) or a signal arrives (-EINTR).
 * kind: the call, for its spin budget (ACCEL_POLL_USEC_*).
 * *sig0: rt_sig_count taken when the call began (see rt_block); after
 * -EINTR it is moved past the handler that ran, for a restarted call.
 * Returns 0 when the caller should retry its operation.
 */
int pl_sock_wait(struct pl_sock *s, int fd, uint32_t want, int64_t deadline,
                 enum rt_wait_kind kind, unsigned *sig0);

/** After -EINTR from a wait: true when the call should be restarted the
 *  way the kernel restarts socket calls for SA_RESTART handlers. */
bool pl_sock_restart(const struct pl_sock *s, bool send);

/** Deadline for a blocking receive / send from SO_RCVTIMEO/SO_SNDTIMEO. */
int64_t pl_sock_deadline(const struct pl_sock *s, bool send);

/** pl_sock_run's answer when s moved to the kernel (another thread's
 *  connect to loopback, see demote_for_connect) before op could run: the
 *  caller finishes its call on the kernel socket. */
#define PL_SOCK_MOVED (-EBADF)

/** One non-blocking stack operation on s->stk. */
typedef ssize_t (*pl_stk_op)(struct stk_sock *stk, void *arg);

/**
 * Run op under the stack lock followed by a poll turn (which receives
 * frames and flushes what op queued); if op would block and the turn
 * received frames, op runs once more (then another turn flushes). A caller
 * that goes on to rt_block() therefore leaves nothing unsent behind.
 */
ssize_t pl_sock_run(struct pl_sock *s, pl_stk_op op, void *arg);

/* ---- operations (sock_ctl.c) ------------------------------------------ */

int pl_sock_bind(struct pl_sock *s, int fd, const struct sockaddr *a,
                 socklen_t len);
int pl_sock_listen(struct pl_sock *s, int fd, int backlog);
int pl_sock_accept(struct pl_sock *s, int fd, struct sockaddr *a,
                   socklen_t *len, int flags);
int pl_sock_connect(struct pl_sock *s, int fd, const struct sockaddr *a,
                    socklen_t len);
int pl_sock_shutdown(struct pl_sock *s, int fd, int how);
int pl_sock_setsockopt(struct pl_sock *s, int fd, int level, int name,
                       const void *val, socklen_t len);
int pl_sock_getsockopt(struct pl_sock *s, int fd, int level, int name,
                       void *val, socklen_t *len);
int pl_sock_getname(struct pl_sock *s, int fd, struct sockaddr *a,
                    socklen_t *len, bool peer);
int pl_sock_ioctl(struct pl_sock *s, int fd, unsigned long req,
                  unsigned long arg);
int pl_sock_fcntl(struct pl_sock *s, int fd, int cmd, unsigned long arg);

/* ---- data path (sock_io.c) -------------------------------------------- */

/** recvmsg on an accelerated socket (MSG_WAITALL, blocking, timeouts). */
/* An iovec holds a range no mapping can (uaddr.c): the call fails with
 * EFAULT where Linux's copy would. */
bool pl_uaddr_bad(const struct iovec *iov, size_t n);
ssize_t pl_sock_recvmsg(struct pl_sock *s, int fd, struct msghdr *msg,
                        int flags);
/** sendmsg on an accelerated socket. *sigpipe is set when the caller must
 *  raise SIGPIPE after leaving the library. */
ssize_t pl_sock_sendmsg(struct pl_sock *s, int fd, const struct msghdr *msg,
                        int flags, bool *sigpipe);
int pl_sock_recvmmsg(struct pl_sock *s, int fd, struct mmsghdr *vec,
                     unsigned int vlen, int flags, struct timespec *timeout);
int pl_sock_sendmmsg(struct pl_sock *s, int fd, struct mmsghdr *vec,
                     unsigned int vlen, int flags, bool *sigpipe);
ssize_t pl_sock_sendfile(struct pl_sock *s, int out, int in, off_t *off,
                         size_t n, bool *sigpipe);

/**
 * The data-path decision for an UNDECIDED socket whose first operation is
 * a send with a destination (UDP sendto): accelerate or go kernel.
 * Returns the new state (PL_SOCK_ACCEL / PL_SOCK_KERNEL / unchanged).
 */
int pl_sock_decide_send(struct pl_sock *s, int fd, const struct sockaddr *a,
                        socklen_t len);

#endif /* ACCEL_PL_SOCK_H */
