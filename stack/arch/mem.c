/*
 * lwIP's heap (MEM_LIBC_MALLOC, MEMP_MEM_MALLOC: pbufs, segments and pcbs
 * all come from here), counted so tests can check that everything was
 * given back.
 *
 * Small blocks are kept on per-size free lists instead of going back to
 * malloc: a connection's traffic allocates and frees a frame-sized pbuf
 * and a segment per packet, in bursts larger than glibc's per-thread
 * cache (7 blocks per size), and glibc's slow path (_int_malloc,
 * _int_free) was 4-7 % of an nginx worker's time. Each block carries a
 * 16-byte header with its size class; at most CACHE_MAX blocks per class
 * wait for reuse (2 MB for the largest class), the rest go back to libc.
 *
 * Everything here runs under the stack lock (as all of lwIP does), so the
 * lists need no locking. Under a sanitizer the lists are off, so that a
 * use after free is still caught.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stk_priv.h"
#include "stk_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEM_CACHE 0
#else
#define MEM_CACHE 1
#endif

#define HDR 16u  /* keeps the payload 16-byte aligned */
#define NCLASS 5 /* 128, 256, 512, 1024, 2048 bytes with header */
#define CLASS_MIN_SHIFT 7
#define CACHE_MAX 1024u
#define CLASS_BIG 0xffu

struct blk {
    union {
        struct blk *next; /* on a free list */
        uint32_t cls;     /* in use */
    };
    uint32_t pad[2];
};
_Static_assert(sizeof(struct blk) <= HDR, "block header");

static struct {
    struct blk *head;
    uint32_t n;
} cache[NCLASS];
static long mem_blocks;

static unsigned
class_of(size_t size)
{
    size_t need = size + HDR;

    for (unsigned c = 0; c < NCLASS; c++)
        if (need <= (size_t)1 << (CLASS_MIN_SHIFT + c))
            return c;
    return CLASS_BIG;
}

void *
stk_mem_malloc(size_t size)
{
    unsigned c = MEM_CACHE ? class_of(size) : CLASS_BIG;
    struct blk *b;

    if (c != CLASS_BIG && cache[c].head != NULL) {
        b = cache[c].head;
        cache[c].head = b->next;
        cache[c].n--;
    } else {
        size_t total =
            c != CLASS_BIG ? (size_t)1 << (CLASS_MIN_SHIFT + c) : size + HDR;
        if (total < size) /* overflow */
            return NULL;
        b = malloc(total);
        if (b == NULL)
            return NULL;
    }
    b->cls = c;
    mem_blocks++;
    return (uint8_t *)b + HDR;
}

void *
stk_mem_calloc(size_t n, size_t size)
{
    void *p;

    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    p = stk_mem_malloc(n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

void
stk_mem_free(void *p)
{
    struct blk *b;
    unsigned c;

    if (p == NULL)
        return;
    mem_blocks--;
    b = (struct blk *)((uint8_t *)p - HDR);
    c = b->cls;
    if (c < NCLASS && cache[c].n < CACHE_MAX) {
        b->next = cache[c].head;
        cache[c].head = b;
        cache[c].n++;
        return;
    }
    free(b);
}

long
stk_test_mem_blocks(void)
{
    return mem_blocks;
}
