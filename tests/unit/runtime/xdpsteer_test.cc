// runtime/xdpsteer.c: the embedded XDP program gets the stack's address and
// its subnet's broadcast written over its placeholders, in a memfd the af_xdp
// PMD can open by path.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
extern const unsigned char rt__xdp_steer_obj[];
extern const size_t rt__xdp_steer_obj_len;
int rt__xdp_steer_open(uint32_t ip, uint32_t mask, char *path, size_t pathsz);
}

namespace
{

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
    int fd = rt__xdp_steer_open(ip, mask, path, sizeof(path));

    ASSERT_GE(fd, 0);
    EXPECT_EQ("/proc/self/fd/" + std::to_string(fd), std::string(path));
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    std::string got = slurp(path);
    close(fd);
    ASSERT_EQ(orig.size(), got.size());
    EXPECT_EQ(1, count(orig, 0x5A1ECCA1u));
    EXPECT_EQ(1, count(orig, 0x5B1ECCA1u));
    EXPECT_EQ(0, count(got, 0x5A1ECCA1u));
    EXPECT_EQ(0, count(got, 0x5B1ECCA1u));
    EXPECT_EQ(count(orig, ip) + 1, count(got, ip));
    EXPECT_EQ(count(orig, bcast) + 1, count(got, bcast));
    // Nothing else changed: 8 bytes differ at most.
    int diff = 0;
    for (size_t i = 0; i < got.size(); i++)
        diff += got[i] != orig[i];
    EXPECT_LE(diff, 8);
    EXPECT_GE(diff, 2);
}

} // namespace
