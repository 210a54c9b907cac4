/*
 * accel-broker: the privileged helper that lets a process without
 * CAP_NET_RAW, CAP_BPF and CAP_NET_ADMIN run on accel's stack over
 * af_xdp (docs/DESIGN.md section 3, "Privileges"). It runs as root in
 * the network namespace of the interfaces it serves, one broker per
 * namespace, and listens on /run/accel/broker-<netns inode>.sock (mode
 * 0660, group accel, in /run/accel: 2770 root:accel). The protocol is
 * runtime/broker_proto.h; serve.c answers it, policy.c decides, xdp.c
 * holds the program.
 *
 *   accel-broker --iface IF [--iface IF2 ...] [--group NAME]
 *                [--memlock-max-mb N] [--socket PATH] [--pid-file PATH]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker.h"

static volatile bool stop;

void
abr_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(line))
        n = sizeof(line) - 1;
    fprintf(stderr, "accel-broker: %.*s\n", n, line);
}

static void
on_signal(int sig)
{
    (void)sig;
    stop = true;
}

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: accel-broker --iface IF [--iface IF ...] [--group NAME]\n"
            "                    [--memlock-max-mb N] [--socket PATH] "
            "[--pid-file PATH]\n"
            "Hands AF_XDP sockets and accel's XDP steering to processes "
            "of group NAME\n(default " AB_GROUP_DEFAULT
            ") in this network namespace; runs as root.\n");
}

/* /run/accel: 2770 root:group, so the group's members can make their
 * interface locks and nobody else can even look inside. */
static int
ensure_dir(gid_t gid)
{
    struct stat st;

    if (mkdir(AB_DIR, 02770) != 0 && errno != EEXIST)
        return -errno;
    if (lstat(AB_DIR, &st) != 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
        return -EPERM;
    if (chown(AB_DIR, 0, gid) != 0 || chmod(AB_DIR, 02770) != 0)
        return -errno;
    return 0;
}

static void
default_socket(char *path, size_t n)
{
    struct stat st;
    unsigned long ns = 0;

    if (stat("/proc/self/ns/net", &st) == 0)
        ns = (unsigned long)st.st_ino;
    snprintf(path, n, AB_DIR "/broker-%lu.sock", ns);
}

static int
listen_on(const char *path, gid_t gid)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    mode_t old;
    int fd, rc;

    if (strlen(path) >= sizeof(a.sun_path))
        return -ENAMETOOLONG;
    memcpy(a.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    unlink(path);
    old = umask(0177); /* created 0600, then given to the group */
    rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    umask(old);
    if (rc == 0 && (chown(path, 0, gid) != 0 || chmod(path, 0660) != 0))
        rc = -1;
    if (rc == 0)
        rc = listen(fd, 64);
    if (rc != 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

static int
write_pid(const char *path)
{
    char b[32];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int n = snprintf(b, sizeof(b), "%d\n", (int)getpid());

    if (fd < 0)
        return -errno;
    if (write(fd, b, (size_t)n) != n) {
        close(fd);
        return -EIO;
    }
    close(fd);
    return 0;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"iface", required_argument, NULL, 'i'},
        {"group", required_argument, NULL, 'g'},
        {"memlock-max-mb", required_argument, NULL, 'm'},
        {"socket", required_argument, NULL, 's'},
        {"pid-file", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct abp_conf conf = {.group_name = AB_GROUP_DEFAULT,
                            .memlock_max = 1024ull << 20};
    struct sigaction sa = {.sa_handler = on_signal};
    char sock[sizeof(((struct sockaddr_un *)0)->sun_path)] = "";
    const char *pidfile = NULL;
    struct group *gr;
    int c, lfd, rc;

    while ((c = getopt_long(argc, argv, "i:g:m:s:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (conf.nifaces == ABP_MAX_IFACES || strlen(optarg) >= IFNAMSIZ) {
                abr_log("--iface %s: at most %d names of up to %d characters",
                        optarg, ABP_MAX_IFACES, IFNAMSIZ - 1);
                return 2;
            }
            conf.ifaces[conf.nifaces++] = optarg;
            break;
        case 'g':
            conf.group_name = optarg;
            break;
        case 'm':
            conf.memlock_max = strtoull(optarg, NULL, 10) << 20;
            break;
        case 's':
            snprintf(sock, sizeof(sock), "%s", optarg);
            break;
        case 'p':
            pidfile = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (conf.nifaces == 0 || optind != argc) {
        usage(stderr);
        return 2;
    }
    if (geteuid() != 0) {
        abr_log("must run as root (it loads XDP programs and makes AF_XDP "
                "sockets for its clients)");
        return 1;
    }
    gr = getgrnam(conf.group_name);
    if (gr == NULL) {
        abr_log("group %s does not exist; create it (groupadd --system %s) "
                "and add the services' users to it",
                conf.group_name, conf.group_name);
        return 1;
    }
    conf.group = gr->gr_gid;
    rc = ensure_dir(conf.group);
    if (rc != 0) {
        abr_log("cannot set up %s as 2770 root:%s: %s", AB_DIR, conf.group_name,
                strerror(-rc));
        return 1;
    }
    if (sock[0] == '\0')
        default_socket(sock, sizeof(sock));
    lfd = listen_on(sock, conf.group);
    if (lfd < 0) {
        abr_log("cannot listen on %s: %s", sock, strerror(-lfd));
        return 1;
    }
    if (pidfile != NULL && (rc = write_pid(pidfile)) != 0)
        abr_log("cannot write %s: %s", pidfile, strerror(-rc));
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    abr_log("listening on %s (group %s, %d interface%s, memlock up to %llu "
            "MB per client)",
            sock, conf.group_name, conf.nifaces, conf.nifaces > 1 ? "s" : "",
            (unsigned long long)(conf.memlock_max >> 20));
    rc = abr_serve(lfd, &conf, &stop);
    close(lfd);
    unlink(sock);
    if (pidfile != NULL)
        unlink(pidfile);
    return rc == 0 ? 0 : 1;
}
