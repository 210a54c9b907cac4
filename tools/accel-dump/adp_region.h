/*
 * The live state region of one process, opened read-write for its capture
 * ring (base/statreg_layout.h). accel-dump's own small helper: it maps
 * the file, checks the parts it uses, and takes and gives back the
 * capture (cap_on) with atomic operations on the mapped words.
 */
#ifndef ACCEL_TOOLS_ADP_REGION_H
#define ACCEL_TOOLS_ADP_REGION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "adp_ring.h"
#include "statreg_layout.h"

/* The environment variable naming the regions' directory (tests). */
#define ADP_DIR_ENV "ACCEL_STAT_DIR"

/* A region header must reach this far to hold the capture part. */
#define ADP_HDR_NEED                                                           \
    (offsetof(struct base_sr_hdr, cap_alive_ns) + sizeof(uint64_t))

struct adp_region {
    struct base_sr_hdr *h;
    size_t len; /* mapped: the file's size at open */
    int fd;
    pid_t pid;
    dev_t dev; /* the file's, to notice it removed or replaced */
    ino_t ino;
    char path[PATH_MAX];
};

/* What adp_region_open failed on (the message is in err). */
enum adp_open_err {
    ADP_OPEN_OK = 0,
    ADP_OPEN_NONE,  /* no region, or a stale one: no accel process */
    ADP_OPEN_PERM,  /* not ours to open */
    ADP_OPEN_OLD,   /* an older library: no capture part */
    ADP_OPEN_OTHER, /* not a region, another layout version, corrupt */
};

/** The regions' directory: $ACCEL_STAT_DIR, or BASE_SR_DIR. */
const char *adp_region_dir(void);

/**
 * Open and map the region of pid in dir, read-write, and check its
 * header and capture ring bounds.
 * @return ADP_OPEN_OK, or another enum adp_open_err with one line in err.
 */
int adp_region_open(struct adp_region *r, const char *dir, pid_t pid, char *err,
                    size_t errlen);
void adp_region_close(struct adp_region *r);

/** The consumer's view of the ring, its tail at the region's cap_tail. */
void adp_region_ring(struct adp_region *r, struct adp_ring *ring);

/** True when pid runs (kill(pid, 0) succeeds or says EPERM). */
bool adp_pid_alive(pid_t pid);

/** The capturing accel-dump's pid, or 0. */
pid_t adp_cap_owner(const struct adp_region *r);

/**
 * Take the capture for self: cap_snaplen, cap_tail = cap_head,
 * cap_alive_ns = now, then cap_on 0 (or a dead accel-dump's pid) -> self.
 * @return 0, or -EBUSY with *holder the live accel-dump that has it.
 */
int adp_cap_claim(struct adp_region *r, uint32_t snaplen, pid_t self,
                  pid_t *holder);

/** Again after the data path gave up on us (cap_on went to 0): the tail
 *  stays, the records not read yet are still valid. 0 or -EBUSY. */
int adp_cap_resume(struct adp_region *r, pid_t self, pid_t *holder);

/** Tell the data path we are alive (cap_alive_ns = CLOCK_MONOTONIC). */
void adp_cap_alive(struct adp_region *r);

/** Give the capture back (cap_on self -> 0); false when it was not ours. */
bool adp_cap_release(struct adp_region *r, pid_t self);

/**
 * Whether the target still runs: NULL while it does, else why not
 * ("exited", "is exiting", ...): its frames end there.
 */
const char *adp_region_gone(const struct adp_region *r);

#endif /* ACCEL_TOOLS_ADP_REGION_H */
