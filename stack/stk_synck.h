/*
 * The SYN cookie's arithmetic, shared by the stack (stack/syncookie.c,
 * which makes and checks cookies) and accel's XDP program
 * (runtime/xdp/synck.bpf.h, which answers SYNs with them while a listener
 * is flooded): the two must make the same cookie for the same SYN, so the
 * formula, the salts and the tables are written here once. Plain C over
 * fixed-width integers and no libc: the BPF side builds it freestanding.
 *
 * cookie = H1 + peer ISN + (minute << 24) + ((H2 + MSS index) mod 2^24),
 * where H1 = SipHash-2-4(4-tuple, SALT_H1) and H2 = SipHash-2-4(4-tuple,
 * SALT_H2 | minute mod 256), keyed with the ISN's secret (Linux's
 * secure_tcp_syn_cookie). With timestamps the SYN-ACK's TSval carries the
 * peer's window scale and SACK-permitted in its low 6 bits.
 */
#ifndef ACCEL_STK_SYNCK_H
#define ACCEL_STK_SYNCK_H

#include <stdint.h>

#define STK_SYNCK_BITS 24
#define STK_SYNCK_MASK ((1u << STK_SYNCK_BITS) - 1)
#define STK_SYNCK_MINUTE_NS (60ull * 1000000000ull)
#define STK_SYNCK_SALT_H1 0x636f6f6b69653131ull /* "cookie11" */
#define STK_SYNCK_SALT_H2 0x636f6f6b69653200ull /* "cookie2\0" + minute */
/* TSval's low bits: the peer's window scale (0xf: none), SACK. */
#define STK_SYNCK_TSBITS 6
#define STK_SYNCK_TS_WSCALE_NONE 0xfu
#define STK_SYNCK_TS_SACK 0x10u
/* Linux's msstab for IPv4 and for IPv6 (1280/1480/1500/9000 - 60): the
 * cookie holds an index into it. */
#define STK_SYNCK_MSS4                                                         \
    {                                                                          \
        536, 1300, 1440, 1460                                                  \
    }
#define STK_SYNCK_MSS6                                                         \
    {                                                                          \
        1220, 1420, 1440, 8940                                                 \
    }

/** The cookie for a SYN of sequence number sseq, from the 4-tuple's
 *  hashes h1 (salt SALT_H1) and h2 (salt SALT_H2 | minute & 0xff), the
 *  minute (clock ns / STK_SYNCK_MINUTE_NS) and the MSS index (0-3). */
static inline uint32_t
stk_synck_make(uint32_t h1, uint32_t h2, uint32_t sseq, uint32_t minute,
               uint32_t mssind)
{
    return h1 + sseq + (minute << STK_SYNCK_BITS) +
           ((h2 + mssind) & STK_SYNCK_MASK);
}

/** The SYN-ACK's TSval for a cookie: the millisecond clock now_ms with
 *  its low bits replaced by the peer's window scale (0xff: none) and
 *  SACK-permitted, never past now_ms (Linux's cookie_init_timestamp). */
static inline uint32_t
stk_synck_tsval(uint32_t now_ms, uint8_t wscale, int sack)
{
    uint32_t o = wscale == 0xff ? STK_SYNCK_TS_WSCALE_NONE : wscale, ts;

    if (sack)
        o |= STK_SYNCK_TS_SACK;
    ts = (now_ms >> STK_SYNCK_TSBITS << STK_SYNCK_TSBITS) | o;
    if (ts > now_ms)
        ts -= 1u << STK_SYNCK_TSBITS;
    return ts;
}

#endif /* ACCEL_STK_SYNCK_H */
