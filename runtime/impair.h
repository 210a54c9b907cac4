/*
 * Test-only impairment of the port's frames (ACCEL_TEST_IMPAIR): loss,
 * duplication, corruption, reordering, delay with jitter, and a rate
 * limit, as Linux's netem does on a kernel interface, for tests where no
 * kernel sits between the two ends (two accelerated processes over memif).
 *
 * Two parts. The engine (impair.c, no DPDK, accel_rtcore) applies a
 * parsed option (base/impair_spec.c) and impairs frames it knows only through
 * rt__imp_ops: the port hands it mbufs, a joined process heap copies, the unit
 * test fakes. Its clock is the caller's (a `now` argument), so a test drives it
 * with a fake one. The port's side (impair_port.c, accel_rtdpdk) holds one
 * engine per direction and is called from the few places frames enter and
 * leave the process (docs/DESIGN.md §2, "Test-only impairment").
 *
 * Internal to runtime/ (and its unit test). Every engine call for one
 * struct rt__imp is serialised by its user (the stack lock).
 */
#ifndef ACCEL_RT_IMPAIR_H
#define ACCEL_RT_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "impair_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the engine (impair.c) --------------------------------------------- */

/** Frames a reordered frame may wait for at most, and how long. */
#define RT__IMP_HOLD_MAX 16
#define RT__IMP_HOLD_NS 1000000ull

/** How the engine handles its user's frames. */
struct rt__imp_ops {
    /** Let f go (dropped, or the engine is cleared). */
    void (*drop)(void *f);
    /** A new frame with f's bytes, or NULL (no memory: no duplicate). */
    void *(*copy)(void *f);
    /** f's bytes, writable, and their count. */
    uint8_t *(*bytes)(void *f, uint32_t *len);
};

struct rt__imp_slot {
    void *f;
    uint64_t due; /* when it may leave */
};

/** One direction's impairment state. */
struct rt__imp {
    struct base_impair_spec sp;
    const struct rt__imp_ops *ops;
    uint64_t rng;
    /* The frames delay= and rate= hold, in the order they leave (their
     * due times never decrease): a ring of cap slots, a power of two. */
    struct rt__imp_slot *q;
    uint32_t cap, head, n;
    uint64_t last_due;  /* due time of the last frame queued */
    uint64_t link_free; /* rate=: when the link has sent what it took */
    /* Frames held by reorder=, oldest first: each leaves once `left`
     * frames went out after it (left == 0: it goes next). */
    struct {
        void *f;
        uint32_t left;
        bool passed; /* a later frame went out before it */
        uint64_t since;
    } hold[RT__IMP_HOLD_MAX];
    uint32_t nhold;
};

/** Start im with sp, a generator seeded with seed, frames handled by ops.
 *  0 or -ENOMEM. */
int rt__imp_init(struct rt__imp *im, const struct base_impair_spec *sp,
                 uint64_t seed, const struct rt__imp_ops *ops);

/**
 * Frames v[0..n) reach the impairment at now (n may be 0: only release).
 * Each is dropped (loss=), copied (dup=), corrupted (corrupt=), and queued
 * until its due time (delay=, rate=); then the frames due at now leave,
 * some held back behind the next ones (reorder=). On return v[0..r) are
 * the frames that leave now, in order, r <= cap; the engine owns the
 * others. v must have room for max(n, cap) pointers.
 */
uint32_t rt__imp_run(struct rt__imp *im, void **v, uint32_t n, uint32_t cap,
                     uint64_t now);

/** When rt__imp_run has frames to let leave next: a time <= now when some
 *  are due already, UINT64_MAX when it holds none. */
uint64_t rt__imp_next(const struct rt__imp *im);

/** Frames held: every frame is dropped through ops->drop (drop), or just
 *  forgotten (a fork child: they are the parent's to send). */
void rt__imp_clear(struct rt__imp *im, bool drop);

/** Clear (dropping) and free what rt__imp_init allocated. */
void rt__imp_fini(struct rt__imp *im);

/** The next 64 bits of im's generator (seeds for fork children). */
uint64_t rt__imp_rand(struct rt__imp *im);

/** Restart im's generator from seed. */
void rt__imp_reseed(struct rt__imp *im, uint64_t seed);

/* ---- the port's side (impair_port.c) ----------------------------------- */

struct rte_mbuf;

/** ACCEL_TEST_IMPAIR is set in this process: written once while the data
 *  path starts, before any frame; read-only after. */
extern bool rt__impair_on;

/** The hooks' test: one predictable branch when the option is empty. */
static inline bool
rt__impair_active(void)
{
    return __builtin_expect(rt__impair_on, 0);
}

/** In start_stack (rt__remote known, no frame yet): the engines of
 *  ACCEL_TEST_IMPAIR, if set. 0 or -errno (logged). */
int rt__impair_start(void);
/** Stack lock held: the n frames queued in v go through the tx
 *  impairment; those that leave now are put in v (at most RT__MAX_BURST):
 *  their count. */
uint32_t rt__impair_tx(struct rte_mbuf **v, uint32_t n);
/** The same for a joined process's send buffers: n frames of lens[i]
 *  bytes at base + i * stride are copied out; what leaves now is copied
 *  back into the first slots (at most RT__MAX_BURST). */
uint32_t rt__impair_tx_copies(uint8_t *base, size_t stride, uint16_t *lens,
                              uint32_t n);
/** Stack lock held: the n frames a receive burst put in v go through the
 *  rx impairment; those that reach the stack now are put in v (at most
 *  cap): their count. */
uint16_t rt__impair_rx(struct rte_mbuf **v, uint16_t n, uint16_t cap);
/** Held tx frames are due (any thread, no lock). */
bool rt__impair_tx_due(void);
/** When held frames (either direction) are due next, UINT64_MAX if none
 *  (any thread, no lock). */
uint64_t rt__impair_next_ns(void);
/** A sleep of timeout_ns (-1: none) cut to end when held frames are due. */
int64_t rt__impair_cap_wait(int64_t timeout_ns);
/** Stack lock held, at exit: poll until the held frames left (1 s at
 *  most), then drop what is left. */
void rt__impair_exit(void);
/** fork: the parent draws the child's seed (stack lock held); the child
 *  (only with the option set) forgets the parent's held frames and takes
 *  its own stream. */
void rt__impair_atfork_prepare(void);
void rt__impair_atfork_child(void);

/** Held tx frames due: the check the tx paths add (a single predictable
 *  branch when the option is empty). */
static inline bool
rt__impair_tx_pending(void)
{
    return rt__impair_active() && rt__impair_tx_due();
}

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RT_IMPAIR_H */
