// runtime/xdpprog.c and xdpsteer6.c: the embedded XDP program gets the
// stack's address, its subnet's broadcast, the shared flag and the build hash
// written over its placeholders; a program left attached is adopted by the
// same build with the same constants (maps emptied), replaced otherwise, and
// another program is never touched.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
extern const unsigned char rt__xdp_steer_obj[];
extern const size_t rt__xdp_steer_obj_len;
}
#include "xdpprog.h"
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

TEST(XdpSteer, EmbeddedObjectIsBpfElf)
{
    ASSERT_GT(rt__xdp_steer_obj_len, 64u);
    EXPECT_EQ(0, memcmp(rt__xdp_steer_obj,
                        "\x7f"
                        "ELF",
                        4));
    EXPECT_EQ(247, rt__xdp_steer_obj[18]); // e_machine EM_BPF (little endian)
}

TEST(XdpSteer, ConstantsWrittenOverPlaceholders)
{
    std::string orig(reinterpret_cast<const char *>(rt__xdp_steer_obj),
                     rt__xdp_steer_obj_len);
    uint32_t ip = inet_addr("10.1.2.3"), mask = inet_addr("255.255.255.0");
    uint32_t bcast = inet_addr("10.1.2.255");
    uint32_t build[2] = {0, 0};
    for (bool shared : {false, true}) {
        rt__xdpprog_cfg c = {ip, mask, shared};
        std::string got = orig;

        ASSERT_EQ(0, rt__xdpprog_patch(got.data(), got.size(), &c));
        EXPECT_EQ(1, count(orig, 0x5A1ECCA1u));
        EXPECT_EQ(1, count(orig, 0x5B1ECCA1u));
        EXPECT_EQ(1, count(orig, 0x5C1ECCA1u));
        EXPECT_EQ(1, count(orig, 0x5D1ECCA1u));
        for (uint32_t m : {0x5A1ECCA1u, 0x5B1ECCA1u, 0x5C1ECCA1u, 0x5D1ECCA1u})
            EXPECT_EQ(0, count(got, m));
        EXPECT_EQ(count(orig, ip) + 1, count(got, ip));
        EXPECT_EQ(count(orig, bcast) + 1, count(got, bcast));
        // Nothing else changed: 16 bytes differ at most.
        int diff = 0;
        for (size_t i = 0; i < got.size(); i++)
            diff += got[i] != orig[i];
        EXPECT_LE(diff, 16);
        EXPECT_GE(diff, 3);
        // The flag's word: 1 when shared, 0 otherwise, where the mark was.
        size_t at = orig.find(std::string("\xA1\xCC\x1E\x5C", 4));
        ASSERT_NE(std::string::npos, at);
        uint32_t flag;
        memcpy(&flag, got.data() + at, 4);
        EXPECT_EQ(shared ? 1u : 0u, flag);
        at = orig.find(std::string("\xA1\xCC\x1E\x5D", 4));
        ASSERT_NE(std::string::npos, at);
        memcpy(&build[shared], got.data() + at, 4);
        // A second patch finds no placeholder: refused, nothing written.
        std::string again = got;
        EXPECT_EQ(-ENOENT, rt__xdpprog_patch(again.data(), again.size(), &c));
        EXPECT_EQ(again, got);
    }
    EXPECT_EQ(build[0], build[1]) << "the build hash depends on the build only";
    EXPECT_NE(build[0], 0x5D1ECCA1u);
}

// The program kept from one process to the next, on the loopback interface
// of a network namespace of the test's own (root: CI; skipped without).
class XdpKeep : public ::testing::Test
{
  protected:
    int orig_ns = -1, lo = 0;

    void
    SetUp() override
    {
        if (geteuid() != 0)
            GTEST_SKIP() << "needs root (a network namespace, XDP)";
        orig_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        ASSERT_GE(orig_ns, 0);
        ASSERT_EQ(0, unshare(CLONE_NEWNET)) << strerror(errno);
        lo = static_cast<int>(if_nametoindex("lo"));
        ASSERT_GT(lo, 0);
    }

    void
    TearDown() override
    {
        if (orig_ns >= 0) {
            EXPECT_EQ(0, setns(orig_ns, CLONE_NEWNET));
            close(orig_ns);
        }
    }

    uint32_t
    attached_id()
    {
        uint32_t id = 0;
        EXPECT_EQ(0, bpf_xdp_query_id(lo, 0, &id));
        return id;
    }

    static uint32_t
    prog_id(int fd)
    {
        bpf_prog_info info{};
        uint32_t len = sizeof(info);
        EXPECT_EQ(0, bpf_obj_get_info_by_fd(fd, &info, &len));
        return info.id;
    }

    static int
    entries(int prog_fd, const char *map)
    {
        int fd = rt__xdpprog_map_fd(prog_fd, map), n = 0;
        uint8_t key[64];
        EXPECT_GE(fd, 0) << map;
        for (int rc = bpf_map_get_next_key(fd, nullptr, key); rc == 0;
             rc = bpf_map_get_next_key(fd, key, key))
            n++;
        close(fd);
        return n;
    }

    static void
    put(int prog_fd, const char *map)
    {
        int fd = rt__xdpprog_map_fd(prog_fd, map);
        bpf_map_info mi{};
        uint32_t len = sizeof(mi);
        ASSERT_GE(fd, 0) << map;
        ASSERT_EQ(0, bpf_obj_get_info_by_fd(fd, &mi, &len));
        std::string k(mi.key_size, '\x07'), v(mi.value_size, '\x01');
        EXPECT_EQ(0, bpf_map_update_elem(fd, k.data(), v.data(), 0)) << map;
        close(fd);
    }
};

TEST_F(XdpKeep, AdoptedBySameConstantsReplacedOtherwise)
{
    rt__xdpprog_cfg a = {inet_addr("10.1.2.3"), inet_addr("255.255.255.0"),
                         false};
    rt__xdpprog_cfg b = a;
    rt__xdpprog p{};
    char why[160];

    b.ip = inet_addr("10.1.2.4");
    int rc = rt__xdpprog_ensure(lo, &a, &p, why, sizeof(why));
    if (rc == -EPERM)
        GTEST_SKIP() << "no CAP_BPF";
    ASSERT_EQ(0, rc) << why;
    EXPECT_FALSE(p.adopted);
    EXPECT_TRUE(fcntl(p.prog_fd, F_GETFD) & FD_CLOEXEC);
    uint32_t first = prog_id(p.prog_fd);
    EXPECT_EQ(first, attached_id());
    // The process leaves entries behind and exits: the program stays.
    put(p.prog_fd, "accel_lport");
    put(p.prog_fd, "accel_flow4");
    put(p.prog_fd, "accel_dst6");
    rt__xdpprog_release(&p);
    EXPECT_EQ(first, attached_id());
    int fd = rt__xdpprog_attached(lo);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(1, entries(fd, "accel_lport"));
    close(fd);

    // The next one with the same constants adopts it, maps emptied.
    ASSERT_EQ(0, rt__xdpprog_ensure(lo, &a, &p, why, sizeof(why))) << why;
    EXPECT_TRUE(p.adopted);
    EXPECT_EQ(first, prog_id(p.prog_fd));
    EXPECT_GE(p.xsks_fd, 0);
    for (const char *m : {"accel_lport", "accel_flow4", "accel_dst6"})
        EXPECT_EQ(0, entries(p.prog_fd, m)) << m;
    rt__xdpprog_release(&p);

    // Other constants: replaced by a program of its own.
    ASSERT_EQ(0, rt__xdpprog_ensure(lo, &b, &p, why, sizeof(why))) << why;
    EXPECT_FALSE(p.adopted);
    uint32_t second = prog_id(p.prog_fd);
    EXPECT_NE(first, second);
    EXPECT_EQ(second, attached_id());

    // Detached at the end (ACCEL_XDP_KEEP=0).
    EXPECT_EQ(0, rt__xdpprog_detach(&p));
    EXPECT_EQ(0u, attached_id());
    EXPECT_EQ(-1, p.prog_fd);
}

TEST_F(XdpKeep, AnotherProgramIsLeftAlone)
{
    // XDP_PASS: r0 = 2; exit.
    const bpf_insn pass[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 2},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    int other =
        bpf_prog_load(BPF_PROG_TYPE_XDP, "other_prog", "GPL", pass, 2, nullptr);
    if (other == -EPERM)
        GTEST_SKIP() << "no CAP_BPF";
    ASSERT_GE(other, 0);
    ASSERT_EQ(0,
              bpf_xdp_attach(lo, other, XDP_FLAGS_UPDATE_IF_NOEXIST, nullptr));
    rt__xdpprog_cfg a = {inet_addr("10.1.2.3"), inet_addr("255.255.255.0"),
                         true};
    rt__xdpprog p{};
    char why[160] = "";

    EXPECT_EQ(-ENOENT, rt__xdpprog_attached(lo)) << "not ours";
    EXPECT_NE(0, rt__xdpprog_ensure(lo, &a, &p, why, sizeof(why)));
    EXPECT_NE(nullptr, strstr(why, "another XDP program")) << why;
    EXPECT_EQ(prog_id(other), attached_id());
    EXPECT_EQ(-1, p.prog_fd);
    close(other);
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
