/*
 * One accel process per interface. af_xdp takes the interface's queue and
 * its XDP program; a second process probing the same interface would
 * fail over to af_packet and, on the way, detach the first one's program,
 * cutting it off. So the process that starts the port on ACCEL_IFACE holds
 * an exclusive flock on a file named after the network namespace and the
 * interface; its fork children share it (same open file), and anything
 * else (an exec'd child, an unrelated program) finds it taken: it joins
 * the owner's port (share_join.c) or, if it cannot, stays on the kernel
 * with one line saying why (start.c). The lock goes away with the last
 * process holding the open file, dead or alive. The file itself is
 * ifacelock_file.c's (`accel-run --prepare` takes it too).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "ifacelock.h"
#include "log.h"
#include "rt_int.h"

int
rt__iface_lock(const char *iface, char *owner, size_t on)
{
    char path[256];
    int fd, rc;

    rc = rt__iface_lock_try(iface, &fd, owner, on, path, sizeof(path));
    if (rc == -EBUSY)
        return rc;
    if (rc != 0) {
        /* cannot open the file, or flock failed otherwise */
        BASE_INFO("start",
                  "cannot lock %s (%s); going on without the "
                  "one-process-per-interface check",
                  path, strerror(-rc));
        return 0;
    }
    (void)rt__fd_move_high(fd); /* held for the process's life */
    return 0;
}
