// stk_chksum (stack/arch/chksum.c), lwIP's LWIP_CHKSUM: equal to the
// RFC 1071 sum for every length and start offset, in lwIP's convention
// (the sum of host-order 16-bit words, i.e. the network-order sum
// byte-swapped on a little-endian host).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

extern "C" unsigned short stk_chksum(const void *data, int len);

namespace
{

// RFC 1071, byte by byte: big-endian 16-bit words, the last odd byte as
// the high half of a word padded with zero.
uint16_t
rfc1071(const uint8_t *p, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n % 2)
        sum += (uint32_t)(p[n - 1] << 8);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

uint16_t
host_order(uint16_t be)
{
    uint16_t probe = 1;
    uint8_t first;
    std::memcpy(&first, &probe, 1);
    return first ? (uint16_t)(be >> 8 | be << 8) : be;
}

TEST(Chksum, rfc1071_example)
{
    // RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
    const uint8_t d[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(stk_chksum(d, sizeof(d)), host_order(0xddf2));
}

TEST(Chksum, equals_reference_for_every_length_and_offset)
{
    std::mt19937 rng(7);
    std::vector<uint8_t> buf(2100 + 8);
    for (auto &b : buf)
        b = (uint8_t)rng();
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 2100; n++)
            ASSERT_EQ(stk_chksum(buf.data() + off, (int)n),
                      host_order(rfc1071(buf.data() + off, n)))
                << "offset " << off << " length " << n;
}

TEST(Chksum, carries_fold_with_all_ones)
{
    // Every word 0xffff: sums that carry at each step.
    std::vector<uint8_t> ff(65536, 0xff);
    for (size_t n : {1u, 2u, 3u, 1400u, 1401u, 65535u, 65536u})
        EXPECT_EQ(stk_chksum(ff.data(), (int)n),
                  host_order(rfc1071(ff.data(), n)))
            << "length " << n;
}

} // namespace
