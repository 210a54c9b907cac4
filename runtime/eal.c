/*
 * DPDK EAL start-up inside someone else's process. The EAL arguments come
 * only from the configuration, never from the application's argv: always
 * --no-pci and --no-telemetry, a unique --file-prefix accel-<pid>, hugepages
 * (with --huge-unlink) or --no-huge -m ACCEL_MEM_MB per ACCEL_HUGEPAGES, one
 * lcore taken from the CPUs the process may use, a quiet --log-level, then
 * ACCEL_VDEV and ACCEL_EAL_ARGS. The application's CPU affinity is saved
 * before rte_eal_init (which pins the calling thread) and restored after.
 * DPDK's own log lines are routed to our log (stderr or ACCEL_LOG_FILE, never
 * stdout) through a stdio cookie stream. ACCEL_IFACE devices are not on the
 * command line: they are hot-plugged after init with rte_dev_probe, so the
 * caller can fall back from af_xdp to af_packet within the one EAL init a
 * process gets. Nothing here calls exit() or rte_exit().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "log.h"
#include "rt_int.h"

#define MAX_ARGS 64

/* ---- DPDK log lines into our log --------------------------------------- */

static __thread bool dpdk_line_start = true;

static ssize_t
dpdk_log_write(void *c, const char *buf, size_t size)
{
    char pre[64];
    size_t i = 0;

    (void)c;
    while (i < size) {
        const char *nl = memchr(buf + i, '\n', size - i);
        size_t n = nl ? (size_t)(nl - (buf + i)) + 1 : size - i;

        if (dpdk_line_start) {
            int p =
                snprintf(pre, sizeof(pre), "accel[%d:%d] dpdk: ", (int)getpid(),
                         (int)gettid());
            base_log_raw(pre, (unsigned long)p);
        }
        base_log_raw(buf + i, n);
        dpdk_line_start = nl != NULL;
        i += n;
    }
    return (ssize_t)size;
}

static void
route_dpdk_log(void)
{
    static FILE *stream;
    cookie_io_functions_t io = {.write = dpdk_log_write};

    if (stream == NULL) {
        stream = fopencookie(NULL, "w", io);
        if (stream == NULL)
            return;
        setvbuf(stream, NULL, _IOLBF, 0);
    }
    rte_openlog_stream(stream);
}

/* libbpf and libxdp (loaded by the af_xdp PMD) print to stderr by default,
 * including harmless notes such as "No bpffs found". Route them to our log
 * at info level. Their callbacks have the same shape:
 * int fn(enum level, const char *fmt, va_list). */
static int
bpf_log_print(int level, const char *fmt, va_list ap)
{
    /* Their levels: 0 warn, 1 info, 2 debug (the object's sections,
     * maps and relocations: some 60 lines per start). A warning while a
     * driver is tried quietly (af_xdp before the af_packet fallback) is
     * as quiet as the port's own failure lines. */
    int warn = rt__port_fail_level > BASE_LOG_WARN ? rt__port_fail_level
                                                   : BASE_LOG_WARN;
    int ours = level == 0 ? warn : level == 1 ? BASE_LOG_INFO : BASE_LOG_DEBUG;
    char buf[512];
    int n;

    if (base_log_level < ours)
        return 0;
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    if (n > 0 && (size_t)n < sizeof(buf) && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    base_log_write(ours, "bpf", "%s", buf);
    return 0;
}

static void
route_bpf_log(void)
{
    static const char *const libs[][2] = {
        {"libbpf.so.1", "libbpf_set_print"},
        {"libbpf.so.0", "libbpf_set_print"},
        {"libxdp.so.1", "libxdp_set_print"},
    };

    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        void *h = dlopen(libs[i][0], RTLD_NOW | RTLD_NOLOAD);
        void *(*set)(void *);

        if (h == NULL)
            continue;
        *(void **)&set = dlsym(h, libs[i][1]);
        if (set != NULL)
            set((void *)bpf_log_print);
        dlclose(h);
    }
}

/* ---- the EAL runtime directory -------------------------------------------
 * Default (multi-process capable) mode leaves /var/run/dpdk/accel-<pid>/
 * behind: remove ours at exit, and those of dead processes at start. */

static pid_t eal_owner;

static void
remove_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char p[512];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(path);
}

/* The 2 MB hugetlbfs mount EAL uses (passed as --huge-dir). */
static char huge_dir[256] = "/dev/hugepages";

/* With --single-file-segments (one fd per memseg list instead of one per
 * hugepage, which keeps the fd count small) EAL cannot unlink its hugepage
 * files for us (--huge-unlink is refused with it), so remove
 * /dev/hugepages/accel-<pid>map_* ourselves: once the port is up (EAL keeps
 * its fds; a SIGKILLed process leaves nothing behind), at exit for files
 * made after that, at start for dead processes' (a process killed during
 * its start). The memory stays mapped until the process ends. */
static void
remove_hugepage_files(long pid)
{
    char prefix[64], p[512];
    DIR *d = opendir(huge_dir);
    struct dirent *e;
    size_t n;

    if (d == NULL)
        return;
    n = (size_t)snprintf(prefix, sizeof(prefix), "accel-%ldmap_", pid);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, n) != 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", huge_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static void
remove_stale_hugepage_files(void)
{
    DIR *d = opendir(huge_dir);
    struct dirent *e;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid;

        if (strncmp(e->d_name, "accel-", 6) != 0)
            continue;
        pid = strtol(e->d_name + 6, &end, 10);
        if (strncmp(end, "map_", 4) != 0 || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        remove_hugepage_files(pid);
    }
    closedir(d);
}

static void
remove_runtime_dir_at_exit(void)
{
    /* Forked children share the parent's directory: only the process
     * that initialised EAL removes it. */
    if (getpid() == eal_owner) {
        remove_dir(rte_eal_get_runtime_dir());
        remove_hugepage_files((long)eal_owner);
    }
}

static void
remove_stale_runtime_dirs(void)
{
    char parent[256], p[512];
    const char *rd = rte_eal_get_runtime_dir();
    char *slash;
    DIR *d;
    struct dirent *e;

    snprintf(parent, sizeof(parent), "%s", rd);
    slash = strrchr(parent, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    d = opendir(parent);
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid;

        if (strncmp(e->d_name, "accel-", 6) != 0)
            continue;
        pid = strtol(e->d_name + 6, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        snprintf(p, sizeof(p), "%s/%s", parent, e->d_name);
        remove_dir(p);
    }
    closedir(d);
}

/* ---- memif: a stale server socket ----------------------------------------
 * A memif server killed by a signal leaves its socket file behind, and the
 * next server on that path then fails to start. Before EAL probes an
 * ACCEL_VDEV memif server with a socket file, remove the file if it is a
 * socket nobody listens on (connect gives ECONNREFUSED). */

static bool
vdev_opt(const char *vdev, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);

    for (const char *p = strchr(vdev, ','); p != NULL; p = strchr(p, ',')) {
        p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            size_t vlen = strcspn(p + klen + 1, ",");
            snprintf(out, n, "%.*s", (int)vlen, p + klen + 1);
            return true;
        }
    }
    return false;
}

static void
remove_stale_memif_socket(const char *vdev)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char role[16], abstract[8];
    struct stat st;
    int fd;

    if (strncmp(vdev, "net_memif", 9) != 0 ||
        !vdev_opt(vdev, "role", role, sizeof(role)) ||
        strcmp(role, "server") != 0 ||
        !vdev_opt(vdev, "socket-abstract", abstract, sizeof(abstract)) ||
        strcmp(abstract, "no") != 0 ||
        !vdev_opt(vdev, "socket", sa.sun_path, sizeof(sa.sun_path)) ||
        stat(sa.sun_path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return;
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
        errno == ECONNREFUSED) {
        BASE_INFO("eal", "removing stale memif socket %s", sa.sun_path);
        unlink(sa.sun_path);
    }
    close(fd);
}

/* ---- hugepages ----------------------------------------------------------- */

static long
read_long(const char *path)
{
    char buf[32];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

/* True if a hugetlbfs of 2 MB pages is mounted (needed by default mode). */
static bool
hugetlbfs_2m_mounted(void)
{
    char buf[8192];
    ssize_t n;
    int fd = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC);
    bool found = false;

    if (fd < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    for (char *line = buf; line != NULL && *line != '\0';) {
        char *next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        /* "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0";
         * no pagesize option means the default size, 2 MB on x86-64. */
        if (!found && strstr(line, " hugetlbfs ") != NULL &&
            (strstr(line, "pagesize=") == NULL ||
             strstr(line, "pagesize=2M") != NULL)) {
            char *dir = strchr(line, ' ');
            char *end = dir != NULL ? strchr(dir + 1, ' ') : NULL;
            if (end != NULL && (size_t)(end - dir - 1) < sizeof(huge_dir)) {
                memcpy(huge_dir, dir + 1, (size_t)(end - dir - 1));
                huge_dir[end - dir - 1] = '\0';
                /* The first one this process may create files in: a
                 * service's user has its group's (accel-lab: a mount
                 * 1770 root:accel), not root's /dev/hugepages. */
                found =
                    faccessat(AT_FDCWD, huge_dir, W_OK | X_OK, AT_EACCESS) == 0;
            }
        }
        line = next;
    }
    return found;
}

/* 0: use hugepages; 1: use --no-huge; -errno with the reason logged. */
static int
choose_nohuge(const struct base_cfg *cfg)
{
    long free_pages, need = (cfg->mem_mb + 1) / 2;
    bool mounted;

    if (cfg->hugepages == BASE_HUGE_OFF)
        return 1;
    mounted = hugetlbfs_2m_mounted();
    free_pages =
        read_long("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
    if (mounted && free_pages >= need)
        return 0;
    if (cfg->hugepages == BASE_HUGE_AUTO) {
        BASE_INFO("eal",
                  "hugepages not used (%s, %ld free 2M pages, %ld needed): "
                  "running with --no-huge",
                  mounted ? "hugetlbfs mounted" : "no hugetlbfs mounted",
                  free_pages < 0 ? 0 : free_pages, need);
        return 1;
    }
    if (!mounted)
        BASE_ERR("eal",
                 "ACCEL_HUGEPAGES=on: no hugetlbfs of 2M pages is mounted; "
                 "mount one (mount -t hugetlbfs -o pagesize=2M nodev "
                 "/dev/hugepages, or `accel-lab up`) or set "
                 "ACCEL_HUGEPAGES=auto");
    else
        BASE_ERR("eal",
                 "ACCEL_HUGEPAGES=on: %ld free 2M hugepages, ACCEL_MEM_MB=%u "
                 "needs %ld; reserve more (nr_hugepages in "
                 "/sys/kernel/mm/hugepages/hugepages-2048kB), lower "
                 "ACCEL_MEM_MB, or set ACCEL_HUGEPAGES=auto",
                 free_pages < 0 ? 0 : free_pages, cfg->mem_mb, need);
    return -ENOMEM;
}

/* ---- the runtime directory of a process that is not root ----------------
 * The EAL puts its runtime directory in $RUNTIME_DIRECTORY (systemd) or
 * $XDG_RUNTIME_DIR, else /tmp/dpdk for every user but root: the first
 * user's 0700 /tmp/dpdk locks every other user out. With neither set, a
 * directory of the user's own, /run/accel/run-<uid> (0700, in the group's
 * 2770 /run/accel), is given to the EAL for its init only. */
static bool
private_runtime_dir(void)
{
    static char dir[64];
    uid_t uid = getuid();
    struct stat st;

    if (uid == 0 || getenv("RUNTIME_DIRECTORY") != NULL ||
        getenv("XDG_RUNTIME_DIR") != NULL)
        return false;
    snprintf(dir, sizeof(dir), "/run/accel/run-%u", (unsigned)uid);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return false;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid ||
        (st.st_mode & 077) != 0)
        return false;
    return setenv("XDG_RUNTIME_DIR", dir, 1) == 0;
}

/* The EAL's files in its runtime directory (its config, memory maps, the
 * multi-process socket, made with the application's umask): this user's
 * only. */
static void
private_runtime_files(void)
{
    const char *rd = rte_eal_get_runtime_dir();
    DIR *d = opendir(rd);
    struct dirent *e;
    struct stat st;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            S_ISLNK(st.st_mode) || (st.st_mode & 077) == 0)
            continue;
        fchmodat(dirfd(d), e->d_name, st.st_mode & 0700, 0);
    }
    closedir(d);
}

/* ---- EAL init ------------------------------------------------------------ */

struct argv_buf {
    char *argv[MAX_ARGS + 1];
    int argc;
    char store[2048];
    size_t used;
};

static int
add_arg(struct argv_buf *a, const char *s)
{
    size_t n = strlen(s) + 1;

    if (a->argc >= MAX_ARGS || a->used + n > sizeof(a->store))
        return -E2BIG;
    memcpy(a->store + a->used, s, n);
    a->argv[a->argc++] = a->store + a->used;
    a->argv[a->argc] = NULL;
    a->used += n;
    return 0;
}

static int
build_args(const struct base_cfg *cfg, int nohuge, int lcore,
           struct argv_buf *a)
{
    char tmp[64];
    int rc = 0;

    rc |= add_arg(a, "accel");
    rc |= add_arg(a, "--no-pci");
    rc |= add_arg(a, "--no-telemetry");
    snprintf(tmp, sizeof(tmp), "%d", lcore);
    rc |= add_arg(a, "-l");
    rc |= add_arg(a, tmp);
    snprintf(tmp, sizeof(tmp), "accel-%d", (int)getpid());
    rc |= add_arg(a, "--file-prefix");
    rc |= add_arg(a, tmp);
    rc |= add_arg(a, "--log-level");
    rc |= add_arg(a, cfg->log_level >= BASE_LOG_DEBUG ? "8" : "5");
    /* Without root the EAL cannot read physical addresses (pagemap):
     * af_xdp, af_packet and memif work on virtual ones. */
    if (geteuid() != 0)
        rc |= add_arg(a, "--iova-mode=va");
    if (nohuge)
        rc |= add_arg(a, "--no-huge");
    else { /* one fd per memseg list, not one per page; see above */
        rc |= add_arg(a, "--single-file-segments");
        rc |= add_arg(a, "--huge-dir");
        rc |= add_arg(a, huge_dir);
    }
    /* With hugepages, ACCEL_MEM_MB is a limit, not an amount taken at
     * start: the EAL's dynamic memory maps (and the kernel zeroes) only
     * what the pool and rings need, about 40 MB by default, instead of
     * 256 MB before the first frame (20 ms of start-up here). --no-huge
     * memory is reserved by -m and touched only when used. */
    snprintf(tmp, sizeof(tmp), "%u", cfg->mem_mb);
    rc |= add_arg(a, nohuge ? "-m" : "--socket-limit");
    rc |= add_arg(a, tmp);
    if (cfg->vdev[0] != '\0') {
        rc |= add_arg(a, "--vdev");
        rc |= add_arg(a, cfg->vdev);
    }
    if (cfg->eal_args[0] != '\0') {
        char copy[BASE_CFG_STR_MAX], *save = NULL;

        snprintf(copy, sizeof(copy), "%s", cfg->eal_args);
        for (char *t = strtok_r(copy, " \t", &save); t != NULL;
             t = strtok_r(NULL, " \t", &save))
            rc |= add_arg(a, t);
    }
    return rc != 0 ? -E2BIG : 0;
}

int
rt__eal_init(const struct base_cfg *cfg)
{
    struct argv_buf a = {.argc = 0};
    cpu_set_t saved;
    int nohuge, lcore = 0, rc;
    bool have_aff, private_run;

    if (cfg->vdev[0] == '\0' && if_nametoindex(cfg->iface) == 0) {
        BASE_ERR("eal",
                 "ACCEL_IFACE=%s: no such network interface in this network "
                 "namespace; run inside the lab namespace (ip netns exec "
                 "accel-a ...) after `accel-lab up`, or set ACCEL_IFACE to an "
                 "existing interface",
                 cfg->iface);
        return -ENODEV;
    }
    nohuge = choose_nohuge(cfg);
    if (nohuge < 0)
        return nohuge;

    have_aff = sched_getaffinity(0, sizeof(saved), &saved) == 0;
    if (have_aff) {
        for (int c = 0; c < CPU_SETSIZE && c < RTE_MAX_LCORE; c++) {
            if (CPU_ISSET(c, &saved)) {
                lcore = c;
                break;
            }
        }
    }
    rc = build_args(cfg, nohuge, lcore, &a);
    if (rc != 0) {
        BASE_ERR("eal", "ACCEL_EAL_ARGS: too many arguments; shorten it");
        return rc;
    }
    if (base_log_level >= BASE_LOG_DEBUG) {
        for (int i = 0; i < a.argc; i++)
            BASE_DBG("eal", "arg %d: %s", i, a.argv[i]);
    }
    if (cfg->vdev[0] != '\0')
        remove_stale_memif_socket(cfg->vdev);
    route_dpdk_log();
    private_run = private_runtime_dir();
    rc = rte_eal_init(a.argc, a.argv);
    if (private_run)
        unsetenv("XDG_RUNTIME_DIR");
    if (have_aff)
        sched_setaffinity(0, sizeof(saved), &saved);
    if (rc < 0) {
        int e = rte_errno != 0 ? rte_errno : EINVAL;
        BASE_ERR("eal",
                 "DPDK EAL init failed (%s)%s; check the dpdk lines above, "
                 "ACCEL_HUGEPAGES/ACCEL_MEM_MB%s",
                 rte_strerror(e),
                 e == EALREADY ? ": EAL can be started once per process" : "",
                 cfg->eal_args[0] != '\0' ? " and ACCEL_EAL_ARGS" : "");
        return -e;
    }
    eal_owner = getpid();
    private_runtime_files();
    atexit(remove_runtime_dir_at_exit);
    remove_stale_runtime_dirs();
    remove_stale_hugepage_files();
    route_bpf_log();
    BASE_INFO("eal", "EAL up (%s, %u MB, lcore %d, %s DPDK)",
              nohuge ? "--no-huge" : "hugepages", cfg->mem_mb, lcore,
              rt__eal_fast ? "static" : "shared");
    return 0;
}

void
rt__eal_unlink_hugepages(void)
{
    if (eal_owner == getpid())
        remove_hugepage_files((long)eal_owner);
}

int
rt__eal_probe(const char *devargs, uint16_t *port_id)
{
    char name[64];
    size_t n = strcspn(devargs, ",");
    int rc;

    rc = rte_dev_probe(devargs);
    if (rc < 0)
        return rc;
    snprintf(name, sizeof(name), "%.*s", (int)n, devargs);
    rc = rte_eth_dev_get_port_by_name(name, port_id);
    if (rc != 0) {
        rte_eal_hotplug_remove("vdev", name);
        return -ENODEV;
    }
    return 0;
}

void
rt__eal_remove(uint16_t port_id)
{
    char name[RTE_ETH_NAME_MAX_LEN];

    if (rte_eth_dev_get_name_by_port(port_id, name) != 0)
        return;
    rte_eth_dev_close(port_id);
    rte_eal_hotplug_remove("vdev", name);
}

int
rt__eal_first_port(uint16_t *port_id)
{
    uint16_t p;

    RTE_ETH_FOREACH_DEV(p)
    {
        *port_id = p;
        return 0;
    }
    return -ENODEV;
}
