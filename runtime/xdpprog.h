/*
 * accel's XDP steering program (xdp/steer.bpf.c) on an interface: loaded,
 * or adopted from an earlier process (xdpprog.c). Used by the library for
 * a privileged process and by accel-broker for the others; nothing here
 * logs: failures come back as -errno and a sentence in why.
 */
#ifndef ACCEL_RT_XDPPROG_H
#define ACCEL_RT_XDPPROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The program's name (its function in steer.bpf.c). */
#define RT__XDPPROG_NAME "accel_steer"

/* The constants the program is loaded with (network byte order). */
struct rt__xdpprog_cfg {
    uint32_t ip, mask;
    bool shared; /* the kernel holds ip too (xdpsteer4.c) */
};

/* The program attached to ifindex, as this process holds it. */
struct rt__xdpprog {
    int ifindex;
    int prog_fd, xsks_fd; /* -1 when not held */
    bool adopted;         /* attached by an earlier process, kept */
};

/** Make accel's program with c's constants the one attached to ifindex.
 *  An accel_steer of this build with the same constants left attached by
 *  an earlier process is adopted, its maps emptied (the caller holds the
 *  interface lock: nobody else uses it); one with other constants, or of
 *  another build, is replaced; any other program is left alone (-EEXIST,
 *  why says so). 0 with p filled, or -errno. */
int rt__xdpprog_ensure(int ifindex, const struct rt__xdpprog_cfg *c,
                       struct rt__xdpprog *p, char *why, size_t n);
/** Detach p's program if it is still the one attached (0, or -errno);
 *  close p's fds. */
int rt__xdpprog_detach(struct rt__xdpprog *p);
/** Close p's fds; the program stays attached (it passes every frame to
 *  the kernel while its xsks_map is empty). */
void rt__xdpprog_release(struct rt__xdpprog *p);
/** Write c's constants over the placeholders in buf (the object, or its
 *  .rodata): 0, or -ENOENT unless each is there exactly once. */
int rt__xdpprog_patch(void *buf, size_t n, const struct rt__xdpprog_cfg *c);
/** An fd of the map called name of the loaded program prog_fd, or
 *  -ENOENT. */
int rt__xdpprog_map_fd(int prog_fd, const char *name);
/** An fd of the accel_steer program attached to ifindex, or -ENOENT (none,
 *  or another program), -errno. */
int rt__xdpprog_attached(int ifindex);

#ifdef __cplusplus
}
#endif

#endif
