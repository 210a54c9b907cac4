/*
 * Socket options with Linux semantics. The preload layer applies every
 * option to the socket's shadow kernel socket first, so argument checking
 * and errno mostly come from Linux; here values are stored and applied to
 * lwIP, and get returns what Linux would (buffer sizes doubled on set,
 * Linux's defaults otherwise). Options we do not implement return
 * -ENOPROTOOPT and the caller decides.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stddef.h>
#include <netinet/tcp.h>
#include <string.h>
/* glibc's TCP_MSS (512) is not lwIP's TCP_MSS option (lwipopts.h). */
#undef TCP_MSS

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "log.h"
#include "stk_priv.h"
#include "tcp_snd.h"

#define TCP_CA_NAME_MAX 16 /* Linux's, not in the libc headers */

static int
get_int(const void *val, socklen_t len, int *out)
{
    if (val == NULL || len < (socklen_t)sizeof(int))
        return -EINVAL;
    memcpy(out, val, sizeof(int));
    return 0;
}

/* Copy at most *len bytes of an option's value, as Linux's getsockopt:
 * a missing length or buffer is the user copy's EFAULT. */
static int
put_bytes(void *val, socklen_t *len, const void *v, socklen_t size)
{
    socklen_t n;

    if (len == NULL)
        return -EFAULT;
    n = *len < size ? *len : size;
    if (val == NULL && n > 0)
        return -EFAULT;
    memcpy(val, v, (size_t)n);
    *len = n;
    return 0;
}

static int
put_int(void *val, socklen_t *len, int v)
{
    return put_bytes(val, len, &v, (socklen_t)sizeof(v));
}

int
stk__opt_get_small(const void *val, socklen_t len, int *out)
{
    *out = 0; /* do_ip_setsockopt: optlen 0 is a value of 0 */
    if (len == 0)
        return 0;
    if (val == NULL)
        return -EINVAL;
    if (len >= (socklen_t)sizeof(int))
        memcpy(out, val, sizeof(int));
    else
        *out = *(const unsigned char *)val;
    return 0;
}

int
stk__opt_put_small(void *val, socklen_t *len, int v)
{
    if (val == NULL || len == NULL || (int)*len < 0)
        return -EINVAL;
    if (*len < (socklen_t)sizeof(int) && *len > 0 && v >= 0 && v <= 255) {
        *(unsigned char *)val = (unsigned char)v;
        *len = 1;
        return 0;
    }
    if (*len > (socklen_t)sizeof(int))
        *len = sizeof(int);
    memcpy(val, &v, (size_t)*len);
    return 0;
}

/* Linux sock_setsockopt: min(val, max) * 2, at least the minimum. */
static int
linux_buf(int v, int min)
{
    long b = v < 0 ? STK_BUF_MAX : v; /* Linux: min_t(u32, val, max) */

    if (b > STK_BUF_MAX)
        b = STK_BUF_MAX;
    b *= 2;
    return b < min ? min : (int)b;
}

static void
apply_bufs(struct stk_sock *s)
{
    if (s->rcvbuf != 0) {
        /* Linux advertises about half the buffer (tcp_adv_win_scale 1). */
        uint32_t w = (uint32_t)s->rcvbuf / 2;

        s->rcv_limit = w > TCP_WND ? TCP_WND : (w < TCP_MSS ? TCP_MSS : w);
    }
    if (s->sndbuf != 0) {
        uint32_t b = (uint32_t)s->sndbuf / 2;

        s->snd_limit =
            b > TCP_SND_BUF ? TCP_SND_BUF : (b < TCP_MSS ? TCP_MSS : b);
    }
    if (s->type == SOCK_STREAM)
        stk__tcp_window_update(s);
}

static int
set_sol_socket(struct stk_sock *s, int name, const void *val, socklen_t len)
{
    int v, rc;

    if (name == SO_LINGER) {
        struct linger l;

        if (val == NULL || len < (socklen_t)sizeof(l))
            return -EINVAL;
        memcpy(&l, val, sizeof(l));
        /* Linux keeps the time when l_onoff is 0; a negative time is
         * "forever" (the kernel socket reports its own rendering). */
        s->linger_on = l.l_onoff != 0;
        if (l.l_onoff)
            s->linger_sec = l.l_linger < 0 ? INT_MAX : l.l_linger;
        return 0;
    }
    if ((rc = get_int(val, len, &v)) < 0)
        return rc;
    switch (name) {
    case SO_REUSEADDR:
        s->reuseaddr = v != 0;
        break;
    case SO_REUSEPORT:
        s->reuseport = v != 0;
        break;
    case SO_KEEPALIVE:
        s->keepalive = v != 0;
        break;
    case SO_BROADCAST:
        s->broadcast = v != 0;
        return 0;
    case SO_RCVBUF:
        s->rcvbuf = linux_buf(v, STK_RCVBUF_MIN);
        apply_bufs(s);
        return 0;
    case SO_SNDBUF:
        s->sndbuf = linux_buf(v, STK_SNDBUF_MIN);
        apply_bufs(s);
        return 0;
    default:
        return -ENOPROTOOPT;
    }
    if (s->type == SOCK_STREAM)
        stk__tcp_apply_opts(s);
    return 0;
}

/* TCP_CONGESTION: the kernel's shadow socket accepted the name already
 * (its errno for unknown or forbidden names is the program's). A name the
 * stack does not implement (one of the kernel's modules) leaves the
 * connection on its algorithm, which getsockopt then reports. */
static int
set_congestion(struct stk_sock *s, const void *val, socklen_t len)
{
    char name[TCP_CA_NAME_MAX];
    size_t n;
    int cc;

    if (val == NULL || len <= 0)
        return -EINVAL;
    n = (size_t)len < sizeof(name) - 1 ? (size_t)len : sizeof(name) - 1;
    memcpy(name, val, n);
    name[n] = '\0';
    cc = stk_tcp_cc_find(name);
    if (cc < 0) {
        static bool warned; /* once a process: it may ask per connection */

        if (!warned) {
            warned = true;
            BASE_WARN(
                "tcp",
                "TCP_CONGESTION \"%s\" is not implemented by accel: "
                "connections keep %s (accel has cubic, reno and bbr); "
                "nothing to do unless the program needs that one: then run "
                "it without accel",
                name,
                stk_tcp_cc_name(s->cc >= 0 ? s->cc : stk_tcp_cc_default()));
        }
        return -ENOENT;
    }
    s->cc = (int8_t)cc;
    if (s->pcb.tcp != NULL)
        stk__tcp_set_cc(s->pcb.tcp, cc);
    return 0;
}

static int
get_congestion(struct stk_sock *s, void *val, socklen_t *len)
{
    const char *name =
        stk_tcp_cc_name(s->cc >= 0 ? s->cc : stk_tcp_cc_default());
    char buf[TCP_CA_NAME_MAX] = {0};
    socklen_t n;

    if (val == NULL || len == NULL)
        return -EINVAL;
    strncpy(buf, name, sizeof(buf) - 1);
    n = *len < (socklen_t)sizeof(buf) ? *len : (socklen_t)sizeof(buf);
    memcpy(val, buf, (size_t)n);
    *len = n;
    return 0;
}

static int
set_tcp(struct stk_sock *s, int name, const void *val, socklen_t len)
{
    int v, rc;

    if (s->type != SOCK_STREAM)
        return -ENOPROTOOPT;
    if (name == TCP_CONGESTION)
        return set_congestion(s, val, len);
    if ((rc = get_int(val, len, &v)) < 0)
        return rc;
    switch (name) {
    case TCP_NODELAY:
        s->nodelay = v != 0;
        break;
    case TCP_CORK:
        s->cork = v != 0;
        break;
    case TCP_KEEPIDLE:
        if (v < 1 || v > 32767)
            return -EINVAL;
        s->keepidle = v;
        break;
    case TCP_KEEPINTVL:
        if (v < 1 || v > 32767)
            return -EINVAL;
        s->keepintvl = v;
        break;
    case TCP_KEEPCNT:
        if (v < 1 || v > 127)
            return -EINVAL;
        s->keepcnt = v;
        break;
    case TCP_MAXSEG: /* Linux: TCP_MIN_MSS to MAX_TCP_WINDOW, or 0 */
        if (v != 0 && (v < 88 || v > 32767))
            return -EINVAL;
        s->user_mss = (uint16_t)v;
        break;
    default:
        return -ENOPROTOOPT;
    }
    stk__tcp_apply_opts(s);
    /* Linux pushes pending data at once (TCP_NODELAY set, TCP_CORK
     * removed). */
    if (((name == TCP_NODELAY && v != 0) || (name == TCP_CORK && v == 0)) &&
        s->pcb.tcp != NULL && s->st == STK_TCP_CONNECTED)
        tcp_output(s->pcb.tcp);
    return 0;
}

bool
stk_sock_opt_owned(int level, int name)
{
    if (level == SOL_SOCKET)
        return name == SO_REUSEADDR || name == SO_REUSEPORT ||
               name == SO_KEEPALIVE || name == SO_BROADCAST ||
               name == SO_RCVBUF || name == SO_SNDBUF || name == SO_LINGER;
    if (level == IPPROTO_TCP)
        return name == TCP_NODELAY || name == TCP_CORK ||
               name == TCP_KEEPIDLE || name == TCP_KEEPINTVL ||
               name == TCP_KEEPCNT || name == TCP_CONGESTION ||
               name == TCP_MAXSEG;
    return false;
}

/* IPPROTO_IPV6 on an AF_INET6 socket (do_ipv6_setsockopt). */
static int
set_ipv6(struct stk_sock *s, int name, const void *val, socklen_t len)
{
    int v, rc;

    if (!s->inet6)
        return -ENOPROTOOPT;
    if (name != IPV6_V6ONLY && name != IPV6_UNICAST_HOPS && name != IPV6_TCLASS)
        return stk__mc6_setsockopt(s, name, val, len);
    if ((rc = get_int(val, len, &v)) < 0)
        return rc;
    switch (name) {
    case IPV6_V6ONLY:
        return stk_sock_set_v6only(s, v != 0);
    case IPV6_UNICAST_HOPS:
        if (v < -1 || v > 255)
            return -EINVAL;
        s->hops6 = (int16_t)v;
        break;
    default: /* IPV6_TCLASS */
        if (v < -1 || v > 0xff)
            return -EINVAL;
        s->tclass = (uint8_t)(v == -1 ? 0 : v);
        break;
    }
    if (s->type == SOCK_STREAM && s->pcb.tcp != NULL)
        stk__tcp_ip6_opts(s, IP_IS_V6_VAL(s->pcb.tcp->remote_ip));
    return 0;
}

static int
get_ipv6(struct stk_sock *s, int name, void *val, socklen_t *len)
{
    if (!s->inet6)
        return -ENOPROTOOPT;
    switch (name) {
    case IPV6_V6ONLY:
        return put_int(val, len, s->v6only);
    case IPV6_UNICAST_HOPS:
        return put_int(val, len, stk__hops6(s));
    case IPV6_TCLASS:
        return put_int(val, len, s->tclass);
    default:
        return stk__mc6_getsockopt(s, name, val, len);
    }
}

/* The options asking for control messages (IP_PKTINFO, IPV6_RECVPKTINFO,
 * ...: sock_cmsg.c): IPPROTO_IP ones on any socket, as ip_setsockopt
 * (an AF_INET6 UDP socket passes them on to it), IPPROTO_IPV6 ones on an
 * AF_INET6 socket, as do_ipv6_setsockopt. */
static int
set_cmsg(struct stk_sock *s, int level, uint16_t bit, const void *val,
         socklen_t len)
{
    int v, rc;

    if (level == IPPROTO_IPV6 && !s->inet6)
        return -ENOPROTOOPT;
    if (level == SOL_SOCKET && s->type != SOCK_DGRAM)
        return -ENOPROTOOPT; /* SO_TIMESTAMP: the kernel socket keeps it */
    rc = level == IPPROTO_IP ? stk__opt_get_small(val, len, &v)
                             : get_int(val, len, &v);
    if (rc < 0)
        return rc;
    if (v != 0)
        s->rxcmsg |= bit;
    else
        s->rxcmsg &= (uint16_t)~bit;
    return 0;
}

static int
get_cmsg(struct stk_sock *s, int level, uint16_t bit, void *val, socklen_t *len)
{
    int on = (s->rxcmsg & bit) != 0;

    if (level == IPPROTO_IP)
        return stk__opt_put_small(val, len, on);
    if (level == SOL_SOCKET)
        return s->type == SOCK_DGRAM ? put_int(val, len, on) : -ENOPROTOOPT;
    if (!s->inet6)
        return -ENOPROTOOPT;
    return put_int(val, len, on);
}

int
stk__setsockopt(struct stk_sock *s, int level, int name, const void *val,
                socklen_t len)
{
    uint16_t bit = stk__cmsg_bit(level, name);

    if (bit != 0)
        return set_cmsg(s, level, bit, val, len);
    if (level == SOL_SOCKET)
        return set_sol_socket(s, name, val, len);
    if (level == IPPROTO_TCP)
        return set_tcp(s, name, val, len);
    if (level == IPPROTO_IP)
        return stk__mc_setsockopt(s, name, val, len);
    if (level == IPPROTO_IPV6)
        return set_ipv6(s, name, val, len);
    return -ENOPROTOOPT;
}

/* Linux's tcp_info state numbering. */
static int
linux_tcp_state(const struct stk_sock *s)
{
    const struct tcp_pcb *pcb = s->pcb.tcp;

    if (s->st == STK_TCP_LISTEN)
        return TCP_LISTEN;
    if (pcb == NULL)
        return TCP_CLOSE;
    switch (pcb->state) {
    case SYN_SENT:
        return TCP_SYN_SENT;
    case SYN_RCVD:
        return TCP_SYN_RECV;
    case ESTABLISHED:
        return TCP_ESTABLISHED;
    case FIN_WAIT_1:
        return TCP_FIN_WAIT1;
    case FIN_WAIT_2:
        return TCP_FIN_WAIT2;
    case CLOSE_WAIT:
        return TCP_CLOSE_WAIT;
    case CLOSING:
        return TCP_CLOSING;
    case LAST_ACK:
        return TCP_LAST_ACK;
    case TIME_WAIT:
        return TCP_TIME_WAIT;
    default:
        return TCP_CLOSE;
    }
}

static int
eff_mss(const struct stk_sock *s)
{
    const struct tcp_pcb *pcb = s->pcb.tcp;
    int mss;

    /* Linux (do_tcp_getsockopt): the value set while closed or
     * listening, else mss_cache, 536 before a connection exists. */
    if (pcb == NULL || s->st != STK_TCP_CONNECTED)
        return s->user_mss != 0 ? s->user_mss : 536;
    mss = pcb->mss;
#if LWIP_TCP_TIMESTAMPS
    if (pcb->flags & TF_TIMESTAMP)
        mss -= 12; /* the timestamp option rides in every segment */
#endif
    return mss;
}

/* The pacing rate Linux reports (tcp_update_pacing_rate) when the
 * algorithm sets none: 2x cwnd per SRTT in slow start, else 1.2x. */
static uint64_t
pacing_rate(const struct tcp_pcb *pcb, uint32_t mss)
{
    const struct stk_tcp_ext *x = &pcb->acc;
    uint64_t rate;
    uint32_t w = x->cwnd > x->packets_out ? x->cwnd : x->packets_out;

    if (x->pacing_rate != 0)
        return x->pacing_rate;
    if (x->srtt_us == 0)
        return UINT64_MAX;
    rate = (uint64_t)mss * ((1000000u / 100u) << 3);
    rate *= x->cwnd < x->ssthresh / 2 ? 200u : 120u;
    rate *= w;
    return rate / x->srtt_us;
}

_Static_assert(offsetof(struct stk_tcp_info, tcpi_pacing_rate) == 104,
               "Linux's tcp_info layout");
_Static_assert(offsetof(struct stk_tcp_info, tcpi_delivery_rate) == 160,
               "Linux's tcp_info layout");
_Static_assert(offsetof(struct stk_tcp_info, tcpi_snd_wnd) == 228,
               "Linux's tcp_info layout");
_Static_assert(sizeof(struct stk_tcp_info) == 232, "Linux's tcp_info size");
_Static_assert(sizeof(struct tcp_info) ==
                   sizeof(((struct stk_tcp_info *)0)->base),
               "glibc's tcp_info");

static int
get_tcp_info(struct stk_sock *s, void *val, socklen_t *len)
{
    struct stk_tcp_info tl;
    struct tcp_info ti;
    socklen_t n;

    if (val == NULL || len == NULL)
        return -EINVAL;
    memset(&ti, 0, sizeof(ti));
    ti.tcpi_state = (uint8_t)linux_tcp_state(s);
    /* mss_cache: TCP_MAXSEG's set value is not in it */
    ti.tcpi_snd_mss = s->st == STK_TCP_CONNECTED ? (uint32_t)eff_mss(s) : 536;
    ti.tcpi_rcv_mss = ti.tcpi_snd_mss;
    if (s->st == STK_TCP_LISTEN) {
        /* tcp_get_info on a listener: the accept queue and its limit */
        ti.tcpi_unacked = (uint32_t)s->accq_len;
        ti.tcpi_sacked = (uint32_t)s->backlog;
    }
    if (s->pcb.tcp != NULL && s->st == STK_TCP_CONNECTED) {
        const struct tcp_pcb *pcb = s->pcb.tcp;

        const struct stk_tcp_ext *x = &pcb->acc;

        ti.tcpi_ca_state = x->ca_state; /* Linux's TCP_CA_* numbering */
        ti.tcpi_retransmits = x->retransmits;
        ti.tcpi_backoff = x->backoff;
        if (pcb->flags & TF_TIMESTAMP)
            ti.tcpi_options |= TCPI_OPT_TIMESTAMPS;
        if (pcb->flags & TF_SACK)
            ti.tcpi_options |= TCPI_OPT_SACK;
        if (pcb->flags & TF_WND_SCALE) {
            ti.tcpi_options |= TCPI_OPT_WSCALE;
            ti.tcpi_snd_wscale = pcb->snd_scale & 0xf;
            ti.tcpi_rcv_wscale = pcb->rcv_scale & 0xf;
        }
        ti.tcpi_rto = x->rto_us;
        ti.tcpi_unacked = x->packets_out;
        ti.tcpi_sacked = x->sacked_out;
        ti.tcpi_lost = x->lost_out;
        ti.tcpi_retrans = x->retrans_out;
        ti.tcpi_rtt = x->srtt_us >> 3;
        ti.tcpi_rttvar = x->mdev_us >> 2;
        ti.tcpi_snd_ssthresh = x->ssthresh;
        ti.tcpi_snd_cwnd = x->cwnd;
        ti.tcpi_advmss = TCP_MSS;
        ti.tcpi_reordering = x->reordering;
        ti.tcpi_rcv_space = pcb->rcv_wnd;
        ti.tcpi_total_retrans = x->total_retrans;
    }
    memset(&tl, 0, sizeof(tl));
    memcpy(tl.base, &ti, sizeof(ti));
    tl.tcpi_max_pacing_rate = UINT64_MAX;
    if (s->pcb.tcp != NULL && s->st == STK_TCP_CONNECTED) {
        const struct tcp_pcb *pcb = s->pcb.tcp;
        const struct stk_tcp_ext *x = &pcb->acc;
        uint32_t mss = (uint32_t)eff_mss(s);

        tl.tcpi_pacing_rate = pacing_rate(pcb, mss);
        if (stk__min_rtt_us(x) != UINT32_MAX)
            tl.tcpi_min_rtt = stk__min_rtt_us(x);
        if (x->rate_interval_us != 0)
            tl.tcpi_delivery_rate = (uint64_t)x->rate_delivered * mss *
                                    1000000u / x->rate_interval_us;
        /* tcpi_delivery_rate_app_limited: bit 0 of the byte after the
         * window scales (padding in glibc's struct). */
        if (x->rate_app_limited)
            ((uint8_t *)&tl)[7] |= 1u;
        tl.tcpi_bytes_acked = x->bytes_acked;
        tl.tcpi_bytes_received = stk__tcp_bytes_received(pcb);
        tl.tcpi_delivered = x->delivered;
        tl.tcpi_reord_seen = x->reord_seen;
        tl.tcpi_snd_wnd = pcb->snd_wnd;
    } else if (s->type == SOCK_STREAM) {
        /* the connection ended (TIME-WAIT, reset, closed): its counts
         * stay with the socket, as Linux's tcp_sock keeps them */
        tl.tcpi_bytes_acked = s->bytes_acked;
        tl.tcpi_bytes_received = s->bytes_received;
    }
    n = *len < (socklen_t)sizeof(tl) ? *len : (socklen_t)sizeof(tl);
    memcpy(val, &tl, (size_t)n);
    *len = n;
    return 0;
}

int
stk__getsockopt(struct stk_sock *s, int level, int name, void *val,
                socklen_t *len)
{
    bool tcp = s->type == SOCK_STREAM;
    uint16_t bit = stk__cmsg_bit(level, name);

    if (bit != 0)
        return get_cmsg(s, level, bit, val, len);
    if (level == SOL_SOCKET) {
        switch (name) {
        case SO_TYPE:
            return put_int(val, len, s->type);
        case SO_PROTOCOL:
            return put_int(val, len, tcp ? IPPROTO_TCP : IPPROTO_UDP);
        case SO_DOMAIN:
            return put_int(val, len, stk_sock_family(s));
        case SO_ERROR:
            return put_int(val, len, stk_sock_take_error(s));
        case SO_ACCEPTCONN:
            return put_int(val, len, stk_sock_is_listening(s));
        case SO_REUSEADDR:
            return put_int(val, len, s->reuseaddr);
        case SO_REUSEPORT:
            return put_int(val, len, s->reuseport);
        case SO_KEEPALIVE:
            return put_int(val, len, s->keepalive);
        case SO_BROADCAST:
            return put_int(val, len, s->broadcast);
        case SO_RCVBUF:
            return put_int(val, len,
                           s->rcvbuf ? s->rcvbuf
                                     : (tcp ? STK_TCP_RCVBUF_DEFAULT
                                            : STK_UDP_BUF_DEFAULT));
        case SO_SNDBUF:
            return put_int(val, len,
                           s->sndbuf ? s->sndbuf
                                     : (tcp ? STK_TCP_SNDBUF_DEFAULT
                                            : STK_UDP_BUF_DEFAULT));
        case SO_LINGER: {
            struct linger l = {s->linger_on, s->linger_sec};

            return put_bytes(val, len, &l, (socklen_t)sizeof(l));
        }
        default:
            return -ENOPROTOOPT;
        }
    }
    if (level == IPPROTO_TCP && tcp) {
        switch (name) {
        case TCP_NODELAY:
            return put_int(val, len, s->nodelay);
        case TCP_CORK:
            return put_int(val, len, s->cork);
        case TCP_KEEPIDLE:
            return put_int(val, len, s->keepidle);
        case TCP_KEEPINTVL:
            return put_int(val, len, s->keepintvl);
        case TCP_KEEPCNT:
            return put_int(val, len, s->keepcnt);
        case TCP_MAXSEG:
            return put_int(val, len, eff_mss(s));
        case TCP_INFO:
            return get_tcp_info(s, val, len);
        case TCP_CONGESTION:
            return get_congestion(s, val, len);
        default:
            return -ENOPROTOOPT;
        }
    }
    if (level == IPPROTO_IP)
        return stk__mc_getsockopt(s, name, val, len);
    if (level == IPPROTO_IPV6)
        return get_ipv6(s, name, val, len);
    return -ENOPROTOOPT;
}
