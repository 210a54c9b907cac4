/*
 * stack/ internals shared by the files of stack/ only (stk__ names): the
 * socket object, the receive rings, and helpers between sock.c,
 * sock_tcp.c, sock_udp.c, netif.c and errmap.c. Includes lwIP headers, so
 * it never leaves stack/ (tests/stack may include it).
 */
#ifndef ACCEL_STK_PRIV_H
#define ACCEL_STK_PRIV_H

#include "stk.h"

#include "lwip/err.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Linux's default buffer sizes as getsockopt reports them (sysctl
 * tcp_wmem/tcp_rmem/wmem_default/rmem_default on Debian 12). */
/* Code that runs only when something went wrong (a loss, a timeout, an
 * undo): kept out of the hot path's instruction cache lines, and its
 * branches predicted not taken. */
#define STK_COLD __attribute__((cold))

#define STK_TCP_SNDBUF_DEFAULT 16384
#define STK_TCP_RCVBUF_DEFAULT 131072
#define STK_UDP_BUF_DEFAULT 212992
#define STK_SNDBUF_MIN 4608           /* SOCK_MIN_SNDBUF */
#define STK_RCVBUF_MIN 2304           /* SOCK_MIN_RCVBUF */
#define STK_BUF_MAX (4 * 1024 * 1024) /* net.core.[rw]mem_max */
#define STK_SOMAXCONN 4096
#define STK_UDP_MAX_PAYLOAD 65507
/* Bytes a queued datagram costs against SO_RCVBUF besides its payload
 * (roughly Linux's skb truesize overhead). */
#define STK_UDP_OVERHEAD 768

/** What a received UDP datagram carries besides its data: its source and
 *  what its control messages tell, recorded when queued (sock_cmsg.c). */
struct stk_rx_item {
    struct pbuf *p;
    ip_addr_t addr; /* UDP source */
    uint16_t port;  /* UDP source, host order */
    uint8_t tos;    /* UDP: IPv4 TOS or IPv6 traffic class */
    uint8_t ttl;    /* UDP: IPv4 TTL or IPv6 hop limit */
    int ifindex;    /* UDP: arrival interface (IPv4: 0 unless asked for) */
    ip_addr_t dst;  /* UDP: the datagram's destination */
    int64_t ts_ns;  /* UDP: arrival (CLOCK_REALTIME) with SO_TIMESTAMP */
    /* UDP: queued when the process forked, so every process of the fork
     * holds a copy; the first to read one of the tag's takes them all
     * (stk_flow_ops udp_claim). 0: this process's alone. */
    uint32_t fork_tag;
};

/** A ring of received items. A TCP socket's holds pbuf chains only (8
 *  bytes a slot; an idle connection that received data keeps 8 slots), a
 *  UDP socket's whole stk_rx_items (64 bytes): the kind is fixed by the
 *  first push, stk__ring_push_seg or stk__ring_push. */
struct stk_ring {
    void *v; /* struct pbuf *[cap], or struct stk_rx_item[cap] if dgram */
    uint32_t cap, head, count;
    bool dgram;
};

enum stk_tcp_state {
    STK_TCP_CLOSED = 0, /* fresh, or the connection ended */
    STK_TCP_LISTEN,
    STK_TCP_SYN_SENT,
    STK_TCP_CONNECTED, /* established (and what follows while pcb lives) */
};

struct stk_sock {
    int type; /* SOCK_STREAM / SOCK_DGRAM */
    union {
        struct tcp_pcb *tcp;
        struct udp_pcb *udp;
    } pcb; /* NULL once lwIP freed it (tcp: ext arg destroy callback);
              NULL while listening: the listener group holds the pcb */

    void *notify_ctx; /* what the readiness callback gets (stk_set_notify) */
    uint32_t gen;
    int err; /* pending SO_ERROR, positive errno, 0 = none */

    /* Address model (see DESIGN.md 7): lwIP's ip_addr_t everywhere. An
     * AF_INET socket holds IPv4 addresses only. An AF_INET6 socket
     * (inet6) holds IPv4 ones for ::ffff:a.b.c.d (its IPv4 traffic, as
     * lwIP's pcbs do), IPv6 ones, and IPADDR_TYPE_ANY for a `::` that
     * takes both families (not v6only). */
    bool inet6;     /* AF_INET6: names are sockaddr_in6 */
    bool v6only;    /* IPV6_V6ONLY (Linux sets it too on a bind to a native
                       IPv6 address) */
    uint32_t scope; /* IPv6 interface a link-local bind/connect named */
    int16_t hops6;  /* IPV6_UNICAST_HOPS, -1: the default (64) */
    uint8_t tclass; /* IPV6_TCLASS */
    /* Address as bound by the application (port in host order). */
    ip_addr_t bind_ip;
    uint16_t bind_port;
    bool bound;          /* bind() was called (or listen/connect autobound) */
    bool port_explicit;  /* bind() named a port: kept across disconnects */
    bool addr_explicit;  /* bind() named an address (SOCK_BINDADDR_LOCK) */
    bool syn_lost;       /* TCP: the connect was refused; its SYN stays
                            unacknowledged (SIOCOUTQ 1) until a new pcb */
    uint16_t steer_port; /* the port reported served (steer.c), 0: none */

    /* Socket options. */
    bool reuseaddr, reuseport, keepalive, nodelay, broadcast;
    bool cork; /* TCP_CORK */
    int8_t cc; /* TCP_CONGESTION's algorithm (STK_CC_*), -1: ACCEL_TCP_CC */
    bool linger_on;
    int linger_sec;
    int sndbuf, rcvbuf; /* effective (doubled) values once set, 0 = default */
    int keepidle, keepintvl, keepcnt; /* seconds / count */
    uint16_t user_mss; /* TCP_MAXSEG, 0: none (lwIP patch 0031) */

    /* Shutdown and end-of-stream state (Linux sk_shutdown bits). */
    bool shut_rd, shut_wr;

    /* TCP */
    enum stk_tcp_state st;
    bool connecting;       /* connect() returned EINPROGRESS (SS_CONNECTING) */
    bool connect_reported; /* a connect() call saw the completion */
    bool fin_rcvd;
    bool ever_connected;
    ip_addr_t peer_ip;  /* TCP peer / UDP default peer */
    uint16_t peer_port; /* host order, 0 = none (UDP) */
    bool udp_connected;
    uint32_t rcv_limit; /* receive window cap in bytes */
    uint32_t snd_limit; /* send buffer cap in bytes */
    /* TCP_INFO's byte counts, kept when the pcb leaves the socket */
    uint64_t bytes_acked, bytes_received;

    /* Receive queue. rx_bytes: TCP bytes / UDP charged bytes. */
    struct stk_ring rxq;
    uint32_t rx_off; /* TCP: bytes already read from the head chain */
    size_t rx_bytes;

    /* Listening socket: queue of accepted connections. */
    struct stk_sock *accq_head, *accq_tail;
    int accq_len;
    int backlog; /* Linux's clamped backlog: full when accq_len > backlog */
    struct stk_sock *acc_next;
    struct stk_sock *listener; /* set while queued on a listener */

    /* Listening socket: its listener group (sock_tcp_listen.c). */
    struct stk_lgroup *lgrp;
    struct stk_sock *lg_next;
    /* Listening socket: random id, the same in every copy a fork makes;
     * names this listener to the runtime's connection distribution. */
    uint32_t lid;

    /* Connection copied by fork and not yet claimed (stack/fork.c): its
     * pcb is out of lwIP's lists, so it neither receives nor sends. */
    bool frozen;

    /* On the deferred-output list (output.c). */
    bool out_pending;
    struct stk_sock *out_next;

    /* UDP multicast options and memberships (sock_mcast.c); NULL until
     * the first multicast option: Linux's defaults. */
    struct stk_mcast *mc;

    /* The control messages a receive gives (STK_CMSG_* bits): IP_PKTINFO,
     * IPV6_RECVPKTINFO and the others of sock_cmsg.c. */
    uint16_t rxcmsg;
};

/** stk_sock.rxcmsg: one bit per option asking for a control message
 *  (Linux's inet->cmsg_flags and ipv6_pinfo->rxopt). */
enum {
    STK_CMSG_PKTINFO = 1u << 0,      /* IP_PKTINFO */
    STK_CMSG_TTL = 1u << 1,          /* IP_RECVTTL */
    STK_CMSG_TOS = 1u << 2,          /* IP_RECVTOS */
    STK_CMSG_PKTINFO6 = 1u << 3,     /* IPV6_RECVPKTINFO */
    STK_CMSG_HOPLIMIT6 = 1u << 4,    /* IPV6_RECVHOPLIMIT */
    STK_CMSG_TCLASS6 = 1u << 5,      /* IPV6_RECVTCLASS */
    STK_CMSG_2292PKTINFO = 1u << 6,  /* IPV6_2292PKTINFO */
    STK_CMSG_2292HOPLIMIT = 1u << 7, /* IPV6_2292HOPLIMIT */
    STK_CMSG_TIMESTAMP = 1u << 8,    /* SO_TIMESTAMP (UDP) */
};

/** The listening sockets sharing one lwIP listening pcb (SO_REUSEPORT);
 *  a plain listener is a group of one. The pcb's callback arg is the
 *  group; it is closed with the last member. */
struct stk_lgroup {
    struct tcp_pcb *lpcb;
    struct stk_sock *head; /* members, in listen() order, via lg_next */
    uint32_t n;
    uint64_t cookie_ns;  /* the last SYN cookie sent (syncookie.c); 0 */
    uint64_t xdp_ask_ns; /* the last link op syn_cookies for it; 0 */
};

/** Some member of g has room in its accept queue. */
bool stk__group_has_room(const struct stk_lgroup *g);

/* isn.c */
/** The ISN's secret (made on first use). */
void stk__isn_key(uint64_t key[2]);
/** A keyed hash (the ISN's secret) of a 4-tuple and salt: SYN cookies. */
uint32_t stk__tuple_hash(const struct ip_addr *local_ip, uint16_t local_port,
                         const struct ip_addr *remote_ip, uint16_t remote_port,
                         uint64_t salt);

/* lwIP, patch 0032: send a segment no pcb owns (TCP header filled in). */
struct pbuf;
err_t tcp_output_stateless(struct pbuf *p, const ip_addr_t *src,
                           const ip_addr_t *dst);

/* tcp_rate.c */
/** The application is about to write: is the sender app-limited (Linux's
 *  tcp_rate_check_app_limited)? */
void stk__tcp_check_app_limited(struct tcp_pcb *pcb);

/* output.c */
/** tcp_output now, or at stk_output_flush() when this thread defers. */
void stk__tcp_output_soon(struct stk_sock *s);
/** s is going away: off the deferred-output list. */
void stk__output_forget(struct stk_sock *s);

/* sock.c */
/** Recompute events, bump gen when ev_new, and call notify. */
void stk__changed(struct stk_sock *s, bool ev_new);
struct stk_sock *stk__sock_alloc(int type);
void stk__sock_free(struct stk_sock *s);
/** What an address is given for: Linux checks each differently. */
enum stk_addr_op {
    STK_ADDR_BIND,
    STK_ADDR_CONNECT_TCP,
    STK_ADDR_CONNECT_UDP,
    STK_ADDR_SENDTO,
};
/** The application's address for op on s, as Linux's inet (AF_INET
 *  socket) or inet6 (AF_INET6) code reads it: *ip (IPv4 for AF_INET and
 *  ::ffff:a.b.c.d, IPv6, or IPADDR_TYPE_ANY for a dual `::` bind), *port
 *  (host order), *scope (sin6_scope_id, 0 when absent). 0, 1 for a
 *  sendto name that counts as none (AF_UNSPEC on AF_INET6), or -errno. */
int stk__addr_in(const struct stk_sock *s, const struct sockaddr *addr,
                 socklen_t len, enum stk_addr_op op, ip_addr_t *ip,
                 uint16_t *port, uint32_t *scope);
/** The name of ip:port for s: sockaddr_in, or sockaddr_in6 on an
 *  AF_INET6 socket (IPv4 as ::ffff:a.b.c.d, scope id for link-local). */
void stk__addr_out(const struct stk_sock *s, const ip_addr_t *ip, uint16_t port,
                   struct sockaddr *addr, socklen_t *len);
/** ip as an in6_addr: IPv4 mapped, IPADDR_TYPE_ANY as `::`. */
void stk__ip_to_in6(const ip_addr_t *ip, struct in6_addr *a);
/** a as lwIP's: ::ffff:a.b.c.d as IPv4, else IPv6 (no zone). */
void stk__ip_from_in6(ip_addr_t *ip, const struct in6_addr *a);
/** Two bound addresses overlap (Linux's bind conflict address rule:
 *  wildcards of a family, and a dual `::` over both families). */
bool stk__addr_overlap(const ip_addr_t *a, const ip_addr_t *b);
/** Copy up to len bytes (and at most what is queued) out of the TCP byte
 *  queue or the first datagram into iov; see sock.c. */
int stk__ring_push_seg(struct stk_ring *r, struct pbuf *p);
struct pbuf *stk__ring_seg_at(const struct stk_ring *r, uint32_t i);
int stk__ring_push(struct stk_ring *r, struct pbuf *p, const ip_addr_t *addr,
                   uint16_t port);
struct stk_rx_item *stk__ring_head(struct stk_ring *r);
struct stk_rx_item *stk__ring_at(struct stk_ring *r, uint32_t i);
void stk__ring_pop(struct stk_ring *r);
void stk__ring_free(struct stk_ring *r);
size_t stk__iov_copy_from_pbuf(const struct msghdr *msg, size_t iov_skip,
                               struct pbuf *p, uint32_t off, size_t n);
size_t stk__iov_len(const struct msghdr *msg);
/** Linux's conflict rule for binding port on ip. */
bool stk__port_conflict(const struct stk_sock *s, const ip_addr_t *ip,
                        uint16_t port);

/* sock_tcp.c */
int stk__tcp_create(struct stk_sock *s);
int stk__tcp_bind(struct stk_sock *s, const ip_addr_t *ip, uint16_t port);
/** Link s and pcb both ways (arg, ext arg, callbacks). */
void stk__tcp_attach(struct stk_sock *s, struct tcp_pcb *pcb);
/** Cut every link between s and its pcb; return the pcb (or NULL). */
struct tcp_pcb *stk__tcp_detach(struct stk_sock *s);
/** Abort s's connection with a RST (silently when not synchronized). */
void stk__tcp_abort(struct stk_sock *s);
/** lwIP's address type for s's unbound pcbs (V4, V6 or ANY). */
u8_t stk__sock_iptype(const struct stk_sock *s);
/** The wildcard of s's family. */
void stk__sock_any(const struct stk_sock *s, ip_addr_t *ip);
/** Give s a fresh CLOSED pcb, bound again to an explicit port. */
int stk__tcp_fresh_pcb(struct stk_sock *s);
/** Cap a new connection's receive window to SO_RCVBUF's. */
void stk__tcp_window_clamp(struct stk_sock *s);
int stk__tcp_connect(struct stk_sock *s, const struct sockaddr *addr,
                     socklen_t len);
ssize_t stk__tcp_recvmsg(struct stk_sock *s, struct msghdr *msg, int flags);
ssize_t stk__tcp_sendmsg(struct stk_sock *s, const struct msghdr *msg,
                         int flags);
int stk__tcp_shutdown(struct stk_sock *s, int how);
void stk__tcp_close(struct stk_sock *s);
uint32_t stk__tcp_events(struct stk_sock *s);
int stk__tcp_outq(struct stk_sock *s);
int stk__tcp_notsent(struct stk_sock *s); /* SIOCOUTQNSD */
void stk__tcp_apply_opts(struct stk_sock *s);
/** IPV6_UNICAST_HOPS/IPV6_TCLASS onto s's pcb when it talks IPv6. */
void stk__tcp_ip6_opts(struct stk_sock *s, bool v6);
void stk__tcp_window_update(struct stk_sock *s);
uint32_t stk__tcp_snd_avail(struct stk_sock *s);
void stk__tcp_init(void);

/* sock_tcp_listen.c */
/** A socket for newpcb, queued on listener l (options inherited). */
struct stk_sock *stk__tcp_queue_new(struct stk_sock *l, struct tcp_pcb *newpcb);
void stk__tcp_group_backlog(struct stk_lgroup *g);
int stk__tcp_listen(struct stk_sock *s, int backlog);
int stk__tcp_accept(struct stk_sock *s, struct stk_sock **out,
                    struct sockaddr *addr, socklen_t *len);
/** Stop listening: reset the queued connections, leave the group (its
 *  pcb is closed with the last member). s keeps no pcb. */
void stk__tcp_unlisten(struct stk_sock *s);

/* sock_udp.c */
int stk__udp_create(struct stk_sock *s);
int stk__udp_bind(struct stk_sock *s, const ip_addr_t *ip, uint16_t port);
int stk__udp_connect(struct stk_sock *s, const struct sockaddr *addr,
                     socklen_t len);
ssize_t stk__udp_recvmsg(struct stk_sock *s, struct msghdr *msg, int flags);
ssize_t stk__udp_sendmsg(struct stk_sock *s, const struct msghdr *msg,
                         int flags);
int stk__udp_shutdown(struct stk_sock *s, int how);
void stk__udp_close(struct stk_sock *s);
uint32_t stk__udp_events(struct stk_sock *s);

/* sock_mcast.c */
/** Multicast TTL and loop of s (Linux's defaults without options) onto
 *  its pcb, new or recreated. */
void stk__mc_apply_pcb(struct stk_sock *s);
/** IPPROTO_IP multicast options of a UDP socket; -ENOPROTOOPT for the
 *  others. */
int stk__mc_setsockopt(struct stk_sock *s, int name, const void *val,
                       socklen_t len);
int stk__mc_getsockopt(struct stk_sock *s, int name, void *val, socklen_t *len);
/** s's own source filter for group: 1 it takes src, 0 it does not, -1 s
 *  has no membership of group. */
int stk__mc_filter(const struct stk_sock *s, const ip_addr_t *group,
                   const ip_addr_t *src);
/** IPPROTO_IPV6 multicast options of a UDP socket (IPV6_JOIN_GROUP,
 *  IPV6_LEAVE_GROUP, MCAST_JOIN/LEAVE_GROUP with an AF_INET6 group,
 *  IPV6_MULTICAST_HOPS/LOOP/IF); -ENOPROTOOPT for the others. */
int stk__mc6_setsockopt(struct stk_sock *s, int name, const void *val,
                        socklen_t len);
int stk__mc6_getsockopt(struct stk_sock *s, int name, void *val,
                        socklen_t *len);
/** An AF_INET6 socket sends to dst: its pcb takes the options of dst's
 *  family (hop limit or TTL, traffic class, multicast hops and loop). */
void stk__mc_for_dest(struct stk_sock *s, const ip_addr_t *dst);
/** The unicast hop limit of s's IPv6 traffic. */
uint8_t stk__hops6(const struct stk_sock *s);
/** IP_MULTICAST_ALL: s takes groups it did not join (others did). */
bool stk__mc_all(const struct stk_sock *s);
/** Leave every group s joined and free its multicast state. */
void stk__mc_close(struct stk_sock *s);

/* sock_cmsg.c */
/** The option (level, name) asks for a control message: its STK_CMSG_*
 *  bit, or 0. */
uint16_t stk__cmsg_bit(int level, int name);
/** At queueing time, in lwIP's UDP receive callback (ip_current_*):
 *  the destination, TOS/traffic class, TTL/hop limit and interface of
 *  the datagram in it, for s (Linux's ipv4_pktinfo_prepare). */
void stk__cmsg_note(const struct stk_sock *s, struct stk_rx_item *it);
/** The control messages s asks for about datagram it into msg, as
 *  Linux's put_cmsg: msg_controllen becomes the bytes written (0 when
 *  none), MSG_CTRUNC when the buffer was too small; msg_control itself
 *  is not moved. */
void stk__cmsg_put(const struct stk_sock *s, const struct stk_rx_item *it,
                   struct msghdr *msg);

/* sock_opt.c */
/** An IPPROTO_IP flag option's value as do_ip_setsockopt reads it: an
 *  int, or one byte when optlen is shorter (0 when optlen is 0). */
int stk__opt_get_small(const void *val, socklen_t len, int *out);
/** An IPPROTO_IP value as do_ip_getsockopt gives it: one byte when optlen
 *  is shorter than an int and the value fits one. */
int stk__opt_put_small(void *val, socklen_t *len, int v);
int stk__setsockopt(struct stk_sock *s, int level, int name, const void *val,
                    socklen_t len);
int stk__getsockopt(struct stk_sock *s, int level, int name, void *val,
                    socklen_t *len);

/* errmap.c */
/** lwIP err_t -> -errno (Linux values); ERR_OK -> 0. */
int stk_err_to_errno(int err);

/* netif.c */
bool stk__is_local_ip(uint32_t ip);
uint32_t stk__netif_mtu(void);
/** ip is one of the netif's addresses (IPv4, or a valid IPv6 one). */
bool stk__is_local(const ip_addr_t *ip);
/** ip can be reached through the netif (stk_route_ok/stk_route6_ok). */
bool stk__route_ok(const ip_addr_t *ip);
/** The netif's source address for dest (its family's; IPv6: RFC 6724
 *  through lwIP), or NULL. */
const ip_addr_t *stk__local_for(const ip_addr_t *dest);

/** The link ops the runtime gave (NULL members: not wanted). */
const struct stk_link_ops *stk__link(void);

/* steer.c: the shared-address steering reports (link ops steer_*) */
/** s's local port is served (on: a listener, a UDP socket with a port)
 *  or not any more (off, at close). */
void stk__steer_port(struct stk_sock *s, bool on);
/** An IPv4 connection needs its own steering entry (on) or its pcb goes
 *  (off: only if on was reported for it). */
void stk__steer_pcb(struct tcp_pcb *pcb, bool on);
/** A frame the stack sends: an ARP request is reported. */
void stk__steer_arp(const uint8_t *frame, uint16_t len);

/* icmp_err.c */
/** Deliver an ICMP error in this Ethernet frame to the connected UDP
 *  socket it concerns. True when the frame was a well-formed ICMP error
 *  (consumed, whether a socket wanted it or not); false for anything
 *  else, which goes on to lwIP. */
bool stk__icmp_err_input(const uint8_t *frame, uint16_t len);
/** The same for ICMPv6 (icmp6_err.c): destination unreachable for
 *  connected UDP and connecting TCP sockets, packet too big for the path
 *  MTU and the MSS of TCP connections. False: on to lwIP. */
bool stk__icmp6_err_input(const uint8_t *frame, uint16_t len);
/** An ICMP (ICMPv6) error of this type and code about the packet `in`
 *  (n bytes: its IP header and at least 8 bytes after) that one of our
 *  addresses sent, checked already: the socket it concerns gets it, as
 *  Linux's err handlers (icmp_err.c, icmp6_err.c). */
void stk__icmp_err_quoted(const uint8_t *in, size_t n, uint8_t type,
                          uint8_t code);
void stk__icmp6_err_quoted(const uint8_t *in, size_t n, uint8_t type,
                           uint8_t code);

/* icmp_tcp.c */
/** The connection from src:sport to dst:dport (a quoted segment's), or
 *  NULL. */
struct tcp_pcb *stk__icmp_tcp_find(const ip_addr_t *src, uint16_t sport,
                                   const ip_addr_t *dst, uint16_t dport);
/** An ICMP error with errno err about pcb's segment starting at seq:
 *  a connect in SYN-SENT fails with it (Linux's tcp_v4_err/tcp_v6_err). */
void stk__icmp_tcp_err(struct tcp_pcb *pcb, uint32_t seq, int err);

/* rx_drops.c */
/** After one frame's input: count it in rx_drop_stack (and rx_drop_csum)
 *  when lwIP dropped it; true if it did. */
bool stk__drops_count(void);
/** Take lwIP's counters as they are, counting nothing (after loopback
 *  input, which does not come from the port). */
void stk__drops_sync(void);

/* fork.c */
/** Tell the runtime that pcb joined (add) or left (del) the demux. */
void stk__flow_note(const struct tcp_pcb *pcb, bool add, bool tw);
/** Several processes share the port: give pcb (CLOSED, unbound) a local
 *  port whose 4-tuple to ip:port no other process uses. 0, -errno, or 1
 *  when there is no sharing (lwIP picks the port). */
int stk__flow_bind_ephemeral(struct tcp_pcb *pcb, const ip_addr_t *ip,
                             uint16_t port);
/** f for the 4-tuple (IPv4, or IPv6 with its fold). */
void stk__flow_set(struct stk_flow *f, const ip_addr_t *lip, uint16_t lport,
                   const ip_addr_t *rip, uint16_t rport);
/** Moves of pcbs made while muted are not reported to the runtime. */
void stk__flow_mute(bool on);
/** True while muted. */
bool stk__flow_muted(void);
/** The listener id the frame being input was dispatched to (0: none). */
extern uint32_t stk__in_lid;

/* sys_arch.c */
uint64_t stk__now_ns(void);

/* tcp_recovery.c */
/** pcb joined (active true) or left lwIP's active list: its timer
 *  follows (a frozen connection has none). */
void stk__tcp_pcb_listed(struct tcp_pcb *pcb, bool active);
/** The congestion control of pcb (TCP_CONGESTION), started afresh if the
 *  connection runs already. */
void stk__tcp_set_cc(struct tcp_pcb *pcb, int cc);
/** A pcb copied from another process (migrate.c): its sender state
 *  keeps the estimates and drops what points into that process. */
void stk__tcp_ext_imported(struct tcp_pcb *pcb);
/* tcp_timer.c */
/** Run the connections' timers that are due; when the next is (ns, 0:
 *  none). */
/** TCP_INFO's tcpi_bytes_received of a connection (tcp_ack.c). */
uint64_t stk__tcp_bytes_received(const struct tcp_pcb *pcb);
void stk__tcp_timers(uint64_t now);
uint64_t stk__tcp_timers_next(void);

/* ---- fork.c: UDP datagrams queued at a fork (stk_flow_ops) ------------*/
/** 1: the datagrams of tag are this process's (taken now if take), 0:
 *  nobody's yet, -1: another process read one of them first. */
int stk__udp_claim(uint32_t tag, bool take);
/** The socket of one of our UDP pcbs, or NULL. */
struct stk_sock *stk__udp_sock_of(struct udp_pcb *u);

/* ---- tcp_tick.c ---------------------------------------------------------*/
/** lwIP's periodic timers look at pcb from now until it is idle again. */
void stk__tick_touch(struct tcp_pcb *pcb);
/** pcb joins (true) or leaves lwIP's active list: touched, or off the tick
 *  list and the keepalive wheel. Only a pcb on the active list is touched. */
void stk__tick_listed(struct tcp_pcb *pcb, bool active);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STK_PRIV_H */
