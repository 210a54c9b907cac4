/*
 * The fd table (see fdtable.h for the contract): a two-level sparse array
 * of atomic slots, each 0 or a pointer to a refcounted object, changed by
 * compare-and-swap, with a per-slot generation counter. Chunks are
 * allocated with calloc on first install and published with a CAS; they
 * live as long as the process, so a reader never sees freed table memory.
 * This file knows nothing about sockets or epoll: objects carry their own
 * destroy function.
 */
#include "fdtable.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define CHUNK_SIZE (1u << PL_FDT_CHUNK_BITS)
#define TOP_SIZE (1u << PL_FDT_TOP_BITS)
#define SLOT_LOCK ((uintptr_t)1)

struct slot {
    _Atomic uintptr_t p;
    atomic_uint gen;
};

struct chunk {
    struct slot s[CHUNK_SIZE];
};

static struct chunk *_Atomic top[TOP_SIZE];

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static struct slot *
slot_of(int fd, bool create)
{
    struct chunk *c, *fresh;
    unsigned int hi, lo;

    if (fd < 0 || fd >= PL_FDT_MAX)
        return NULL;
    hi = (unsigned int)fd >> PL_FDT_CHUNK_BITS;
    lo = (unsigned int)fd & (CHUNK_SIZE - 1);
    c = atomic_load_explicit(&top[hi], memory_order_acquire);
    if (c == NULL) {
        if (!create)
            return NULL;
        fresh = calloc(1, sizeof(*fresh));
        if (fresh == NULL)
            return NULL;
        c = NULL;
        if (atomic_compare_exchange_strong(&top[hi], &c, fresh))
            c = fresh;
        else
            free(fresh); /* another thread published one first */
    }
    return &c->s[lo];
}

void
pl_fd_init(struct pl_fd *f, int kind, void (*destroy)(struct pl_fd *))
{
    __atomic_store_n(&f->refs, 1, __ATOMIC_RELAXED);
    f->kind = kind;
    f->destroy = destroy;
}

void
pl_fd_ref(struct pl_fd *f)
{
    __atomic_fetch_add(&f->refs, 1, __ATOMIC_RELAXED);
}

bool
pl_fd_tryref(struct pl_fd *f)
{
    int n = __atomic_load_n(&f->refs, __ATOMIC_RELAXED);

    while (n > 0) {
        if (__atomic_compare_exchange_n(&f->refs, &n, n + 1, true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

void
pl_fd_put(struct pl_fd *f)
{
    if (f == NULL)
        return;
    if (__atomic_fetch_sub(&f->refs, 1, __ATOMIC_ACQ_REL) == 1)
        f->destroy(f);
}

struct pl_fd *
pl_fdt_get(int fd)
{
    struct slot *s = slot_of(fd, false);
    struct pl_fd *f;
    uintptr_t v;

    if (s == NULL)
        return NULL;
    for (;;) {
        v = atomic_load_explicit(&s->p, memory_order_acquire);
        if (v == 0)
            return NULL;
        if (v & SLOT_LOCK) {
            cpu_relax();
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&s->p, &v, v | SLOT_LOCK,
                                                  memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    /* While the lock bit is set nobody can swap the object out, so the
     * table's reference keeps it alive until we own ours. */
    f = (struct pl_fd *)v;
    pl_fd_ref(f);
    atomic_store_explicit(&s->p, v, memory_order_release);
    return f;
}

bool
pl_fdt_peek(int fd)
{
    struct slot *s = slot_of(fd, false);

    return s != NULL && atomic_load_explicit(&s->p, memory_order_relaxed);
}

uint32_t
pl_fdt_gen(int fd)
{
    struct slot *s = slot_of(fd, false);

    return s == NULL ? 0 : atomic_load(&s->gen);
}

struct pl_fd *
pl_fdt_exchange(int fd, struct pl_fd *f)
{
    struct slot *s = slot_of(fd, f != NULL);
    uintptr_t v;

    if (s == NULL)
        return f == NULL ? NULL : (struct pl_fd *)-1;
    if (f != NULL)
        pl_fd_ref(f);
    for (;;) {
        v = atomic_load_explicit(&s->p, memory_order_relaxed);
        if (v & SLOT_LOCK) {
            cpu_relax();
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&s->p, &v, (uintptr_t)f,
                                                  memory_order_acq_rel,
                                                  memory_order_relaxed))
            break;
    }
    if (v != (uintptr_t)f)
        atomic_fetch_add(&s->gen, 1);
    return (struct pl_fd *)v;
}

int
pl_fdt_install(int fd, struct pl_fd *f)
{
    struct pl_fd *old;

    if (fd < 0 || fd >= PL_FDT_MAX)
        return -EBADF;
    old = pl_fdt_exchange(fd, f);
    if (old == (struct pl_fd *)-1)
        return -ENOMEM;
    pl_fd_put(old);
    return 0;
}

struct pl_fd *
pl_fdt_remove(int fd)
{
    if (!pl_fdt_peek(fd))
        return NULL;
    return pl_fdt_exchange(fd, NULL);
}

void
pl_fdt_foreach(void (*fn)(int fd, struct pl_fd *f, void *arg), void *arg)
{
    for (unsigned int hi = 0; hi < TOP_SIZE; hi++) {
        struct chunk *c = atomic_load(&top[hi]);

        if (c == NULL)
            continue;
        for (unsigned int lo = 0; lo < CHUNK_SIZE; lo++) {
            uintptr_t v = atomic_load(&c->s[lo].p) & ~SLOT_LOCK;

            if (v != 0)
                fn((int)((hi << PL_FDT_CHUNK_BITS) | lo), (struct pl_fd *)v,
                   arg);
        }
    }
}

void
pl_fdt_each_ref(bool (*fn)(int fd, struct pl_fd *f, void *arg), void *arg)
{
    for (unsigned int hi = 0; hi < TOP_SIZE; hi++) {
        struct chunk *c = atomic_load(&top[hi]);

        if (c == NULL)
            continue;
        for (unsigned int lo = 0; lo < CHUNK_SIZE; lo++) {
            int fd = (int)((hi << PL_FDT_CHUNK_BITS) | lo);
            struct pl_fd *f;
            bool more;

            if (atomic_load_explicit(&c->s[lo].p, memory_order_relaxed) == 0)
                continue;
            f = pl_fdt_get(fd);
            if (f == NULL)
                continue;
            more = fn(fd, f, arg);
            pl_fd_put(f);
            if (!more)
                return;
        }
    }
}

void
pl_fdt_atfork_child(void)
{
    for (unsigned int hi = 0; hi < TOP_SIZE; hi++) {
        struct chunk *c = atomic_load(&top[hi]);

        if (c == NULL)
            continue;
        for (unsigned int lo = 0; lo < CHUNK_SIZE; lo++)
            atomic_fetch_and(&c->s[lo].p, ~SLOT_LOCK);
    }
}
