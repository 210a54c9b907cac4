/*
 * accel-run --prepare: loading accel's XDP program (the verifier) and
 * attaching it to an interface is most of a lone process's start-up
 * (12 ms on a veth, more where a NIC's driver reconfigures its rings).
 * Every process after the first adopts the one left attached
 * (runtime/xdpprog.c, ACCEL_XDP_KEEP); this attaches it before the first,
 * at boot or in a service's ExecStartPre, with the constants that process
 * will ask for: the same configuration code (base/cfg.c, the interface's
 * own address when ACCEL_IP is unset) and the same loader. With no XSK in
 * its map the program passes every frame to the kernel, so attaching it
 * early changes nothing for the kernel's traffic.
 *
 * The interface lock (runtime/ifacelock.h) is held meanwhile: a process
 * running on the interface already has its program attached and is left
 * alone; with the lock, adopting an earlier program empties its maps
 * (entries a killed process left).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "prepare.h"

#ifdef ACCEL_RUN_PREPARE
#include "ifacelock.h"
#include "xdpprog.h"
#endif

#define PROG "accel-run --prepare"

extern char **environ;

static int
empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

/* Nothing to attach for this configuration: why, or NULL. */
static const char *
nothing_to_do(const struct base_cfg *c)
{
    if (!empty(c->vdev))
        return "ACCEL_VDEV is set: the port is a DPDK device, no XDP program";
    if (c->driver == BASE_DRIVER_AF_PACKET)
        return "ACCEL_DRIVER=af_packet runs no XDP program";
    if (!c->xdp_steer)
        return "ACCEL_XDP_STEER=0: DPDK's own program is loaded by each "
               "process";
#ifndef ACCEL_DPDK_STATIC
    return "this build links DPDK's shared libraries: its af_xdp driver "
           "loads the program at each start";
#else
    return NULL;
#endif
}

#ifdef ACCEL_RUN_PREPARE
static int
attach(const struct base_cfg *c)
{
    const struct rt__xdpprog_cfg pc = {
        .ip = c->ip_addr, .mask = c->ip_mask, .shared = c->ip_shared};
    struct rt__xdpprog p;
    char owner[32], path[256], why[256];
    int ifindex = (int)if_nametoindex(c->iface), lock = -1, rc;

    if (ifindex == 0) {
        fprintf(stderr,
                PROG ": ACCEL_IFACE=%s: no such interface in this "
                     "network namespace\n",
                c->iface);
        return 1;
    }
    rc = rt__iface_lock_try(c->iface, &lock, owner, sizeof(owner), path,
                            sizeof(path));
    if (rc == -EBUSY) {
        fprintf(stderr,
                PROG ": %s: accel process %s runs on it; its program is "
                     "attached\n",
                c->iface, owner);
        return 0;
    }
    if (rc != 0) {
        fprintf(stderr,
                PROG ": cannot lock %s: %s (run it as root, as the "
                     "accelerated services' start does)\n",
                path, strerror(-rc));
        return 1;
    }
    rc = rt__xdpprog_ensure(ifindex, &pc, &p, why, sizeof(why));
    close(lock);
    if (rc != 0) {
        fprintf(stderr, PROG ": %s: %s%s\n", c->iface, why,
                rc == -EPERM ? " (needs root: CAP_BPF and CAP_NET_ADMIN)" : "");
        return 1;
    }
    rt__xdpprog_release(&p);
    fprintf(stderr,
            PROG ": %s: accel's XDP program for %s (%s) %s; the next "
                 "accelerated process adopts it\n",
            c->iface, c->ip,
            c->ip_shared ? "shared with the kernel" : "the stack's own address",
            p.adopted ? "was attached already (its maps emptied)" : "attached");
    return 0;
}
#endif

int
prep_run(void)
{
    struct base_cfg c;
    char err[512] = "", note[256];
    const char *skip;
    int rc = 2;

    memset(&c, 0, sizeof(c));
    if (base_cfg_parse(environ, &c, err, sizeof(err), NULL) != 0) {
        fprintf(stderr, PROG ": %s\n",
                err[0] ? err : "invalid ACCEL_* configuration");
        goto out;
    }
    if (empty(c.iface) && empty(c.vdev)) {
        fprintf(stderr, PROG ": set ACCEL_IFACE to the interface the "
                             "accelerated processes will use\n");
        goto out;
    }
    skip = nothing_to_do(&c);
    if (skip != NULL) {
        fprintf(stderr, PROG ": nothing to prepare: %s\n", skip);
        rc = 0;
        goto out;
    }
    rc = base_cfg_iface_addrs(&c, note, sizeof(note));
    if (rc != 0) {
        fprintf(stderr, PROG ": cannot read %s's addresses: %s\n", c.iface,
                strerror(-rc));
        rc = 1;
        goto out;
    }
    if (empty(c.ip)) {
        fprintf(stderr,
                PROG ": ACCEL_IP is not set and %s has no IPv4 address to "
                     "share; set ACCEL_IP=a.b.c.d/len\n",
                c.iface);
        rc = 1;
        goto out;
    }
#ifdef ACCEL_RUN_PREPARE
    rc = attach(&c);
#else
    fprintf(stderr, PROG ": this accel-run was built without the XDP "
                         "loader (no libbpf)\n");
    rc = 1;
#endif
out:
    base_cfg_free(&c);
    return rc;
}
