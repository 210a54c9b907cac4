/*
 * A memif port shared across fork (share.c makes the region; this file
 * keeps every process's view of the memif shared memory in step).
 *
 * The memif PMD keeps its queues and its region table in DPDK memory
 * (hugepages, shared by fork), but maps the regions with a plain mmap in
 * the process that runs its control channel: the first process's EAL
 * interrupt thread. When the peer connects after the fork, or reconnects
 * (every new peer process does), the new regions exist only there, and a
 * child's burst would follow the shared pointers into unmapped memory.
 *
 * So, once the port is shared:
 *
 *  - that interrupt thread holds the port lock while it runs callbacks
 *    (preload's epoll_wait calls rt_mf_wait_begin/end around its wait), so
 *    no burst runs while the PMD maps, unmaps or rewires the queues;
 *  - the shared-memory maps it makes there are placed in an address range
 *    reserved before the first fork (rt_mf_mmap, from preload's mmap), so
 *    the same addresses are free in every child; each change bumps a
 *    generation in the region;
 *  - a process whose generation is behind (checked under the port lock
 *    before each burst, one load) releases the lock, asks the first
 *    process for the maps over an abstract Unix socket (its interrupt
 *    thread answers with the memfds, SCM_RIGHTS), maps them at the same
 *    addresses and tries again.
 *
 * Limits: a peer whose rings ask for interrupts (memif's interrupt mode;
 * DPDK peers always poll) would be notified through an eventfd only the
 * first process has; the maps are refreshed only while the first process
 * lives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>

#include "clock.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"

#define MF_RESERVE (1ull << 30) /* address space kept for the maps */
#define MF_ALIGN (1ull << 21)
#define MF_MAX 64
#define MF_ASK_MS 2000
#define MF_RETRY_NS 100000000ull

struct mf_map {
    uint64_t addr, len, off;
    int32_t prot;
    uint64_t dev, ino; /* of the file, to tell a kept map from a new one */
};

struct mf_msg {
    uint64_t gen;
    uint32_t n;
    uint32_t bad; /* a shared map could not be placed: do not follow */
    struct mf_map m[MF_MAX];
};

_Atomic bool rt_mf_armed;
static bool mf_on;     /* the port is memif and shared */
static bool mf_first;  /* this process runs the control channel */
static bool mf_broken; /* maps could not be refreshed: no bursts here */
static uintptr_t mf_base;
static struct mf_map mf_tab[MF_MAX];
static int mf_fd[MF_MAX]; /* first process: its own dup of each file */
static int mf_n;
static bool mf_bad;     /* first process: a shared map was not placed */
static uint64_t mf_gen; /* the generation of this process's maps */
static uint64_t mf_next_try_ns;
static int mf_lfd = -1;
static struct rte_intr_handle *mf_ih;
static __thread bool mf_in_cb; /* interrupt thread, port lock held */

/* A memif port of this process alone (rt__mf_own_arm; a fork that shares
 * it hands over to mf_first): its interrupt thread runs the PMD's
 * callbacks holding the stack lock, under which every burst runs. The
 * callbacks of a peer's disconnect unmap the rings, and a burst running
 * meanwhile (a server spinning in recv) read the unmapped memory:
 * SIGSEGV in librte_net_memif, about one sockperf run in 40 when its
 * client exits. At exit the port is closed holding the stack lock, and
 * the close waits for those callbacks: from then on (mf_own_closing) they
 * run without it, as DPDK runs them. */
static bool mf_own;
static _Atomic bool mf_own_closing;
static __thread bool mf_own_held; /* interrupt thread, stack lock held */

static bool
is_memif(void)
{
    struct rte_eth_dev_info info;

    return rte_eth_dev_info_get(rt__port.port_id, &info) == 0 &&
           info.driver_name != NULL && strstr(info.driver_name, "memif");
}

static socklen_t
sock_addr(struct sockaddr_un *sa)
{
    size_t n = strlen(rt__sh->mf_name);

    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path + 1, rt__sh->mf_name, n); /* abstract */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static void
publish(void)
{
    mf_gen++;
    atomic_store_explicit(&rt__sh->mf_gen, mf_gen, memory_order_release);
}

static bool
slot_pid(int pid)
{
    for (int i = 0; i < SH_SLOTS; i++)
        if (atomic_load(&rt__sh->slot[i].state) == SLOT_LIVE &&
            atomic_load(&rt__sh->slot[i].pid) == pid)
            return true;
    return false;
}

/* Interrupt thread, port lock held: answer every waiting request with
 * the current maps and their files. */
static void
serve(void *arg)
{
    (void)arg;
    for (;;) {
        long c = syscall(SYS_accept4, mf_lfd, NULL, NULL,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        struct ucred cr;
        socklen_t crl = sizeof(cr);
        struct mf_msg msg;
        char cbuf[CMSG_SPACE(sizeof(int) * MF_MAX)];
        struct iovec iov = {&msg, sizeof(msg)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

        if (c < 0)
            return;
        if (syscall(SYS_getsockopt, (int)c, SOL_SOCKET, SO_PEERCRED, &cr,
                    &crl) != 0 ||
            !slot_pid(cr.pid)) {
            syscall(SYS_close, (int)c);
            continue;
        }
        memset(&msg, 0, sizeof(msg));
        msg.gen = mf_gen;
        msg.n = (uint32_t)mf_n;
        msg.bad = mf_bad;
        memcpy(msg.m, mf_tab, sizeof(mf_tab[0]) * (size_t)mf_n);
        if (mf_n > 0) {
            struct cmsghdr *cm;

            memset(cbuf, 0, sizeof(cbuf));
            mh.msg_control = cbuf;
            mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)mf_n);
            cm = CMSG_FIRSTHDR(&mh);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)mf_n);
            memcpy(CMSG_DATA(cm), mf_fd, sizeof(int) * (size_t)mf_n);
        }
        if (syscall(SYS_sendmsg, (int)c, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
            BASE_WARN("share",
                      "memif maps not sent to pid %d (%s): it asks again; "
                      "nothing to do unless this repeats",
                      cr.pid, strerror(errno));
        syscall(SYS_close, (int)c);
    }
}

int
rt__mf_create(void)
{
    struct sockaddr_un sa;
    socklen_t sl;
    long fd = -1;
    void *p;

    if (!is_memif())
        return 0;
    p = mmap(NULL, MF_RESERVE, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    snprintf(rt__sh->mf_name, sizeof(rt__sh->mf_name), "accel-memif-%016llx-%d",
             (unsigned long long)rt__sh->key[1], (int)getpid());
    fd = syscall(SYS_socket, AF_UNIX,
                 SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        goto fail;
    fd = rt__fd_move_high((int)fd);
    sl = sock_addr(&sa);
    if (syscall(SYS_bind, (int)fd, &sa, sl) != 0 ||
        syscall(SYS_listen, (int)fd, 64) != 0)
        goto fail;
    mf_ih = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
    if (mf_ih == NULL || rte_intr_fd_set(mf_ih, (int)fd) != 0 ||
        rte_intr_type_set(mf_ih, RTE_INTR_HANDLE_EXT) != 0 ||
        rte_intr_callback_register(mf_ih, serve, NULL) != 0)
        goto fail;
    mf_lfd = (int)fd;
    mf_base = (uintptr_t)p;
    mf_on = mf_first = true;
    mf_gen = 0;
    publish();
    rt__sh->mf_pid = (int)getpid();
    /* Registering woke the interrupt thread: its next wait is hooked. */
    atomic_store(&rt_mf_armed, true);
    return 0;
fail:;
    int e = errno;
    if (mf_ih != NULL)
        rte_intr_instance_free(mf_ih);
    mf_ih = NULL;
    if (fd >= 0)
        syscall(SYS_close, (int)fd);
    munmap(p, MF_RESERVE);
    rt__sh->mf_name[0] = 0;
    return -e;
}

void
rt__mf_child(void)
{
    /* The parent's interrupt thread is not in the child. */
    mf_own = false;
    mf_own_held = false;
    if (!mf_on) {
        atomic_store(&rt_mf_armed, false);
        return;
    }
    if (mf_first) {
        for (int i = 0; i < mf_n; i++) {
            syscall(SYS_close, mf_fd[i]);
            mf_fd[i] = -1;
        }
        if (mf_lfd >= 0)
            syscall(SYS_close, mf_lfd);
        mf_lfd = -1;
        mf_first = false;
        atomic_store(&rt_mf_armed, false);
    }
    mf_in_cb = false;
    mf_next_try_ns = 0;
}

bool
rt__mf_may_close(void)
{
    /* Only the first process has the control channel: closing the port
     * elsewhere would send on a socket number that is not its own. */
    return !mf_on || mf_first;
}

/* ---- the first process: its interrupt thread ---------------------------- */

bool
rt_mf_intr_thread(void)
{
    return rte_thread_is_intr() != 0;
}

void
rt_mf_wait_begin(void)
{
    if (mf_own_held) {
        mf_own_held = false;
        rt_unlock();
    }
    if (!mf_in_cb)
        return;
    mf_in_cb = false;
    rt__sh_port_unlock();
}

void
rt_mf_wait_end(int n)
{
    struct timespec ts = {0, 20000};

    if (n <= 0)
        return;
    if (mf_first) {
        rt__sh_port_lock();
        mf_in_cb = true;
        return;
    }
    if (!mf_own)
        return;
    /* Not a blocking lock: the port's close at exit holds it and waits
     * for these callbacks. */
    while (!rt__trylock()) {
        if (atomic_load(&mf_own_closing))
            return;
        nanosleep(&ts, NULL);
    }
    mf_own_held = true;
}

void
rt__mf_own_arm(void)
{
    mf_own = true;
    atomic_store(&mf_own_closing, false);
    atomic_store(&rt_mf_armed, true);
}

void
rt__mf_own_closing(void)
{
    atomic_store(&mf_own_closing, true);
}

bool
rt_mf_in_callbacks(void)
{
    return mf_in_cb;
}

static uint64_t
find_gap(uint64_t len)
{
    uint64_t at = 0;

    for (;;) {
        bool clash = false;

        for (int i = 0; i < mf_n; i++) {
            uint64_t a = mf_tab[i].addr - mf_base, e = a + mf_tab[i].len;
            if (at < e && a < at + len) {
                at = (e + MF_ALIGN - 1) & ~(MF_ALIGN - 1);
                clash = true;
            }
        }
        if (at + len > MF_RESERVE)
            return UINT64_MAX;
        if (!clash)
            return at;
    }
}

void *
rt_mf_mmap(size_t len, int prot, int flags, int fd, off_t off, int *err)
{
    struct stat st;
    uint64_t at;
    void *p;
    int dup;

    if (!mf_in_cb || !(flags & MAP_SHARED) || fd < 0)
        return NULL;
    at = mf_n < MF_MAX && fstat(fd, &st) == 0 ? find_gap(len) : UINT64_MAX;
    dup =
        at == UINT64_MAX ? -1 : (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) {
        /* The children could not follow this map: they stop using the
         * port rather than fault on it. */
        if (!mf_bad)
            BASE_ERR("share",
                     "memif: a shared map of %zu bytes cannot be placed for "
                     "the forked processes (%d maps, 1 GiB reserved); they "
                     "stop using the port: give the memif peer smaller "
                     "rings or buffers, and restart them",
                     len, mf_n);
        mf_bad = true;
        publish();
        return NULL;
    }
    p = (void *)syscall(SYS_mmap, mf_base + at, len, prot, flags | MAP_FIXED,
                        fd, off);
    if (p == MAP_FAILED) {
        *err = errno;
        syscall(SYS_close, dup);
        return MAP_FAILED;
    }
    mf_fd[mf_n] = rt__fd_move_high(dup);
    mf_tab[mf_n] = (struct mf_map){(uintptr_t)p, len,       (uint64_t)off,
                                   prot,         st.st_dev, st.st_ino};
    mf_n++;
    publish();
    return p;
}

static void
reserve_again(uint64_t addr, uint64_t len)
{
    syscall(SYS_mmap, addr, len, PROT_NONE,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

bool
rt_mf_munmap(void *addr, size_t len)
{
    for (int i = 0; mf_in_cb && i < mf_n; i++) {
        if (mf_tab[i].addr != (uintptr_t)addr || mf_tab[i].len != len)
            continue;
        reserve_again(mf_tab[i].addr, mf_tab[i].len);
        syscall(SYS_close, mf_fd[i]);
        mf_tab[i] = mf_tab[mf_n - 1];
        mf_fd[i] = mf_fd[mf_n - 1];
        mf_n--;
        publish();
        return true;
    }
    return false;
}

/* ---- the other processes --------------------------------------------------
 */

bool
rt__mf_stale(void)
{
    return rt__shared && mf_on && !mf_first &&
           (mf_broken || atomic_load_explicit(&rt__sh->mf_gen,
                                              memory_order_acquire) != mf_gen);
}

static bool
same(const struct mf_map *a, const struct mf_map *b)
{
    return a->addr == b->addr && a->len == b->len && a->off == b->off &&
           a->dev == b->dev && a->ino == b->ino;
}

/* Replace this process's maps by the first process's. */
static bool
apply(const struct mf_msg *msg, const int *fds, int nfd)
{
    bool ok = true;

    if ((int)msg->n != nfd || msg->bad)
        return false;
    for (int i = 0; i < mf_n; i++) {
        bool kept = false;
        for (uint32_t j = 0; j < msg->n; j++)
            kept |= same(&mf_tab[i], &msg->m[j]);
        if (!kept)
            reserve_again(mf_tab[i].addr, mf_tab[i].len);
    }
    for (uint32_t j = 0; j < msg->n; j++) {
        const struct mf_map *m = &msg->m[j];
        bool have = false;
        void *p;

        for (int i = 0; i < mf_n; i++)
            have |= same(&mf_tab[i], m);
        if (have)
            continue;
        if (m->addr < mf_base || m->addr + m->len > mf_base + MF_RESERVE) {
            ok = false;
            continue;
        }
        p = (void *)syscall(SYS_mmap, m->addr, m->len, m->prot,
                            MAP_SHARED | MAP_FIXED, fds[j], m->off);
        if (p == MAP_FAILED) {
            BASE_ERR("share",
                     "memif map at %#llx not made here (%s): this process "
                     "asks again before using the port; if this repeats, "
                     "restart it",
                     (unsigned long long)m->addr, strerror(errno));
            reserve_again(m->addr, m->len);
            ok = false;
        }
    }
    mf_n = (int)msg->n;
    memcpy(mf_tab, msg->m, sizeof(msg->m[0]) * msg->n);
    mf_gen = msg->gen;
    return ok;
}

static bool
ask(void)
{
    struct sockaddr_un sa;
    socklen_t sl = sock_addr(&sa);
    struct mf_msg msg;
    char cbuf[CMSG_SPACE(sizeof(int) * MF_MAX)];
    struct iovec iov = {&msg, sizeof(msg)};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cbuf,
                        .msg_controllen = sizeof(cbuf)};
    struct pollfd pfd;
    int fds[MF_MAX], nfd = 0;
    bool ok = false;
    long s, n;

    s = syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return false;
    if (syscall(SYS_connect, (int)s, &sa, sl) != 0) {
        BASE_WARN("share",
                  "memif maps: the port's first process does not "
                  "answer (%s); asking again, nothing to do unless this "
                  "repeats",
                  strerror(errno));
        syscall(SYS_close, (int)s);
        return false;
    }
    pfd = (struct pollfd){(int)s, POLLIN, 0};
    if (syscall(SYS_poll, &pfd, 1, MF_ASK_MS) == 1) {
        n = syscall(SYS_recvmsg, (int)s, &mh, MSG_CMSG_CLOEXEC);
        if (n == (long)sizeof(msg)) {
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL;
                 cm = CMSG_NXTHDR(&mh, cm)) {
                if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                    continue;
                nfd = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)nfd);
            }
            mf_bad = msg.bad != 0;
            ok = msg.n <= MF_MAX && apply(&msg, fds, nfd);
        }
    }
    for (int i = 0; i < nfd; i++)
        syscall(SYS_close, fds[i]);
    syscall(SYS_close, (int)s);
    return ok;
}

void
rt__mf_refresh(void)
{
    uint64_t now = base_now_ns();

    if (mf_broken || now < mf_next_try_ns)
        return;
    if (ask()) {
        BASE_DBG("share", "memif maps refreshed (generation %llu, %d maps)",
                 (unsigned long long)mf_gen, mf_n);
        return;
    }
    mf_next_try_ns = now + MF_RETRY_NS;
    if (!slot_pid(rt__sh->mf_pid) || mf_bad) {
        mf_broken = true;
        BASE_ERR("share",
                 "memif maps cannot be refreshed (%s): this process "
                 "stops using the port; its connections will time "
                 "out: restart it",
                 mf_bad ? "a map was not placed"
                        : "the port's first process is gone");
    }
}
