/*
 * The Internet checksum for lwIP (LWIP_CHKSUM in lwipopts.h): the
 * ones-complement sum of the data as 16-bit words in host order, folded to
 * 16 bits, with the same meaning as lwIP's lwip_standard_chksum (the
 * callers byte-swap and invert it as before).
 *
 * lwIP's portable version adds 16 bits at a time. Here 32-bit words are
 * loaded (unaligned loads are fine on the targets we build for, and the
 * compiler turns the memcpy into plain loads) into four 64-bit
 * accumulators, which cannot overflow for any length lwIP passes (an int);
 * since 2^16 = 1 modulo 2^16 - 1, folding the 64-bit sums gives the same
 * ones-complement sum as adding 16-bit words. An odd start address needs no
 * special case: words are counted from the start of the data. A trailing
 * partial word is padded with zeros, as lwIP does.
 *
 * In a spinning memif TCP ping-pong server (1400-byte messages) on the
 * project's VM, the checksum went from 3.9 % to 2.0 % of the profile.
 */
#include <stdint.h>
#include <string.h>

#include "lwip/arch.h"

static inline uint32_t
load32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

u16_t
stk_chksum(const void *data, int len)
{
    const uint8_t *p = data;
    uint64_t a = 0, b = 0, c = 0, d = 0, s;
    size_t n = len > 0 ? (size_t)len : 0;

    for (; n >= 16; n -= 16, p += 16) {
        a += load32(p);
        b += load32(p + 4);
        c += load32(p + 8);
        d += load32(p + 12);
    }
    for (; n >= 4; n -= 4, p += 4)
        a += load32(p);
    if (n > 0) {
        uint32_t t = 0;
        memcpy(&t, p, n);
        b += t;
    }
    s = a + b + c + d;
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffu) + (s >> 16);
    s = (s & 0xffffu) + (s >> 16);
    s = (s & 0xffffu) + (s >> 16);
    return (u16_t)s;
}
