/*
 * RFC 6528 initial sequence numbers: ISN = M + F(4-tuple, secret), where
 * F is SipHash-2-4 keyed with a 128-bit secret drawn from getrandom() on
 * first use, and M is a clock ticking every 64 ns (as Linux does), so
 * successive connections on one 4-tuple still move forward while ISNs of
 * different 4-tuples are unrelated and unpredictable off-path. An IPv6
 * 4-tuple hashes its 128-bit addresses (Linux's secure_tcpv6_seq). lwIP calls
 * stk_isn_hook() through LWIP_HOOK_TCP_ISN for every new connection. The
 * runtime gives the key shared by the host's accel processes
 * (stk_isn_set_key, runtime/isnkey.c), so that holds across processes.
 */
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "lwip/ip_addr.h"

#include "siphash.h"
#include "stk_hooks.h"
#include "stk_priv.h"

static uint64_t isn_key[2];
static bool isn_keyed;

void
stk_isn_set_key(const uint64_t key[2])
{
    isn_key[0] = key[0];
    isn_key[1] = key[1];
    isn_keyed = true;
}

static void
isn_keygen(void)
{
    if (getrandom(isn_key, sizeof(isn_key), 0) != (ssize_t)sizeof(isn_key)) {
        /* getrandom cannot fail for 16 bytes once the pool is ready; if it
         * does, mix the PRNG (itself seeded from the clock) instead. */
        isn_key[0] = ((uint64_t)stk_rand() << 32) | stk_rand();
        isn_key[1] = ((uint64_t)stk_rand() << 32) | stk_rand();
    }
    isn_keyed = true;
}

void
stk__isn_key(uint64_t key[2])
{
    if (!isn_keyed)
        isn_keygen();
    key[0] = isn_key[0];
    key[1] = isn_key[1];
}

/* The 4-tuple as SipHash's message words; returns how many (at most 5). */
static size_t
tuple_words(uint64_t *m, const struct ip_addr *local_ip, uint16_t local_port,
            const struct ip_addr *remote_ip, uint16_t remote_port)
{
    if (IP_IS_V6(local_ip)) {
        memcpy(&m[0], ip_2_ip6(local_ip)->addr, 16);
        memcpy(&m[2], ip_2_ip6(remote_ip)->addr, 16);
        m[4] = ((uint64_t)local_port << 16) | remote_port;
        return 5;
    }
    m[0] = ((uint64_t)ip4_addr_get_u32(ip_2_ip4(local_ip)) << 32) |
           ip4_addr_get_u32(ip_2_ip4(remote_ip));
    m[1] = ((uint64_t)local_port << 16) | remote_port;
    return 2;
}

uint32_t
stk_isn_hook(const struct ip_addr *local_ip, uint16_t local_port,
             const struct ip_addr *remote_ip, uint16_t remote_port)
{
    uint64_t m[5];
    size_t n;

    if (!isn_keyed)
        isn_keygen();
    n = tuple_words(m, local_ip, local_port, remote_ip, remote_port);
    return (uint32_t)base_siphash(isn_key, m, n, 2, 4) +
           (uint32_t)(stk__now_ns() >> 6);
}

uint32_t
stk__tuple_hash(const struct ip_addr *local_ip, uint16_t local_port,
                const struct ip_addr *remote_ip, uint16_t remote_port,
                uint64_t salt)
{
    uint64_t m[6];
    size_t n;

    if (!isn_keyed)
        isn_keygen();
    n = tuple_words(m, local_ip, local_port, remote_ip, remote_port);
    m[n++] = salt;
    return (uint32_t)base_siphash(isn_key, m, n, 2, 4);
}
