/*
 * What /proc says about the process behind a region: whether it still
 * runs and is the same process (its starttime, field 22 of
 * /proc/<pid>/stat, against the one the region recorded: a pid may have
 * been reused), whether one of its fds still is a given socket, and how
 * long it has run. Only /proc/<pid>/stat and /proc/<pid>/fd/N are read:
 * neither waits for the process (cmdline would, on its memory map lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ast.h"

/* Read a small /proc file into buf (NUL-terminated). Bytes read, or -1. */
static ssize_t
read_small(const char *path, char *buf, size_t len)
{
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read(fd, buf, len - 1);
    if (n < 0) {
        int e = errno;

        close(fd);
        errno = e;
        return -1;
    }
    close(fd);
    buf[n] = '\0';
    return n;
}

enum ast_liveness
ast_proc_state(int pid, uint64_t *starttime)
{
    char path[64], buf[1024], *p, *end;
    int field;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    if (read_small(path, buf, sizeof(buf)) < 0)
        return errno == ENOENT || errno == ESRCH ? AST_PROC_GONE
                                                 : AST_PROC_UNKNOWN;
    /* "pid (comm) S ...": comm may hold spaces and ')', so the fields
     * start after the last ')'. Field 3 is the state, 22 the starttime. */
    p = strrchr(buf, ')');
    if (p == NULL || p[1] != ' ')
        return AST_PROC_UNKNOWN;
    p += 2;
    if (*p == 'Z' || *p == 'X')
        return AST_PROC_GONE; /* exited, not yet reaped */
    for (field = 3; field < 22 && p != NULL; field++) {
        p = strchr(p, ' ');
        if (p != NULL)
            p++;
    }
    if (p == NULL)
        return AST_PROC_UNKNOWN;
    errno = 0;
    *starttime = strtoull(p, &end, 10);
    if (errno != 0 || end == p)
        return AST_PROC_UNKNOWN;
    return AST_PROC_ALIVE;
}

int
ast_proc_fd_is_socket(int pid, int fd, uint64_t inode)
{
    char path[64], link[64], want[48];
    ssize_t n;

    if (fd < 0)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    n = readlink(path, link, sizeof(link) - 1);
    if (n < 0)
        return errno == EACCES || errno == EPERM ? -1 : 0;
    link[n] = '\0';
    snprintf(want, sizeof(want), "socket:[%" PRIu64 "]", inode);
    return strcmp(link, want) == 0;
}

double
ast_proc_uptime(uint64_t starttime)
{
    char buf[128];
    long hz = sysconf(_SC_CLK_TCK);
    double up;

    if (hz <= 0 || read_small("/proc/uptime", buf, sizeof(buf)) < 0)
        return -1;
    up = strtod(buf, NULL) - (double)starttime / (double)hz;
    return up < 0 ? 0 : up;
}

void
ast_user_name(uint32_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];

    if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &res) == 0 && res != NULL)
        snprintf(buf, len, "%s", pw.pw_name);
    else
        snprintf(buf, len, "%" PRIu32, uid);
}
