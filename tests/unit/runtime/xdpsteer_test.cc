// runtime/xdpsteer.c: the embedded XDP program gets the stack's address and
// its subnet's broadcast written over its placeholders, in a memfd the af_xdp
// PMD can open by path.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
extern const unsigned char rt__xdp_steer_obj[];
extern const size_t rt__xdp_steer_obj_len;
struct rt__xdp_steer_cfg {
    uint32_t ip, mask;
    bool shared;
};
int rt__xdp_steer_open(const struct rt__xdp_steer_cfg *c, char *path,
                       size_t pathsz);
}
#include "xdpsteer6.h"
#include "xdp/steer.h"

namespace
{

template <class T>
const T *
ptr(const T &v)
{
    return &v;
}

int
count(const std::string &hay, uint32_t v)
{
    int n = 0;
    for (size_t at = 0;
         (at = hay.find(std::string(reinterpret_cast<char *>(&v), 4), at)) !=
         std::string::npos;
         at++)
        n++;
    return n;
}

std::string
slurp(const char *path)
{
    std::string s;
    char buf[4096];
    int fd = open(path, O_RDONLY);
    ssize_t n;

    if (fd < 0)
        return s;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        s.append(buf, static_cast<size_t>(n));
    close(fd);
    return s;
}

TEST(XdpSteer, EmbeddedObjectIsBpfElf)
{
    ASSERT_GT(rt__xdp_steer_obj_len, 64u);
    EXPECT_EQ(0, memcmp(rt__xdp_steer_obj,
                        "\x7f"
                        "ELF",
                        4));
    EXPECT_EQ(247, rt__xdp_steer_obj[18]); // e_machine EM_BPF (little endian)
}

TEST(XdpSteer, AddressesWrittenOverPlaceholders)
{
    std::string orig(reinterpret_cast<const char *>(rt__xdp_steer_obj),
                     rt__xdp_steer_obj_len);
    uint32_t ip = inet_addr("10.1.2.3"), mask = inet_addr("255.255.255.0");
    uint32_t bcast = inet_addr("10.1.2.255");
    char path[64] = "";
    for (bool shared : {false, true}) {
        rt__xdp_steer_cfg c = {ip, mask, shared};
        int fd = rt__xdp_steer_open(&c, path, sizeof(path));

        ASSERT_GE(fd, 0);
        EXPECT_EQ("/proc/self/fd/" + std::to_string(fd), std::string(path));
        EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        std::string got = slurp(path);
        close(fd);
        ASSERT_EQ(orig.size(), got.size());
        EXPECT_EQ(1, count(orig, 0x5A1ECCA1u));
        EXPECT_EQ(1, count(orig, 0x5B1ECCA1u));
        EXPECT_EQ(1, count(orig, 0x5C1ECCA1u));
        EXPECT_EQ(0, count(got, 0x5A1ECCA1u));
        EXPECT_EQ(0, count(got, 0x5B1ECCA1u));
        EXPECT_EQ(0, count(got, 0x5C1ECCA1u));
        EXPECT_EQ(count(orig, ip) + 1, count(got, ip));
        EXPECT_EQ(count(orig, bcast) + 1, count(got, bcast));
        // Nothing else changed: 12 bytes differ at most.
        int diff = 0;
        for (size_t i = 0; i < got.size(); i++)
            diff += got[i] != orig[i];
        EXPECT_LE(diff, 12);
        EXPECT_GE(diff, 2);
        // The flag's word: 1 when shared, 0 otherwise, where the mark was.
        size_t at = orig.find(std::string("\xA1\xCC\x1E\x5C", 4));
        ASSERT_NE(std::string::npos, at);
        uint32_t flag;
        memcpy(&flag, got.data() + at, 4);
        EXPECT_EQ(shared ? 1u : 0u, flag);
    }
}

in6_addr
A6(const char *s)
{
    in6_addr a{};
    EXPECT_EQ(inet_pton(AF_INET6, s, &a), 1) << s;
    return a;
}

std::string
str6(const in6_addr &a)
{
    char b[INET6_ADDRSTRLEN];
    return inet_ntop(AF_INET6, &a, b, sizeof(b));
}

TEST(XdpSteer6, LinkLocalIsModifiedEui64)
{
    const uint8_t mac[6] = {0x02, 0x00, 0x0a, 0xc8, 0x00, 0x02};
    const uint8_t mac2[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
    in6_addr ll;

    rt__xdp_ip6_linklocal(mac, &ll);
    EXPECT_EQ(str6(ll), "fe80::aff:fec8:2") << "U/L bit flipped";
    rt__xdp_ip6_linklocal(mac2, &ll);
    EXPECT_EQ(str6(ll), "fe80::5054:ff:fe12:3456");
}

TEST(XdpSteer6, SolicitedNodeGroup)
{
    in6_addr g;

    rt__xdp_ip6_solicited(ptr(A6("fd00:200::2")), &g);
    EXPECT_EQ(str6(g), "ff02::1:ff00:2");
    rt__xdp_ip6_solicited(ptr(A6("fe80::5054:ff:fe12:3456")), &g);
    EXPECT_EQ(str6(g), "ff02::1:ff12:3456");
}

TEST(XdpSteer6, MapEntries)
{
    rt__xdp_dst6 v[RT_XDP_DST6_BASE];
    in6_addr ip6 = A6("fd00:200::2"), ll = A6("fe80::5054:ff:fe12:3456");
    size_t n = rt__xdp_steer_dst6(&ip6, &ll, false, v);

    ASSERT_EQ(n, 4u);
    EXPECT_EQ(str6(v[0].addr), "fd00:200::2");
    EXPECT_EQ(v[0].kind, ACCEL_DST6_OWN);
    EXPECT_EQ(str6(v[1].addr), "ff02::1:ff00:2");
    EXPECT_EQ(v[1].kind, ACCEL_DST6_SNM);
    EXPECT_EQ(str6(v[2].addr), "fe80::5054:ff:fe12:3456");
    EXPECT_EQ(v[2].kind, ACCEL_DST6_OWN);
    EXPECT_EQ(str6(v[3].addr), "ff02::1:ff12:3456");
    EXPECT_EQ(v[3].kind, ACCEL_DST6_SNM);

    // All-nodes to the stack; no link-local (the kernel has it).
    n = rt__xdp_steer_dst6(&ip6, nullptr, true, v);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(str6(v[2].addr), "ff02::1");
    EXPECT_EQ(v[2].kind, ACCEL_DST6_GROUP);
}

TEST(XdpSteer6, SharedSolicitedNodeGroupIsOneEntry)
{
    rt__xdp_dst6 v[RT_XDP_DST6_BASE];
    in6_addr ip6 = A6("2001:db8::12:3456"), ll = A6("fe80::5054:ff:fe12:3456");
    size_t n = rt__xdp_steer_dst6(&ip6, &ll, true, v);

    ASSERT_EQ(n, 4u);
    EXPECT_EQ(str6(v[1].addr), "ff02::1:ff12:3456");
    EXPECT_EQ(v[1].kind, ACCEL_DST6_SNM);
    EXPECT_EQ(str6(v[2].addr), "fe80::5054:ff:fe12:3456");
    EXPECT_EQ(str6(v[3].addr), "ff02::1");
}

TEST(XdpSteer6, GroupWithoutProgramIsANoOp)
{
    // No steering program found (this process has no port): nothing to
    // do, the port would take every frame anyway.
    uint8_t g[16] = {0xff, 0x12};
    g[15] = 7;
    EXPECT_EQ(rt__xdp_steer_group6(g, true), 0);
    EXPECT_EQ(rt__xdp_steer_group6(g, false), 0);
    uint8_t u[16] = {0xfd};
    EXPECT_EQ(rt__xdp_steer_group6(u, true), -EINVAL);
}

TEST(XdpSteer6, ProgramCarriesTheIpv6Map)
{
    std::string obj(reinterpret_cast<const char *>(rt__xdp_steer_obj),
                    rt__xdp_steer_obj_len);
    EXPECT_NE(obj.find(ACCEL_DST6_MAP), std::string::npos);
    EXPECT_NE(obj.find("steer_ip6"), std::string::npos);
}

// The kernel's verifier takes the program as built (IPv4 path, the IPv6
// subprogram and its map). Needs CAP_BPF: skipped without it.
TEST(XdpSteer6, ProgramPassesTheVerifier)
{
    bpf_object *obj =
        bpf_object__open_mem(rt__xdp_steer_obj, rt__xdp_steer_obj_len, nullptr);
    ASSERT_NE(obj, nullptr);
    int rc = bpf_object__load(obj);
    if (rc == -EPERM) {
        bpf_object__close(obj);
        GTEST_SKIP() << "no CAP_BPF";
    }
    EXPECT_EQ(rc, 0) << "the verifier refused the program";
    bpf_map *m = bpf_object__find_map_by_name(obj, ACCEL_DST6_MAP);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(bpf_map__max_entries(m), unsigned(ACCEL_DST6_MAX));
    bpf_object__close(obj);
}

} // namespace
