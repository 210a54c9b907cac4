// accel-broker's decisions (tools/accel-broker/policy.c): who may use it,
// and which requests it accepts.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <string.h>

extern "C" {
#include "policy.h"
#include "xdp/steer.h"
}

namespace
{

const gid_t kAccel = 995;

struct abp_conf
conf()
{
    struct abp_conf c;

    memset(&c, 0, sizeof(c));
    c.group_name = "accel";
    c.group = kAccel;
    c.nifaces = 1;
    c.ifaces[0] = "veth-a";
    c.memlock_max = 1024ull << 20;
    return c;
}

uint32_t
ip4(const char *s)
{
    struct in_addr a;

    inet_pton(AF_INET, s, &a);
    return a.s_addr;
}

struct ab_hello
hello(const char *ip, const char *mask)
{
    struct ab_hello h;

    memset(&h, 0, sizeof(h));
    strcpy(h.iface, "veth-a");
    h.ip = ip4(ip);
    h.mask = ip4(mask);
    h.queues = 1;
    h.umem_bytes = 256ull << 20;
    return h;
}

const uint32_t kKernel4[] = {ip4("10.200.0.3"), ip4("127.0.0.1")};
struct in6_addr kKernel6[1];

struct abp_kernel_addrs
kernel()
{
    struct abp_kernel_addrs k = {2, 1, kKernel4, kKernel6};

    inet_pton(AF_INET6, "fd00:ac::3", &kKernel6[0]);
    return k;
}

} // namespace

TEST(broker_policy, authorise_root_group_and_supplementary)
{
    struct abp_conf c = conf();
    char why[AB_WHY_MAX];
    gid_t sup[] = {100, kAccel};

    EXPECT_EQ(abp_authorise(&c, 0, 0, NULL, 0, why, sizeof(why)), 0);
    EXPECT_EQ(abp_authorise(&c, 101, kAccel, NULL, 0, why, sizeof(why)), 0);
    EXPECT_EQ(abp_authorise(&c, 101, 104, sup, 2, why, sizeof(why)), 0);
}

TEST(broker_policy, authorise_refuses_others_with_the_fix)
{
    struct abp_conf c = conf();
    char why[AB_WHY_MAX] = "";
    gid_t sup[] = {100, 101};

    EXPECT_EQ(abp_authorise(&c, 65534, 65534, sup, 2, why, sizeof(why)),
              -EPERM);
    EXPECT_NE(strstr(why, "usermod -aG accel"), nullptr) << why;
}

TEST(broker_policy, frame_checks)
{
    struct ab_req q;
    char why[AB_WHY_MAX];

    memset(&q, 0, sizeof(q));
    q.magic = AB_MAGIC;
    q.version = AB_VERSION;
    q.size = sizeof(q);
    q.op = AB_HELLO;
    EXPECT_EQ(abp_check_frame(&q, sizeof(q), why, sizeof(why)), 0);
    EXPECT_EQ(abp_check_frame(&q, sizeof(q) - 1, why, sizeof(why)), -EPROTO);
    q.version = AB_VERSION + 1;
    EXPECT_EQ(abp_check_frame(&q, sizeof(q), why, sizeof(why)),
              -EPROTONOSUPPORT);
    q.version = AB_VERSION;
    q.op = 99;
    EXPECT_EQ(abp_check_frame(&q, sizeof(q), why, sizeof(why)), -EPROTO);
}

TEST(broker_policy, hello_accepts_a_host_address_of_its_own)
{
    struct abp_conf c = conf();
    struct abp_kernel_addrs k = kernel();
    struct ab_hello h = hello("10.200.0.2", "255.255.255.0");
    char why[AB_WHY_MAX] = "";

    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), 0) << why;
    h = hello("10.200.0.2", "255.255.255.255");
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), 0) << why;
}

TEST(broker_policy, hello_refusals)
{
    struct abp_conf c = conf();
    struct abp_kernel_addrs k = kernel();
    struct ab_hello h;
    char why[AB_WHY_MAX];

    h = hello("10.200.0.3", "255.255.255.0"); // the kernel's
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)),
              -EADDRINUSE);
    h = hello("10.200.0.255", "255.255.255.0"); // broadcast
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EINVAL);
    h = hello("10.200.0.0", "255.255.255.0"); // the network
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EINVAL);
    h = hello("224.0.0.1", "255.255.255.0");
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EINVAL);
    h = hello("127.0.0.2", "255.0.0.0");
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EINVAL);
    h = hello("10.200.0.2", "255.0.255.0"); // not contiguous
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EINVAL);
    h = hello("10.200.0.2", "255.255.255.0");
    strcpy(h.iface, "eth0"); // not served
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EPERM);
    h = hello("10.200.0.2", "255.255.255.0");
    memset(h.iface, 'x', sizeof(h.iface)); // no terminator
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EINVAL);
    h = hello("10.200.0.2", "255.255.255.0");
    h.queues = 0;
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EINVAL);
    h = hello("10.200.0.2", "255.255.255.0");
    h.umem_bytes = 2048ull << 20;
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -ENOMEM);
}

static struct ab_steer steer(const char *map, const char *addr, uint32_t kind,
                             uint32_t op);

// The port a fake client owns (host order), for the shared-address maps.
static int
owns_8080(void *, int proto, uint16_t port)
{
    return proto == IPPROTO_TCP && port == 8080 ? 0 : -EPERM;
}

// A stack with an address of its own, and one sharing the kernel's
// 10.200.0.3/24 (the client owns TCP port 8080).
static const struct abp_steer_ctx kOwn = {false, 0, 0, owns_8080, nullptr};
static struct abp_steer_ctx
shared_ctx()
{
    return {true, inet_addr("10.200.0.3"), inet_addr("255.255.255.0"),
            owns_8080, nullptr};
}

static struct ab_steer
raw_steer(const char *map, const void *key, uint32_t klen, uint64_t val,
          uint32_t vlen, uint32_t op)
{
    struct ab_steer s;

    memset(&s, 0, sizeof(s));
    snprintf(s.map, sizeof(s.map), "%s", map);
    s.op = op;
    s.klen = klen;
    s.vlen = vlen;
    memcpy(s.key, key, klen);
    memcpy(s.val, &val, vlen);
    return s;
}

TEST(broker_policy, hello_shares_the_kernels_address_on_its_interface)
{
    struct abp_conf c = conf();
    struct abp_kernel_addrs k = kernel();
    struct ab_hello h = hello("10.200.0.3", "255.255.255.0"); // the kernel's
    char why[AB_WHY_MAX] = "";

    EXPECT_EQ(abp_check_hello(&c, &h, &k, true, why, sizeof(why)), 0) << why;
    EXPECT_EQ(abp_check_hello(&c, &h, &k, false, why, sizeof(why)), -EADDRINUSE)
        << "on another interface: taken from the kernel, refused";
}

TEST(broker_policy, shared_maps_need_a_port_of_the_clients_own)
{
    struct abp_kernel_addrs k = kernel();
    struct abp_steer_ctx x = shared_ctx();
    char why[AB_WHY_MAX] = "";
    struct accel_lport_key lk = {IPPROTO_TCP, 0, htons(8080)};
    struct accel_flow4_key fk = {inet_addr("10.200.0.1"),
                                 htons(8080),
                                 htons(40000),
                                 IPPROTO_TCP,
                                 {0, 0, 0}};
    struct accel_flow6_key f6 = {};
    struct ab_steer s;

    s = raw_steer(ACCEL_LPORT_MAP, &lk, sizeof(lk), 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), 0) << why;
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EPERM)
        << "not in the shared-address mode";
    lk.port = htons(22); // another user's (sshd's)
    s = raw_steer(ACCEL_LPORT_MAP, &lk, sizeof(lk), 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EPERM);
    EXPECT_NE(strstr(why, "not bound by a kernel socket of this user"), nullptr)
        << why;
    s.op = AB_STEER_DEL; // deleting needs no proof
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), 0);
    lk = {IPPROTO_UDP, 0, htons(8080)}; // TCP's owner, not UDP's
    s = raw_steer(ACCEL_LPORT_MAP, &lk, sizeof(lk), 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EPERM);
    lk = {IPPROTO_ICMP, 0, htons(8080)};
    s = raw_steer(ACCEL_LPORT_MAP, &lk, sizeof(lk), 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EINVAL);
    s = raw_steer(ACCEL_LPORT_MAP, &lk, 2, 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EINVAL);

    s = raw_steer(ACCEL_FLOW4_MAP, &fk, sizeof(fk), 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), 0) << why;
    fk.lport = htons(5432);
    s = raw_steer(ACCEL_FLOW4_MAP, &fk, sizeof(fk), 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EPERM);
    f6.lport = htons(8080);
    f6.proto = IPPROTO_TCP;
    s = raw_steer(ACCEL_FLOW6_MAP, &f6, sizeof(f6), 1, 4, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), 0) << why;
}

TEST(broker_policy, shared_neighbour_requests)
{
    struct abp_kernel_addrs k = kernel();
    struct abp_steer_ctx x = shared_ctx();
    char why[AB_WHY_MAX] = "";
    uint32_t ip = inet_addr("10.200.0.1");
    struct in6_addr t;
    struct ab_steer s;

    s = raw_steer(ACCEL_ARP_MAP, &ip, 4, 123, 8, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), 0) << why;
    ip = inet_addr("192.0.2.1"); // not on the link
    s = raw_steer(ACCEL_ARP_MAP, &ip, 4, 123, 8, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EPERM);
    ip = inet_addr("10.200.0.3"); // the address itself
    s = raw_steer(ACCEL_ARP_MAP, &ip, 4, 123, 8, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EPERM);
    inet_pton(AF_INET6, "fd00:200::1", &t);
    s = raw_steer(ACCEL_ND_MAP, &t, 16, 123, 8, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), 0) << why;
    inet_pton(AF_INET6, "ff02::1", &t);
    s = raw_steer(ACCEL_ND_MAP, &t, 16, 123, 8, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EINVAL);
    s = raw_steer(ACCEL_ND_MAP, &t, 16, 123, 8, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EPERM);
}

TEST(broker_policy, shared_ipv6_address_is_the_kernels_global_one)
{
    struct abp_kernel_addrs k = kernel();
    struct abp_steer_ctx x = shared_ctx();
    char why[AB_WHY_MAX] = "";
    struct ab_steer s;

    s = steer(ACCEL_DST6_MAP, "fd00:ac::3", ACCEL_DST6_SHARED, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), 0) << why;
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EPERM);
    s = steer(ACCEL_DST6_MAP, "fd00:200::9", ACCEL_DST6_SHARED, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &x, why, sizeof(why)), -EPERM)
        << "not the kernel's";
}

static struct ab_steer
steer(const char *map, const char *addr, uint32_t kind, uint32_t op)
{
    struct ab_steer s;
    struct in6_addr a;

    memset(&s, 0, sizeof(s));
    snprintf(s.map, sizeof(s.map), "%s", map);
    s.op = op;
    s.klen = sizeof(a);
    s.vlen = sizeof(kind);
    inet_pton(AF_INET6, addr, &a);
    memcpy(s.key, &a, sizeof(a));
    memcpy(s.val, &kind, sizeof(kind));
    return s;
}

TEST(broker_policy, steer_dst6_entries)
{
    struct abp_kernel_addrs k = kernel();
    struct ab_steer s;
    char why[AB_WHY_MAX];

    s = steer(ACCEL_DST6_MAP, "fd00:200::2", ACCEL_DST6_OWN, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), 0);
    s = steer(ACCEL_DST6_MAP, "ff02::1:ff00:2", ACCEL_DST6_SNM, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), 0);
    s = steer(ACCEL_DST6_MAP, "ff15::1234", ACCEL_DST6_GROUP, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), 0);
    s = steer(ACCEL_DST6_MAP, "ff15::1234", 0, AB_STEER_DEL);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), 0);
}

TEST(broker_policy, steer_refusals)
{
    struct abp_kernel_addrs k = kernel();
    struct ab_steer s;
    char why[AB_WHY_MAX];

    // The kernel's own address would be taken from it.
    s = steer(ACCEL_DST6_MAP, "fd00:ac::3", ACCEL_DST6_OWN, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EADDRINUSE);
    s = steer(ACCEL_DST6_MAP, "fd00:200::2", ACCEL_DST6_SNM, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EINVAL);
    s = steer(ACCEL_DST6_MAP, "fd00:200::2", ACCEL_DST6_GROUP, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EINVAL);
    // Groups the kernel needs: a solicited-node group whole, and all-nodes
    // while the kernel has IPv6 on a link (a link-local address).
    s = steer(ACCEL_DST6_MAP, "ff02::1:ff00:3", ACCEL_DST6_GROUP, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EPERM);
    s = steer(ACCEL_DST6_MAP, "ff02::1", ACCEL_DST6_GROUP, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), 0);
    inet_pton(AF_INET6, "fe80::1", &kKernel6[0]);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EPERM);
    s = steer(ACCEL_DST6_MAP, "fd00:200::2", 0x80, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EINVAL);
    // Only the maps meant for clients; the XSK map never.
    s = steer("xsks_map", "fd00:200::2", ACCEL_DST6_OWN, AB_STEER_ADD);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EPERM);
    s = steer(ACCEL_DST6_MAP, "fd00:200::2", ACCEL_DST6_OWN, 7);
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EINVAL);
    s = steer(ACCEL_DST6_MAP, "fd00:200::2", ACCEL_DST6_OWN, AB_STEER_ADD);
    s.klen = 4;
    EXPECT_EQ(abp_check_steer(&s, &k, &kOwn, why, sizeof(why)), -EINVAL);
}
