/*
 * The live state region of this process (statreg_layout.h): created at the
 * first socket the library decides about, rewritten by the data path,
 * removed at exit. accel-stat reads it.
 *
 * The counters (stats.h) live in it once it exists: base_stats points
 * there, so an increment costs what it did. The port and the socket table
 * are snapshots taken every snapshot interval by the progress thread
 * (base_sr_tick), the sockets only while a reader asks for them.
 */
#ifndef ACCEL_BASE_STATREG_H
#define ACCEL_BASE_STATREG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "statreg_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fills the port part of a snapshot (runtime). */
typedef void (*base_sr_port_fn)(struct base_sr_port *p);
/** Fills up to max socket records; returns how many it wrote, *total
 *  the sockets it saw (preload). Called without any lock held. */
typedef uint32_t (*base_sr_socks_fn)(struct base_sr_sock *out, uint32_t max,
                                     uint32_t *total);

/** Make the region if there is none (or, in a fork child, its own). The
 *  counters move into it under lock (the stack lock, which every increment
 *  holds): call without it. Failures are logged once; the process goes on
 *  without a region. */
void base_sr_ensure(void (*lock)(void), void (*unlock)(void));

/** The data path's description for the header (state: base_sr_state). */
void base_sr_set_datapath(uint32_t state, const char *desc, const char *iface,
                          const char *ip, const char *ip6, int owner_pid);

/** Who fills the snapshot's parts. */
void base_sr_set_port_fn(base_sr_port_fn fn);
void base_sr_set_socks_fn(base_sr_socks_fn fn);

/** Take a snapshot if one is due (the progress thread, no lock held;
 *  port_locked runs fn under the caller's stack lock). */
void base_sr_tick(uint64_t now_ns, void (*lock)(void), void (*unlock)(void));

/** A socket left on the kernel: fd, the reason (index into why.def), the
 *  call and its address (may be NULL). */
void base_sr_kernel_note(int fd, int why, const char *call,
                         const struct sockaddr *a, socklen_t len);

/** Capture (accel-dump, statreg_cap.c): while base_sr_capturing, each
 *  frame the stack receives or sends is reserved (NULL: no room, or the
 *  capture ended; counted), its caplen bytes copied to base_sr_cap_data,
 *  and committed with its drop mark (enum base_sr_cap_drop). Stack lock
 *  held. */
extern _Atomic bool base_sr_capturing;
struct base_sr_cap *base_sr_cap_reserve(uint8_t dir, uint32_t origlen,
                                        uint32_t *caplen);
void base_sr_cap_commit(struct base_sr_cap *r, uint8_t drop);
static inline uint8_t *
base_sr_cap_data(struct base_sr_cap *r)
{
    return (uint8_t *)(r + 1);
}

/** In a fork child, before anything else: the parent's region is the
 *  parent's; counters go back to private memory until the child's own
 *  region is made. */
void base_sr_atfork_child(void);

/** Remove the region (exit, exec). */
void base_sr_remove(void);

/** The file name of pid's region. */
void base_sr_path(int pid, char *buf, unsigned long n);

#ifdef __cplusplus
}
#endif

#endif
