/*
 * The fd table: for every fd number, either nothing (the fd is not ours:
 * pass through to libc) or a pointer to a refcounted object (an accelerated
 * or not-yet-decided socket, or an epoll instance we track).
 *
 * Layout: a two-level sparse array indexed by fd (chunks of 4096 slots,
 * allocated on first install, never freed), so lookups are one or two
 * loads and fd numbers up to PL_FDT_MAX work whatever RLIMIT_NOFILE is.
 *
 * Each slot is an _Atomic uintptr_t: 0 (not ours) or an object pointer.
 * Bit 0 is a short lock taken by pl_fdt_get() only to make "load pointer,
 * take a reference" atomic against a concurrent remove; every change goes
 * through compare-and-swap. Each slot also has a generation counter bumped
 * on every change, for stale-event checks.
 *
 * Reference ownership (written once, here):
 *  - the table holds one reference per slot pointing at an object;
 *  - pl_fdt_get() returns a new reference the caller drops with
 *    pl_fd_put();
 *  - pl_fdt_exchange()/pl_fdt_remove() hand the table's reference of the
 *    old object to the caller, who drops it with pl_fd_put();
 *  - when the last reference goes, the object's destroy() runs in the
 *    thread that dropped it, with no preload lock held.
 */
#ifndef ACCEL_PL_FDTABLE_H
#define ACCEL_PL_FDTABLE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PL_FDT_CHUNK_BITS 12
#define PL_FDT_TOP_BITS 12
#define PL_FDT_MAX (1 << (PL_FDT_CHUNK_BITS + PL_FDT_TOP_BITS))

enum pl_fd_kind {
    PL_FD_SOCK = 1,
    PL_FD_EPOLL = 2,
};

/** Common header of every object the table points to. */
struct pl_fd {
    int refs;                         /* __atomic builtins only */
    int kind;                         /* enum pl_fd_kind */
    void (*destroy)(struct pl_fd *f); /* last reference gone */
};

/** Initialise the header with one reference (the creator's). */
void pl_fd_init(struct pl_fd *f, int kind, void (*destroy)(struct pl_fd *));

/** Take a reference the caller already may (it holds one). */
void pl_fd_ref(struct pl_fd *f);

/** Take a reference unless the count already reached zero (the object is
 *  being destroyed). Used by lists that do not hold references. */
bool pl_fd_tryref(struct pl_fd *f);

/** Drop a reference; the last one calls destroy(). NULL is ignored. */
void pl_fd_put(struct pl_fd *f);

/** The object at fd with a new reference, or NULL (not ours). */
struct pl_fd *pl_fdt_get(int fd);

/** True when fd has an entry (no reference taken; a hint only). */
bool pl_fdt_peek(int fd);

/** Generation of slot fd (0 for a slot never used). */
uint32_t pl_fdt_gen(int fd);

/**
 * Make slot fd point at f (NULL clears it) and return the previous object
 * with the table's reference (or NULL). Takes a reference on f for the
 * table. Returns (struct pl_fd *)-1 if fd is out of range or a chunk
 * cannot be allocated (f is then not installed and no reference taken).
 */
struct pl_fd *pl_fdt_exchange(int fd, struct pl_fd *f);

/** Install f at fd, dropping any stale entry. 0 or -EBADF/-ENOMEM. */
int pl_fdt_install(int fd, struct pl_fd *f);

/** Clear slot fd and return the table's reference (or NULL). */
struct pl_fd *pl_fdt_remove(int fd);

/** Call fn for every installed entry (no reference taken; only for the
 *  single-threaded child after fork or for tests). */
void pl_fdt_foreach(void (*fn)(int fd, struct pl_fd *f, void *arg), void *arg);

/** Call fn for every installed entry with a reference held for the call
 *  (safe with other threads running; call it without any lock held: the
 *  last reference may go in it). Stops when fn returns false. */
void pl_fdt_each_ref(bool (*fn)(int fd, struct pl_fd *f, void *arg), void *arg);

/** In a child after fork: release slot locks held by threads that no
 *  longer exist. */
void pl_fdt_atfork_child(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PL_FDTABLE_H */
