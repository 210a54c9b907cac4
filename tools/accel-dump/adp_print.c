/*
 * One line per frame when tcpdump is not there to print them (adp_print.h):
 *
 *   12:34:56.789012 IN len 74 IP 10.0.0.1.40000 > 10.0.0.2.80: tcp Flags [S]
 *   12:34:56.789120 OUT len 42 ARP, Reply 10.0.0.2 is-at 02:00:00:00:00:02
 *   12:34:56.790001 IN len 60 IP 10.0.0.1.40000 > 10.0.0.2.81: tcp Flags [S]
 *     [dropped by the stack (rx_drop_stack)]  (on the same line)
 *
 * Times are local, to the microsecond, as tcpdump prints them. Only the
 * captured bytes are parsed; what is cut short is said to be.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "adp_print.h"
#include "adp_write.h"

#define ETH_HLEN 14
#define ET_IP 0x0800
#define ET_ARP 0x0806
#define ET_VLAN 0x8100
#define ET_QINQ 0x88a8
#define ET_IP6 0x86dd

/* Appends to a fixed buffer; what does not fit is cut. */
struct line {
    char *b;
    size_t len, n;
};

static void add(struct line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
add(struct line *l, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (l->n >= l->len)
        return;
    va_start(ap, fmt);
    k = vsnprintf(l->b + l->n, l->len - l->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        l->n = l->n + (size_t)k < l->len ? l->n + (size_t)k : l->len - 1;
}

static uint16_t
be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void
tcp_flags(struct line *l, uint8_t f)
{
    /* tcpdump's letters and order */
    static const struct {
        uint8_t bit;
        char c;
    } t[] = {{0x02, 'S'}, {0x01, 'F'}, {0x04, 'R'}, {0x08, 'P'},
             {0x20, 'U'}, {0x40, 'E'}, {0x80, 'W'}, {0x10, '.'}};
    char s[sizeof(t) / sizeof(t[0]) + 1];
    size_t n = 0;

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (f & t[i].bit)
            s[n++] = t[i].c;
    s[n] = '\0';
    add(l, " Flags [%s]", n != 0 ? s : "none");
}

/* Addresses, ports and protocol of an IPv4 or IPv6 packet's payload. */
static void
l4(struct line *l, const char *fam, const char *src, const char *dst,
   uint8_t proto, const uint8_t *p, size_t n, int first_fragment)
{
    bool ports = first_fragment && (proto == 6 || proto == 17) && n >= 4;

    if (ports)
        add(l, "%s %s.%u > %s.%u: ", fam, src, be16(p), dst, be16(p + 2));
    else
        add(l, "%s %s > %s: ", fam, src, dst);
    switch (proto) {
    case 6:
        add(l, "tcp");
        if (ports && n >= 14)
            tcp_flags(l, p[13]);
        break;
    case 17:
        add(l, "udp");
        break;
    case 1:
        add(l, "ICMP");
        break;
    case 58:
        add(l, "ICMP6");
        break;
    default:
        add(l, "ip-proto-%u", proto);
    }
    if (!first_fragment)
        add(l, " (fragment)");
}

static void
ip4(struct line *l, const uint8_t *p, size_t n)
{
    char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
    size_t ihl;

    if (n < 20 || (p[0] >> 4) != 4 || (ihl = (size_t)(p[0] & 15u) * 4) < 20 ||
        ihl > n) {
        add(l, "IP, truncated");
        return;
    }
    inet_ntop(AF_INET, p + 12, src, sizeof(src));
    inet_ntop(AF_INET, p + 16, dst, sizeof(dst));
    l4(l, "IP", src, dst, p[9], p + ihl, n - ihl, (be16(p + 6) & 0x1fffu) == 0);
}

static void
ip6(struct line *l, const uint8_t *p, size_t n)
{
    char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

    if (n < 40) {
        add(l, "IP6, truncated");
        return;
    }
    inet_ntop(AF_INET6, p + 8, src, sizeof(src));
    inet_ntop(AF_INET6, p + 24, dst, sizeof(dst));
    l4(l, "IP6", src, dst, p[6], p + 40, n - 40, 1);
}

static void
arp(struct line *l, const uint8_t *p, size_t n)
{
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
    uint16_t op;

    /* Ethernet and IPv4 only: hardware 1, protocol 0x0800, 6 and 4 */
    if (n < 28 || be16(p) != 1 || be16(p + 2) != ET_IP || p[4] != 6 ||
        p[5] != 4) {
        add(l, "ARP");
        return;
    }
    op = be16(p + 6);
    inet_ntop(AF_INET, p + 14, a, sizeof(a)); /* sender */
    inet_ntop(AF_INET, p + 24, b, sizeof(b)); /* target */
    if (op == 1)
        add(l, "ARP, Request who-has %s tell %s", b, a);
    else if (op == 2)
        add(l, "ARP, Reply %s is-at %02x:%02x:%02x:%02x:%02x:%02x", a, p[8],
            p[9], p[10], p[11], p[12], p[13]);
    else
        add(l, "ARP, op %u", op);
}

void
adp_print_line(const struct adp_frame *fr, char *buf, size_t len)
{
    struct line l = {buf, len, 0};
    time_t sec = (time_t)(fr->ts_ns / 1000000000u);
    const uint8_t *p = fr->data;
    size_t n = fr->caplen;
    const char *why;
    char hms[16];
    struct tm tm;
    uint16_t type;

    buf[0] = '\0';
    localtime_r(&sec, &tm);
    strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
    add(&l, "%s.%06u %s len %u ", hms,
        (unsigned)(fr->ts_ns % 1000000000u / 1000u),
        fr->dir == BASE_SR_CAP_RX   ? "IN"
        : fr->dir == BASE_SR_CAP_TX ? "OUT"
                                    : "?",
        fr->origlen);
    if (n < ETH_HLEN) {
        add(&l, "(truncated)");
    } else {
        type = be16(p + 12);
        p += ETH_HLEN;
        n -= ETH_HLEN;
        while ((type == ET_VLAN || type == ET_QINQ) && n >= 4) {
            add(&l, "vlan %u, ", be16(p) & 0x0fffu);
            type = be16(p + 2);
            p += 4;
            n -= 4;
        }
        if (type == ET_IP)
            ip4(&l, p, n);
        else if (type == ET_IP6)
            ip6(&l, p, n);
        else if (type == ET_ARP)
            arp(&l, p, n);
        else
            add(&l, "ethertype 0x%04x", type);
    }
    why = adp_drop_text(fr->drop);
    if (why != NULL)
        add(&l, " [%s]", why);
}

int
adp_print_frame(FILE *f, const struct adp_frame *fr)
{
    char buf[512];

    adp_print_line(fr, buf, sizeof(buf));
    errno = 0;
    if (fputs(buf, f) == EOF || putc('\n', f) == EOF)
        return errno != 0 ? -errno : -EIO;
    return 0;
}
