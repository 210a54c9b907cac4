/*
 * runtime: the process-wide data path around the stack.
 *
 * Contract for callers (preload/):
 *  - rt_start() brings up EAL, the mbuf pool, the port and the stack, once,
 *    lazily, from the first thread that needs the data path. It never calls
 *    exit(); on any failure it logs one line naming the ACCEL_* variable and
 *    the fix, and returns -errno for the rest of the process (the caller then
 *    leaves the socket on the kernel).
 *  - All stk_* calls and rt_poll() run under the stack lock (rt_lock).
 *  - Every call made from library code into libc/DPDK happens with the
 *    calling thread marked "inside the library" (see preload), so the
 *    wrappers pass DPDK's own socket/poll/close calls straight to libc.
 *  - Return convention: 0 or a count on success, -errno on failure.
 */
#ifndef ACCEL_RT_H
#define ACCEL_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "waitkind.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Start the data path (idempotent, thread-safe). 0 or -errno. */
int rt_start(void);

/** True once rt_start() succeeded in this process. */
bool rt_started(void);

/** True if acceleration is configured at all (ACCEL_IP and a port). */
bool rt_configured(void);

/** The stack lock. Not recursive. */
void rt_lock(void);
void rt_unlock(void);

/**
 * One turn of the poll loop, under the stack lock: rx burst into the stack,
 * lwIP timers when due, tx flush. Returns the number of frames received.
 */
int rt_poll(void);

/**
 * Block the calling thread (stack lock NOT held) until the port may have
 * received frames, the stack signalled an event (rt_wakeup()), or
 * timeout_ms passes (-1: no limit, but never past the next lwIP timer).
 * It spins first for the budget of kind (waitkind.h).
 * extra_fds/nextra: kernel fds (pollfd array) waited on at the same time;
 * their revents are filled in. Returns the number of ready extra fds, 0, or
 * -errno (-EINTR when a signal arrived).
 * sig0: rt_sig_count when the caller's call began (before its first
 * attempt). A counted handler that ran since then, even before rt_block
 * was entered or between two rt_block calls of one call, ends the wait
 * with -EINTR at once: the kernel would have seen that signal pending
 * when its call went to sleep.
 */
struct pollfd;
int rt_block(enum rt_wait_kind kind, struct pollfd *extra_fds, int nextra,
             int timeout_ms, const void *sigmask, unsigned sig0);

/**
 * rt_block() for a wait on a condition the stack changes: ready(arg) is
 * asked (stack lock held) once the wait counts as a waiter, before it spins
 * or sleeps, and the wait returns 0 at once when it holds. An event the
 * stack signalled between the caller's last attempt and the wait (another
 * thread's poll completed a handshake or queued data) is then not missed:
 * rt_wakeup() only wakes waiters already counted.
 */
int rt_block_until(enum rt_wait_kind kind, struct pollfd *extra_fds, int nextra,
                   int timeout_ms, const void *sigmask, unsigned sig0,
                   bool (*ready)(void *), void *arg);

/** Wake every thread sleeping in rt_block(). Cheap when nobody sleeps. */
void rt_wakeup(void);

/**
 * Frames the stack queues go out at the end of every rt_poll(), unless the
 * calling thread sets rt_tx_defer (preload does, for threads that wait in
 * epoll/poll/select, when ACCEL_TX_DEFER=1): then they wait for
 * rt_flush(), rt_block(), a poll by another thread, or half a burst.
 */
extern __thread bool rt_tx_defer;
/** Set rt_tx_defer for this thread, and the stack's deferred TCP output
 *  (stk_output_defer) with it: the two always go together. */
void rt_set_tx_defer(bool on);
/** Send the queued frames now (takes the stack lock if there are any). */
void rt_flush(void);
/** Stack lock held: send the queued frames if this thread would at the end
 *  of an rt_poll() (not deferred, or half a burst queued). */
void rt_tx_kick(void);

/** Stack lock held: whether this process's last poll is older than
 *  ACCEL_RX_INTERVAL_USEC (an event loop's call then polls too). */
bool rt_poll_due(void);

/** Milliseconds until the next lwIP timer is due (>= 0). */
int rt_next_timer_ms(void);

/*
 * A memif port shared across fork (runtime/share_memif.c). In the port's
 * first process, once armed: EAL's interrupt thread calls
 * rt_mf_wait_begin() before each epoll_wait and rt_mf_wait_end() after it
 * (preload's wrapper), and while its callbacks run, mmap/munmap of shared
 * memory go through rt_mf_mmap()/rt_mf_munmap(), which place them where
 * every child can map them too.
 */
#ifndef __cplusplus
extern _Atomic bool rt_mf_armed;
#endif

/*
 * Signals and waits (runtime/block.c). preload's sigaction trampoline
 * counts every run of an application handler in the receiving thread;
 * while every installed handler is counted (rt_sig_counted), rt_block's
 * spin watches the count instead of blocking signals around the spin.
 */
extern __thread volatile unsigned rt_sig_count;
#ifndef __cplusplus
extern _Atomic bool rt_sig_counted;
#endif
bool rt_mf_intr_thread(void);
void rt_mf_wait_begin(void);
void rt_mf_wait_end(int n);
bool rt_mf_in_callbacks(void);
/** NULL: not placed (call libc); MAP_FAILED with *err; or the map. */
void *rt_mf_mmap(size_t len, int prot, int flags, int fd, off_t off, int *err);
/** true: it was one of the placed maps (now released). */
bool rt_mf_munmap(void *addr, size_t len);

/**
 * preload's socket() wrapper calls this for every AF_XDP / AF_PACKET socket
 * created while inside the library (DPDK PMDs creating their queues): the
 * runtime may use them as rx wait fds (poll POLLIN = frames in the ring).
 */
void rt_note_port_socket(int fd, int domain);

/**
 * preload's socket() wrapper asks this first for an AF_XDP socket made
 * while inside the library: an XSK from accel-broker when the port goes
 * through it (runtime/broker_client.c), -ENOSYS otherwise (make it).
 */
int rt_broker_socket(int type);
/** ... and this for libxdp's XDP_UMEM_REG on it: accel-broker registers
 *  the umem (0 or -errno), or -ENOSYS (register it). */
int rt_broker_umem_reg(int fd, const void *reg, unsigned int len);

/** A close-on-exec duplicate of fd among the runtime's own descriptors,
 *  above the range applications use (fdplace.c), or -errno. */
int rt_fd_dup_high(int fd);

/* ---- fork: several processes on the port (runtime/share.c) ---------- */

/** pthread_atfork handlers. prepare takes the stack lock (held across the
 *  fork); parent returns true when the child shares the port (the
 *  connections were frozen in both: see stk_fork_freeze); the child
 *  either joins the port or, when it cannot, runs on the kernel. */
void rt_atfork_prepare(void);
bool rt_atfork_parent(void);
void rt_atfork_child(void);

struct stk_sock;

/* ---- sockets of processes that share the port (runtime/share_sock.c) ---
 * The sharing protocol's one interface to preload: what a socket of this
 * process does that the other processes on the port must know of. The
 * flows, services, held segments and moved or pending connections stay
 * behind it (docs/DESIGN.md section 8 has the state diagram). Each takes
 * a stack socket, runs with the stack lock held and is cheap while the
 * port is not shared. */

/** Before this process first uses, after a fork, a socket that existed at
 *  the fork: true if the socket is this process's (a connection copied by
 *  fork is claimed: thawed, and the segments held meanwhile are input);
 *  false if another process took the connection (the copy here is
 *  dropped and reads as reset: report EBADF). */
bool rt_sock_claim(struct stk_sock *s);

/** accept() on listener l, which other processes may share: as
 *  stk_sock_accept, also taking a connection another process moved out
 *  for the port, and claiming one queued before a fork (skipping those
 *  another process accepted first). */
int rt_sock_accept(struct stk_sock *l, struct stk_sock **out,
                   struct sockaddr *a, socklen_t *len);

/** This process serves listener or bound UDP socket s (ON: it accepts,
 *  polls or epolls it, or receives on it), stops (OFF: an epoll removal),
 *  closes it (CLOSE: one copy fewer; when no process holds one any more,
 *  SYNs are refused again; its queued connections move to a process that
 *  serves the port), or only declares it (DECLARE: a listen(); once the
 *  port is shared, SYNs for a declared port go only to the processes that
 *  serve it). Nothing for other sockets. Cheap when repeated. */
enum { RT_SERVE_OFF = 0, RT_SERVE_ON, RT_SERVE_DECLARE, RT_SERVE_CLOSE };
void rt_sock_serve(struct stk_sock *s, int how);

/** A thread of this process starts (on) or stops (off) a blocking wait
 *  for connections on listener l (accept: in accept() itself, else in
 *  poll/epoll): new connections go to waiting servers first, and for
 *  servers that block in accept() they wait for one. */
void rt_sock_accept_wait(struct stk_sock *l, bool on, bool accept);
/** accept() returned a connection from listener l. */
void rt_sock_accepted(struct stk_sock *l);

/** stk_sock_events(s, gen), and EPOLLIN for a listener while connections
 *  another process moved out wait for its port. */
uint32_t rt_sock_events(struct stk_sock *s, uint32_t *gen);

/** Close s (the stack socket is freed): stop serving it (served: it was
 *  not found taken by another process), and give up a connection copied
 *  by fork (the last copy is closed for real, the others dropped). */
void rt_sock_close(struct stk_sock *s, bool served);
/** rt_sock_close, then, when the stack shares the interface's address:
 *  keep kfd (a descriptor of the socket's kernel socket, which holds its
 *  local port in the kernel) open until the connection's pcb is gone
 *  (TIME-WAIT included), so the kernel cannot reuse the port for the same
 *  peer meanwhile; otherwise kfd is closed at once. Takes kfd. */
void rt_sock_close_hold(struct stk_sock *s, bool served, int kfd);

/** The process is leaving without atexit handlers (_exit): close its
 *  connections (FIN or RST as close(2)), wait boundedly for their queued
 *  data to be acknowledged, leave the shared port. Idempotent. */
void rt_exit_drain(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RT_H */
