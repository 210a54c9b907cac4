/*
 * SipHash (Aumasson & Bernstein) over whole 64-bit words, with the number
 * of compression (c) and finalization (d) rounds as parameters: isn.c uses
 * SipHash-2-4 for initial sequence numbers, pcb_hash.c the cheaper
 * SipHash-1-3 (as Rust's HashMap and CPython) to place connections in its
 * table so that a remote peer who does not know the key cannot aim its
 * 4-tuples at one bucket. Inline: with constant c and d the rounds unroll.
 */
#ifndef ACCEL_BASE_SIPHASH_H
#define ACCEL_BASE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define BASE__ROTL64(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define BASE__SIPROUND                                                         \
    do {                                                                       \
        v0 += v1;                                                              \
        v1 = BASE__ROTL64(v1, 13);                                             \
        v1 ^= v0;                                                              \
        v0 = BASE__ROTL64(v0, 32);                                             \
        v2 += v3;                                                              \
        v3 = BASE__ROTL64(v3, 16);                                             \
        v3 ^= v2;                                                              \
        v0 += v3;                                                              \
        v3 = BASE__ROTL64(v3, 21);                                             \
        v3 ^= v0;                                                              \
        v2 += v1;                                                              \
        v1 = BASE__ROTL64(v1, 17);                                             \
        v1 ^= v2;                                                              \
        v2 = BASE__ROTL64(v2, 32);                                             \
    } while (0)

/** SipHash-c-d of len8 64-bit words m under the 128-bit key. */
static inline uint64_t
base_siphash(const uint64_t key[2], const uint64_t *m, size_t len8, int c,
             int d)
{
    uint64_t v0 = 0x736f6d6570736575ull ^ key[0];
    uint64_t v1 = 0x646f72616e646f6dull ^ key[1];
    uint64_t v2 = 0x6c7967656e657261ull ^ key[0];
    uint64_t v3 = 0x7465646279746573ull ^ key[1];
    uint64_t b = (uint64_t)(len8 * 8) << 56;
    size_t i;
    int r;

#pragma GCC unroll 4
    for (i = 0; i < len8; i++) {
        v3 ^= m[i];
#pragma GCC unroll 4
        for (r = 0; r < c; r++)
            BASE__SIPROUND;
        v0 ^= m[i];
    }
    v3 ^= b;
#pragma GCC unroll 4
    for (r = 0; r < c; r++)
        BASE__SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
#pragma GCC unroll 4
    for (r = 0; r < d; r++)
        BASE__SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

#endif /* ACCEL_BASE_SIPHASH_H */
