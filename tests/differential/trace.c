/*
 * Trace printing for the differential scenarios: formats call results,
 * errno names, poll/epoll event sets, message flags, data and addresses
 * into the normalised one-line-per-fact form that run.sh compares between
 * the kernel and the accelerated run. Everything goes to stdout; stderr is
 * left to the library's logs and is never compared.
 */
#define _GNU_SOURCE
#include "trace.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define RING 8
#define RING_LEN 512

static char ring[RING][RING_LEN];
static unsigned ring_next;

static char *
ring_buf(void)
{
    char *b = ring[ring_next++ % RING];
    b[0] = '\0';
    return b;
}

void
tr_init(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
}

const char *
tr_errname(int err)
{
    const char *n = strerrorname_np(err);
    char *b;

    if (n)
        return n;
    b = ring_buf();
    snprintf(b, RING_LEN, "E%d", err);
    return b;
}

long
tr_call(int line, const char *expr, long r, int err, enum tr_kind kind)
{
    if (r < 0)
        printf("%d: %s -> %ld errno=%s\n", line, expr, r, tr_errname(err));
    else if (kind == TR_FD)
        printf("%d: %s -> fd\n", line, expr);
    else if (kind == TR_POS && r > 0)
        printf("%d: %s -> >0\n", line, expr);
    else
        printf("%d: %s -> %ld\n", line, expr, r);
    return r;
}

void
tr_note(int line, const char *fmt, ...)
{
    va_list ap;

    printf("%d: ", line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

struct flag_name {
    unsigned long bit;
    const char *name;
};

static const char *
flags_str(unsigned long v, const struct flag_name *t, size_t n)
{
    char *b = ring_buf();
    size_t i;

    for (i = 0; i < n; i++) {
        if (!(v & t[i].bit))
            continue;
        if (b[0])
            strncat(b, "|", RING_LEN - strlen(b) - 1);
        strncat(b, t[i].name, RING_LEN - strlen(b) - 1);
        v &= ~t[i].bit;
    }
    if (v) {
        char rest[32];
        snprintf(rest, sizeof(rest), "%s0x%lx", b[0] ? "|" : "", v);
        strncat(b, rest, RING_LEN - strlen(b) - 1);
    }
    if (!b[0])
        strcpy(b, "0");
    return b;
}

#define FN(x)                                                                  \
    {                                                                          \
        (unsigned long)(x), #x                                                 \
    }

const char *
tr_pollev(int ev)
{
    static const struct flag_name t[] = {
        FN(POLLIN),     FN(POLLPRI),    FN(POLLOUT),    FN(POLLERR),
        FN(POLLHUP),    FN(POLLNVAL),   FN(POLLRDNORM), FN(POLLRDBAND),
        FN(POLLWRNORM), FN(POLLWRBAND), FN(POLLMSG),    FN(POLLRDHUP),
    };
    return flags_str((unsigned short)ev, t, sizeof(t) / sizeof(t[0]));
}

const char *
tr_epollev(uint32_t ev)
{
    static const struct flag_name t[] = {
        FN(EPOLLIN),     FN(EPOLLPRI),    FN(EPOLLOUT),    FN(EPOLLERR),
        FN(EPOLLHUP),    FN(EPOLLRDNORM), FN(EPOLLRDBAND), FN(EPOLLWRNORM),
        FN(EPOLLWRBAND), FN(EPOLLMSG),    FN(EPOLLRDHUP),
    };
    return flags_str(ev, t, sizeof(t) / sizeof(t[0]));
}

const char *
tr_msgflags(int flags)
{
    static const struct flag_name t[] = {
        FN(MSG_OOB),      FN(MSG_PEEK),         FN(MSG_DONTROUTE),
        FN(MSG_CTRUNC),   FN(MSG_TRUNC),        FN(MSG_DONTWAIT),
        FN(MSG_EOR),      FN(MSG_WAITALL),      FN(MSG_ERRQUEUE),
        FN(MSG_NOSIGNAL), FN(MSG_CMSG_CLOEXEC),
    };
    return flags_str((unsigned)flags, t, sizeof(t) / sizeof(t[0]));
}

const char *
tr_data(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    char *b = ring_buf();
    size_t o = 0, i;

    b[o++] = '"';
    for (i = 0; i < len && i < 120; i++) {
        unsigned char c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            b[o++] = (char)c;
        else
            o += (size_t)snprintf(b + o, RING_LEN - o, "\\x%02x", c);
    }
    b[o++] = '"';
    b[o] = '\0';
    if (len > 120)
        snprintf(b + o, RING_LEN - o, "...(%zu bytes)", len);
    return b;
}

const char *
tr_addr(const void *sa, int eph)
{
    const struct sockaddr_in *in = sa;
    const struct sockaddr_in6 *in6 = sa;
    char ip[INET6_ADDRSTRLEN], port[8];
    char *b = ring_buf();

    if (in->sin_family == AF_INET6) {
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
        snprintf(port, sizeof(port), "%u", ntohs(in6->sin6_port));
        if (eph && ntohs(in6->sin6_port))
            strcpy(port, "eph");
        snprintf(b, RING_LEN, "[%s]:%s flow=%u scope=%u", ip, port,
                 (unsigned)ntohl(in6->sin6_flowinfo), in6->sin6_scope_id);
        return b;
    }
    if (in->sin_family != AF_INET) {
        snprintf(b, RING_LEN, "family=%d", in->sin_family);
        return b;
    }
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
    if (eph)
        snprintf(b, RING_LEN, "%s:%s", ip, ntohs(in->sin_port) ? "eph" : "0");
    else
        snprintf(b, RING_LEN, "%s:%u", ip, ntohs(in->sin_port));
    return b;
}
