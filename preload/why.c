/*
 * Reasons for sockets left on the kernel: the log line and the counter
 * (why.h).
 */
#include "why.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "rt.h"
#include "statreg.h"
#include "stats.h"

static const char *const texts[PL_WHY_COUNT] = {
#define PL_WHY(name, warns, text) [PL_WHY_##name] = text,
#include "why.def"
#undef PL_WHY
};

static const bool listener_warns[PL_WHY_COUNT] = {
#define PL_WHY(name, warns, text) [PL_WHY_##name] = warns,
#include "why.def"
#undef PL_WHY
};

const char *
pl_why_text(enum pl_why why)
{
    return (unsigned)why < PL_WHY_COUNT ? texts[why] : "?";
}

/* "a.b.c.d:port" or "[v6]:port" of a, or "" */
static void
addr_text(const struct sockaddr *a, socklen_t len, char *buf, size_t n)
{
    char ab[INET6_ADDRSTRLEN];

    buf[0] = '\0';
    if (a == NULL)
        return;
    if (a->sa_family == AF_INET &&
        len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)a;

        inet_ntop(AF_INET, &sin->sin_addr, ab, sizeof(ab));
        snprintf(buf, n, " %s:%u", ab, ntohs(sin->sin_port));
    } else if (a->sa_family == AF_INET6 &&
               len >= (socklen_t)offsetof(struct sockaddr_in6, sin6_scope_id)) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)a;

        inet_ntop(AF_INET6, &s6->sin6_addr, ab, sizeof(ab));
        snprintf(buf, n, " [%s]:%u", ab, ntohs(s6->sin6_port));
    }
}

void
pl_why_note(int fd, enum pl_why why, const char *call, const struct sockaddr *a,
            socklen_t len)
{
    static atomic_uint warned; /* listener reasons already warned about */
    char at[INET6_ADDRSTRLEN + 16];
    unsigned bit = 1u << ((unsigned)why % 32);

    if ((unsigned)why >= PL_WHY_COUNT)
        return;
    base_stats_register_exit();         /* also when nothing is accelerated */
    base_sr_ensure(rt_lock, rt_unlock); /* accel-stat --reasons lists it */
    rt_lock();
    switch (why) {
#define PL_WHY(name, warns, text)                                              \
    case PL_WHY_##name:                                                        \
        BASE_STAT_INC(kernel_why_##name);                                      \
        break;
#include "why.def"
#undef PL_WHY
    default:
        break;
    }
    BASE_STAT_INC(sock_kernel);
    rt_unlock();
    base_sr_kernel_note(fd, (int)why, call, a, len);
    addr_text(a, len, at, sizeof(at));
    if ((strcmp(call, "bind") == 0 || strcmp(call, "listen") == 0) &&
        listener_warns[why] && !(atomic_fetch_or(&warned, bit) & bit) &&
        base_log_level >= BASE_LOG_WARN)
        BASE_WARN("fd", "fd %d: %s%s stays on the kernel: %s", fd, call, at,
                  texts[why]);
    else
        BASE_INFO("fd", "fd %d: %s%s stays on the kernel: %s", fd, call, at,
                  texts[why]);
}
