/*
 * The live state region (statreg.h, layout in statreg_layout.h).
 *
 * Made with raw system calls (the library interposes libc's names): a
 * 0600 file in /dev/shm sized for the header, the counters and their
 * names, the reasons, the port, the kernel ring and the socket table,
 * mapped shared. tmpfs gives pages only where they are written, so the
 * socket table's half megabyte costs nothing until a reader asks for it.
 * The magic is written last: a reader never takes a half-made header for
 * a region. At creation the regions of this user's dead processes (killed
 * before their exit removed them) are removed.
 */
#define _GNU_SOURCE
#include "statreg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cfg.h"
#include "clock.h"
#include "log.h"
#include "statreg_int.h"
#include "stats.h"

#define SR_SOCK_MAX 4096u
#define SR_KERN_MAX 256u
#define SR_INTERVAL_MS 250u
#define SR_CAP_SIZE (4u << 20) /* the capture ring: 32 ms of 1 Gbit/s */
#define SR_ALIGN(x) (((x) + 63u) & ~63u)

_Static_assert(sizeof(struct base_sr_sock) == 128, "base_sr_sock layout");
_Static_assert(sizeof(struct base_sr_kern) == 64, "base_sr_kern layout");
_Static_assert(sizeof(struct base_sr_hdr) <= 4096, "base_sr_hdr layout");
_Static_assert(sizeof(struct base_counters) % sizeof(uint64_t) == 0,
               "counters are 64-bit words");

static const char *const why_texts[] = {
#define PL_WHY(name, warns, text) text,
#include "why.def"
#undef PL_WHY
};

/* This process's region (NULL: none yet), published with release after
 * hdr_pid; read through mine(). */
static _Atomic(struct base_sr_hdr *) hdr;
static int hdr_pid;
static bool failed_logged;
static atomic_bool given_up; /* off (ACCEL_STATS_LIVE=0), or not made */
static uint64_t last_snap_ns;
static _Atomic(base_sr_port_fn) port_fn; /* set at start, read by the tick */
static _Atomic(base_sr_socks_fn) socks_fn;
static struct {
    uint32_t state;
    char desc[160], iface[32], ip[64], ip6[64];
    int owner;
} dp;

/* The region, if it is this process's (a fork child's is made anew). */
static struct base_sr_hdr *
mine(void)
{
    struct base_sr_hdr *h = atomic_load_explicit(&hdr, memory_order_acquire);

    return h != NULL && hdr_pid == (int)syscall(SYS_getpid) ? h : NULL;
}

struct base_sr_hdr *
base_sr__hdr(void)
{
    return atomic_load_explicit(&hdr, memory_order_relaxed);
}

void
base_sr_path(int pid, char *buf, unsigned long n)
{
    snprintf(buf, n, BASE_SR_DIR "/" BASE_SR_PREFIX "%d", pid);
}

/* Up to n-1 bytes of a /proc file, NUL-terminated; the length or -1. */
static long
read_proc(const char *path, char *buf, size_t n)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC), r,
         got = 0;

    if (fd < 0)
        return -1;
    while ((size_t)got < n - 1 &&
           (r = syscall(SYS_read, (int)fd, buf + got, n - 1 - (size_t)got)) > 0)
        got += r;
    syscall(SYS_close, (int)fd);
    buf[got] = '\0';
    return got;
}

/* Field 22 of /proc/self/stat: the start time in clock ticks after boot. */
static uint64_t
starttime(void)
{
    char b[1024], *p;
    int field = 2;

    if (read_proc("/proc/self/stat", b, sizeof(b)) <= 0)
        return 0;
    p = strrchr(b, ')'); /* comm may hold spaces and parentheses */
    if (p == NULL)
        return 0;
    for (p++; *p != '\0' && field < 22; p++)
        if (*p == ' ')
            field++;
    return strtoull(p, NULL, 10);
}

static void
fill_identity(struct base_sr_hdr *h)
{
    long n;

    h->pid = (int32_t)syscall(SYS_getpid);
    h->ppid = (int32_t)syscall(SYS_getppid);
    h->uid = (uint32_t)syscall(SYS_geteuid);
    h->starttime = starttime();
    {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        h->created_ns =
            (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    n = read_proc("/proc/self/comm", h->comm, sizeof(h->comm));
    if (n > 0 && h->comm[n - 1] == '\n')
        h->comm[n - 1] = '\0';
    n = read_proc("/proc/self/cmdline", h->cmdline, sizeof(h->cmdline));
    for (long i = 0; i < n - 1; i++)
        if (h->cmdline[i] == '\0')
            h->cmdline[i] = ' ';
}

static void
write_datapath(struct base_sr_hdr *h)
{
    memcpy(h->datapath, dp.desc, sizeof(h->datapath));
    memcpy(h->iface, dp.iface, sizeof(h->iface));
    memcpy(h->ip, dp.ip, sizeof(h->ip));
    memcpy(h->ip6, dp.ip6, sizeof(h->ip6));
    h->port_owner_pid = dp.owner;
    atomic_store_explicit((_Atomic uint32_t *)&h->state, dp.state,
                          memory_order_release);
}

/* Remove this user's regions whose process is gone. */
static void
clean_stale(void)
{
    char buf[4096];
    long dfd = syscall(SYS_openat, AT_FDCWD, BASE_SR_DIR,
                       O_RDONLY | O_DIRECTORY | O_CLOEXEC),
         n;
    uid_t me = (uid_t)syscall(SYS_geteuid);

    if (dfd < 0)
        return;
    while ((n = syscall(SYS_getdents64, (int)dfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < n;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *d = (void *)(buf + off);
            size_t plen = sizeof(BASE_SR_PREFIX) - 1;
            struct stat st;
            char *end;
            long pid;

            off += d->reclen;
            if (strncmp(d->name, BASE_SR_PREFIX, plen) != 0)
                continue;
            pid = strtol(d->name + plen, &end, 10);
            if (*end != '\0' || pid <= 0 ||
                syscall(SYS_newfstatat, (int)dfd, d->name, &st,
                        AT_SYMLINK_NOFOLLOW) != 0 ||
                st.st_uid != me)
                continue;
            if (syscall(SYS_kill, (int)pid, 0) != 0 && errno == ESRCH)
                syscall(SYS_unlinkat, (int)dfd, d->name, 0);
        }
    }
    syscall(SYS_close, (int)dfd);
}

static void
remove_at_exit(void)
{
    base_sr_remove();
}

static void
fail_once(const char *path, int err)
{
    atomic_store(&given_up, true);
    if (failed_logged)
        return;
    failed_logged = true;
    BASE_INFO("stat",
              "cannot make %s (%s): accel-stat will not see this process; "
              "check that %s is a writable tmpfs",
              path, strerror(err), BASE_SR_DIR);
}

static pthread_mutex_t make_mu = PTHREAD_MUTEX_INITIALIZER;

void
base_sr_ensure(void (*lock)(void), void (*unlock)(void))
{
    static bool atexit_done;
    size_t nstats = sizeof(struct base_counters) / sizeof(uint64_t);
    size_t names_len = 0, why_len = 0, off, size, nwhy;
    char path[64];
    struct base_sr_hdr *h;
    char *p;
    long fd;
    int saved = errno, pid = (int)syscall(SYS_getpid);

    if (mine() != NULL)
        return;
    if (atomic_load(&given_up) || base_cfg_load() != 0 ||
        !base_cfg.stats_live) {
        atomic_store(&given_up, true);
        return;
    }
    /* One maker at a time (two would truncate each other's file); the
     * file is made without the stack lock, which only the switch of the
     * counters needs. */
    pthread_mutex_lock(&make_mu);
    if (mine() != NULL || atomic_load(&given_up))
        goto out;
    nwhy = sizeof(why_texts) / sizeof(why_texts[0]);
    for (size_t i = 0; i < nstats; i++)
        names_len += strlen(base_stats_name(i)) + 1;
    for (size_t i = 0; i < nwhy; i++)
        why_len += strlen(why_texts[i]) + 1;
    off = 4096 + SR_ALIGN(nstats * sizeof(uint64_t));
    size = off + SR_ALIGN(names_len) + SR_ALIGN(why_len) +
           SR_ALIGN(sizeof(struct base_sr_port)) +
           SR_KERN_MAX * sizeof(struct base_sr_kern) +
           SR_SOCK_MAX * sizeof(struct base_sr_sock);
    size = (size + 4095) & ~(size_t)4095;
    size += SR_CAP_SIZE;
    clean_stale();
    base_sr_path(pid, path, sizeof(path));
    fd = syscall(SYS_openat, AT_FDCWD, path,
                 O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        fail_once(path, errno);
        goto out;
    }
    syscall(SYS_fchmod, (int)fd, 0600); /* whatever the umask */
    if (syscall(SYS_ftruncate, (int)fd, (long)size) != 0) {
        fail_once(path, errno);
        syscall(SYS_close, (int)fd);
        syscall(SYS_unlink, path);
        goto out;
    }
    h = (void *)syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE,
                        MAP_SHARED, (int)fd, 0L);
    syscall(SYS_close, (int)fd);
    if ((unsigned long)h > -4096UL) {
        fail_once(path, ENOMEM);
        syscall(SYS_unlink, path);
        goto out;
    }
    h->version = BASE_SR_VERSION;
    h->hdr_size = sizeof(*h);
    h->size = size;
    fill_identity(h);
    h->nstats = (uint32_t)nstats;
    h->stats_off = 4096;
    h->names_off = (uint32_t)off;
    h->names_len = (uint32_t)names_len;
    p = (char *)h + off;
    for (size_t i = 0; i < nstats; i++) {
        size_t l = strlen(base_stats_name(i)) + 1;

        memcpy(p, base_stats_name(i), l);
        p += l;
    }
    off += SR_ALIGN(names_len);
    h->nwhy = (uint32_t)nwhy;
    h->why_off = (uint32_t)off;
    h->why_len = (uint32_t)why_len;
    p = (char *)h + off;
    for (size_t i = 0; i < nwhy; i++) {
        size_t l = strlen(why_texts[i]) + 1;

        memcpy(p, why_texts[i], l);
        p += l;
    }
    off += SR_ALIGN(why_len);
    h->port_off = (uint32_t)off;
    off += SR_ALIGN(sizeof(struct base_sr_port));
    h->kern_off = (uint32_t)off;
    h->kern_max = SR_KERN_MAX;
    h->kern_size = sizeof(struct base_sr_kern);
    off += SR_KERN_MAX * sizeof(struct base_sr_kern);
    h->sock_off = (uint32_t)off;
    h->sock_max = SR_SOCK_MAX;
    h->sock_size = sizeof(struct base_sr_sock);
    h->snap_interval_ms = SR_INTERVAL_MS;
    h->cap_off = (uint32_t)(size - SR_CAP_SIZE);
    h->cap_size = SR_CAP_SIZE;
    write_datapath(h);
    /* The counters move in: from now on every increment lands here. */
    lock();
    memcpy((char *)h + h->stats_off, &base_stats, sizeof(base_stats));
    base_stats_place((struct base_counters *)((char *)h + h->stats_off));
    atomic_store_explicit((_Atomic uint64_t *)&h->magic, BASE_SR_MAGIC,
                          memory_order_release);
    hdr_pid = pid;
    atomic_store_explicit(&hdr, h, memory_order_release);
    unlock();
    if (!atexit_done) {
        atexit_done = true;
        atexit(remove_at_exit);
    }
out:
    pthread_mutex_unlock(&make_mu);
    errno = saved;
}

void
base_sr_set_datapath(uint32_t state, const char *desc, const char *iface,
                     const char *ip, const char *ip6, int owner_pid)
{
    struct base_sr_hdr *h;

    pthread_mutex_lock(&make_mu); /* ensure() copies dp */
    dp.state = state;
    snprintf(dp.desc, sizeof(dp.desc), "%s", desc != NULL ? desc : "");
    snprintf(dp.iface, sizeof(dp.iface), "%s", iface != NULL ? iface : "");
    snprintf(dp.ip, sizeof(dp.ip), "%s", ip != NULL ? ip : "");
    snprintf(dp.ip6, sizeof(dp.ip6), "%s", ip6 != NULL ? ip6 : "");
    dp.owner = owner_pid;
    h = mine();
    if (h != NULL)
        write_datapath(h);
    pthread_mutex_unlock(&make_mu);
}

void
base_sr_set_port_fn(base_sr_port_fn fn)
{
    atomic_store(&port_fn, fn);
}

void
base_sr_set_socks_fn(base_sr_socks_fn fn)
{
    atomic_store(&socks_fn, fn);
}

void
base_sr_tick(uint64_t now_ns, void (*lock)(void), void (*unlock)(void))
{
    struct base_sr_hdr *h = mine();
    base_sr_port_fn pf = atomic_load(&port_fn);
    base_sr_socks_fn sf = atomic_load(&socks_fn);
    _Atomic uint32_t *seq;
    struct base_sr_port port;
    uint64_t want;

    if (h == NULL) {
        if (atomic_load(&given_up))
            return;
        base_sr_ensure(lock, unlock);
        h = mine();
        if (h == NULL)
            return;
    }
    if (now_ns - last_snap_ns < (uint64_t)SR_INTERVAL_MS * 1000000u)
        return;
    last_snap_ns = now_ns;
    seq = (_Atomic uint32_t *)&h->snap_seq;
    memset(&port, 0, sizeof(port));
    lock();
    base_sr__cap_tick(h, now_ns); /* the capture's state is the stack's */
    if (pf != NULL)
        pf(&port);
    unlock();
    atomic_fetch_add_explicit(seq, 1, memory_order_acq_rel); /* odd */
    if (pf != NULL)
        memcpy((char *)h + h->port_off, &port, sizeof(port));
    want = atomic_load_explicit((_Atomic uint64_t *)&h->want_socks_until_ns,
                                memory_order_relaxed);
    if (sf != NULL && want > now_ns) {
        uint32_t total = 0;

        h->nsocks = sf((struct base_sr_sock *)((char *)h + h->sock_off),
                       h->sock_max, &total);
        h->socks_total = total;
    }
    h->snap_ns = now_ns;
    atomic_fetch_add_explicit(seq, 1, memory_order_release); /* even */
}

void
base_sr_kernel_note(int fd, int why, const char *call, const struct sockaddr *a,
                    socklen_t len)
{
    struct base_sr_hdr *hdr_ = mine();
    int family = 0, proto = 0;
    socklen_t ol = sizeof(int);
    struct base_sr_kern *r;
    _Atomic uint32_t *seq;
    struct timespec ts;
    struct stat st;
    uint64_t i;
    uint32_t s;
    int saved = errno;

    if (hdr_ == NULL)
        return;
    i = atomic_fetch_add_explicit((_Atomic uint64_t *)&hdr_->kern_next, 1,
                                  memory_order_relaxed);
    r = (struct base_sr_kern *)((char *)hdr_ + hdr_->kern_off) +
        (i % hdr_->kern_max);
    seq = (_Atomic uint32_t *)&r->seq;
    s = atomic_load_explicit(seq, memory_order_relaxed);
    atomic_store_explicit(seq, s | 1u, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    r->fd = fd;
    r->inode = syscall(SYS_fstat, fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->when_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    (void)syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_DOMAIN, &family, &ol);
    ol = sizeof(int);
    (void)syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_PROTOCOL, &proto, &ol);
    r->family = (uint8_t)family;
    r->proto = (uint8_t)proto;
    r->why = (uint8_t)why;
    r->port = 0;
    memset(r->addr, 0, sizeof(r->addr));
    if (a != NULL && a->sa_family == AF_INET &&
        len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *sin = (const void *)a;

        memcpy(r->addr, &sin->sin_addr, 4);
        r->port = sin->sin_port;
    } else if (a != NULL && a->sa_family == AF_INET6 &&
               len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *s6 = (const void *)a;

        memcpy(r->addr, &s6->sin6_addr, 16);
        r->port = s6->sin6_port;
    }
    snprintf(r->call, sizeof(r->call), "%s", call);
    atomic_store_explicit(seq, (s | 1u) + 1u, memory_order_release);
    errno = saved;
}

void
base_sr_atfork_child(void)
{
    struct base_sr_hdr *h = atomic_load(&hdr);

    pthread_mutex_init(&make_mu, NULL);
    if (h == NULL)
        return;
    base_sr__cap_stop();
    base_stats_place(NULL); /* back to private memory, values kept */
    syscall(SYS_munmap, h, (size_t)h->size);
    atomic_store(&hdr, NULL);
    last_snap_ns = 0;
}

void
base_sr_remove(void)
{
    struct base_sr_hdr *h = mine();
    char path[64];
    int saved = errno;

    if (h == NULL)
        return;
    base_sr__cap_stop();
    atomic_store_explicit((_Atomic uint32_t *)&h->state, BASE_SR_EXITING,
                          memory_order_release);
    base_sr_path(hdr_pid, path, sizeof(path));
    syscall(SYS_unlink, path);
    errno = saved;
}
