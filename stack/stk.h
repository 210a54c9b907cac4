/*
 * stack: lwIP (NO_SYS=1, raw API) behind a socket layer with Linux
 * semantics. This header is the whole contract with the other layers; it
 * does not expose lwIP types, so preload/ and runtime/ never include lwIP.
 *
 * Threading: every function here must be called with the stack lock held
 * (rt_lock), except stk_sock_events() readers that tolerate a stale value.
 * Return convention: 0 or a count on success, -errno (Linux values) on
 * failure. Nothing here blocks: blocking is built by the caller from the
 * non-blocking operation, stk_sock_events() and a wait (runtime rt_block).
 * Nothing here touches errno.
 */
#ifndef ACCEL_STK_H
#define ACCEL_STK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the network interface ------------------------------------------- */

struct stk_flow;

/** What accel's XDP program needs to answer a flooded listener's SYNs
 *  with cookies the stack accepts (link op syn_cookies; the cookie's
 *  arithmetic is stack/stk_synck.h). */
struct stk_synck_arm {
    uint64_t key[2];     /* the ISN's secret */
    uint16_t port;       /* the listener's, host order */
    uint16_t mss4, mss6; /* the SYN-ACK's MSS option, per family */
    uint16_t wnd;        /* its window (unscaled) */
    uint8_t wscale;      /* its window scale option */
};

/** Frame output, provided by the port layer (runtime) or a test netif. */
struct stk_link_ops {
    /** Return a buffer of at least len bytes for one frame, and an opaque
     *  handle for it; NULL when out of buffers (the frame is dropped). */
    uint8_t *(*tx_alloc)(void *ctx, uint16_t len, void **handle);
    /** Queue the frame previously allocated (len bytes filled in). */
    void (*tx_send)(void *ctx, void *handle, uint16_t len);
    void *ctx;
    /** Optional: accept (add) or stop accepting frames to this multicast
     *  MAC, as groups are joined and left (IGMP). NULL: the port receives
     *  every multicast frame (allmulticast) and nothing is needed. */
    void (*mc_filter)(void *ctx, const uint8_t mac[6], bool add);
    /** Optional: the same for an IPv6 group's address (16 bytes), as MLD
     *  joins and leaves it (a steering program that filters by group). */
    void (*mc_group6)(void *ctx, const uint8_t group[16], bool add);
    /** Optional, when the stack shares the interface's IPv4 address with
     *  the kernel (the port takes only what is the stack's): a local port
     *  starts (on) or stops being served here (proto IPPROTO_TCP for a
     *  listener, IPPROTO_UDP for a bound UDP socket; port in host order);
     *  a connection needs steering of its own (on: an active open; off:
     *  its pcb is gone); the stack asks for the MAC of ip (an ARP request
     *  it sends; network order). */
    void (*steer_port)(void *ctx, int proto, uint16_t port, bool on);
    void (*steer_flow)(void *ctx, const struct stk_flow *f, bool on);
    void (*arp_request)(void *ctx, uint32_t ip);
    /** The same for IPv6: the target of a neighbour solicitation the
     *  stack sends (16 bytes). */
    void (*nd_request)(void *ctx, const uint8_t target[16]);
    /** Optional: a listener's SYNs find its backlog full and are being
     *  answered with SYN cookies; the port may answer the next ones
     *  itself for a while (an XDP program: runtime/xdpsynck.c). Called at
     *  most every 100 ms per listener while the flood lasts. */
    void (*syn_cookies)(void *ctx, const struct stk_synck_arm *a);
    /** Optional: the port answered SYNs to port (host order) with
     *  cookies within two minutes, for this process or another of its
     *  family (an ACK may carry one). */
    bool (*syn_cookies_seen)(void *ctx, uint16_t port);
};

/** Offloads the port performs, so the stack skips the work. */
#define STK_CSUM_RX_IP 0x01u /* rx IPv4 header checksum verified */
#define STK_CSUM_RX_L4 0x02u /* rx TCP/UDP checksum verified */

struct stk_netif_cfg {
    uint32_t ip;      /* network byte order */
    uint32_t netmask; /* network byte order */
    uint32_t gateway; /* network byte order, 0 = none */
    uint8_t mac[6];
    uint16_t mtu;
    uint32_t csum_flags; /* STK_CSUM_* */
    struct stk_link_ops link;
};

/** Initialise lwIP and the single netif. 0 or -errno. */
int stk_init(const struct stk_netif_cfg *cfg);

/** Hand one received Ethernet frame to the stack (copied). */
void stk_input(const void *frame, uint16_t len);

/** Run lwIP timers that are due. */
void stk_timers(void);

/** Milliseconds until the next lwIP timer (>= 0). */
uint32_t stk_next_timer_ms(void);

/** A poll turn (or its next rx burst) begins at now_ns, the runtime clock,
 *  or the turn ends (0): until then the stack reads this time instead of
 *  the clock. Set it before each burst: TCP measures RTTs with it. */
void stk_clock_turn(uint64_t now_ns);

/** The caller lets go of the stack (its lock): the next call outside a
 *  turn reads the clock again. Within one hold the stack reads it once. */
void stk_clock_release(void);

/** True when addr (network order) is reachable through the netif: on its
 *  subnet or via its gateway, and not loopback/multicast-only. */
bool stk_route_ok(uint32_t addr);

/** The stack's own address, network order. */
uint32_t stk_local_ip(void);

/* ---- IPv6 on the netif (after stk_init; stack/netif.c) ----------------
 * stk_init gives the netif its link-local address, fe80::/64 with the
 * MAC's EUI-64. Neighbour discovery, ICMPv6 echo and MLD are lwIP's. */
struct in6_addr;
/** The static global address (ACCEL_IP6) and its prefix length (1-128;
 *  lwIP takes the /64 as on-link whatever the length, RFC 5942's rule
 *  for static addresses, while stk_route6_ok uses the length given).
 *  Usable at once (no DAD). 0, -EINVAL, -ENETDOWN before stk_init. */
int stk_netif_set_ip6(const struct in6_addr *a, int prefix_len);
/** The IPv6 gateway (ACCEL_GATEWAY6): destinations off-link go to it
 *  (NULL: none; then a router learnt from advertisements, if any). */
int stk_netif_set_gw6(const struct in6_addr *gw);
/** True when a is reachable through the netif: link-local, on the
 *  global address's prefix, or via the gateway; never loopback, `::`,
 *  multicast or IPv4-mapped. */
bool stk_route6_ok(const struct in6_addr *a);
/** True when a is one of the netif's IPv6 addresses (link-local or
 *  global). */
bool stk_is_local_ip6(const struct in6_addr *a);
/** The global IPv6 address, if one is set. */
bool stk_local_ip6(struct in6_addr *out);
/** The link-local address (fe80::/64 + the MAC's EUI-64), once up. */
bool stk_local_ll6(struct in6_addr *out);
/** The multicast MACs the netif wants now (IPv6: the solicited-node
 *  groups of its addresses, all-nodes, and the groups sockets joined;
 *  33:33:xx:xx:xx:xx): up to max into macs, returns how many there are.
 *  link.mc_filter is told of each as it comes and goes (IPv4 groups
 *  too); a port with a MAC filter adds these at start, since the
 *  link-local address's group is joined inside stk_init. */
int stk_netif_mcast_macs(uint8_t (*macs)[6], int max);

/** The kernel's index of the interface the port drives (0: none, e.g.
 *  memif). ip_mreqn and IP_MULTICAST_IF name the netif by this index. */
void stk_set_ifindex(int ifindex);
int stk_ifindex(void);

/** TCP behaviour the runtime configures (ACCEL_TCP_*), before the first
 *  connection. */
struct stk_tcp_cfg {
    uint32_t rto_min_ms; /* RTO floor, Linux's 200 ms by default */
    int cc;              /* congestion control: stk_tcp_cc_find("cubic") */
};
/** 0, or -1 when a value is out of range. */
int stk_tcp_configure(const struct stk_tcp_cfg *cfg);
/** The congestion control algorithm called name ("cubic", "reno"), or
 *  -1; its name; the default (ACCEL_TCP_CC). */
int stk_tcp_cc_find(const char *name);
const char *stk_tcp_cc_name(int cc);
int stk_tcp_cc_default(void);

/** At process exit: close every TCP connection the application still
 *  holds, with close(2)'s FIN-or-RST rule (see stack/exit.c). Returns how
 *  many. The caller flushes the frames out. Sockets stay valid objects. */
int stk_close_all_at_exit(void);

/** Connections with data or a FIN not yet acknowledged by the peer, and
 *  with peer_fin also those whose peer has not closed its side yet
 *  (FIN-WAIT-2): the process lingers at exit while there are any (Linux
 *  sends them, and acknowledges the peer's FIN, after the process is
 *  gone). */
int stk_pending_output(bool peer_fin);
/** Bytes written to those connections and not yet acknowledged: the exit
 *  lingers as long as this goes down. */
uint64_t stk_pending_bytes(void);

/* ---- sockets ------------------------------------------------------------ */

struct stk_sock;

/** The readiness callback, one for every socket: called (stack lock held)
 *  whenever the events of a socket that has a context (stk_sock_set_ctx)
 *  may have changed, with that context. Must not call back into the
 *  stack. Registered once, before the first socket; NULL: none. */
typedef void (*stk_notify_fn)(void *ctx, uint32_t events);
void stk_set_notify(stk_notify_fn fn);

/** type: SOCK_STREAM or SOCK_DGRAM (no flags). An AF_INET socket. */
int stk_sock_create(int type, struct stk_sock **out);

/** Make a new socket (right after stk_sock_create, before any other
 *  call) an AF_INET6 one, with IPV6_V6ONLY as the kernel socket has it
 *  (default net.ipv6.bindv6only). From then on its addresses, given and
 *  returned, are sockaddr_in6 as Linux's inet6 code reads and writes
 *  them: IPv4 peers as ::ffff:a.b.c.d (sockaddr_in accepted where Linux
 *  does: UDP connect and sendto), a `::` socket that is not v6only
 *  takes both families. 0, or -EINVAL once used. */
int stk_sock_set_inet6(struct stk_sock *s, bool v6only);
/** IPV6_V6ONLY: -EINVAL once bound (as Linux), 0 otherwise. The same as
 *  setsockopt(IPPROTO_IPV6, IPV6_V6ONLY). */
int stk_sock_set_v6only(struct stk_sock *s, bool v6only);
/** AF_INET6 or AF_INET. */
int stk_sock_family(const struct stk_sock *s);

/** What the readiness callback gets for s; NULL (a new socket's): none. */
void stk_sock_set_ctx(struct stk_sock *s, void *ctx);

int stk_sock_bind(struct stk_sock *s, const struct sockaddr *addr,
                  socklen_t len);
int stk_sock_listen(struct stk_sock *s, int backlog);

/** Non-blocking accept: -EAGAIN when the queue is empty. addr/len may be
 *  NULL; len is updated as accept(2) does. */
int stk_sock_accept(struct stk_sock *s, struct stk_sock **out,
                    struct sockaddr *addr, socklen_t *len);

/** Non-blocking connect: -EINPROGRESS first, then -EALREADY while in
 *  progress, 0 / -EISCONN once connected, the error once failed. UDP:
 *  sets the default peer (AF_UNSPEC dissolves it). */
int stk_sock_connect(struct stk_sock *s, const struct sockaddr *addr,
                     socklen_t len);

/** Non-blocking receive into msg (iov, name, namelen; flags MSG_PEEK,
 *  MSG_TRUNC for UDP; MSG_WAITALL is the caller's loop). 0 at EOF. On
 *  success msg_controllen is the bytes of control messages written at
 *  msg_control (UDP: IP_PKTINFO, IPV6_PKTINFO, ... as asked for, with
 *  Linux's layout and MSG_CTRUNC; 0 when none). */
ssize_t stk_sock_recvmsg(struct stk_sock *s, struct msghdr *msg, int flags);

/** Non-blocking send: partial writes, -EAGAIN when no room, -EPIPE after
 *  shutdown/close by us or reset (the caller raises SIGPIPE unless
 *  MSG_NOSIGNAL), -ECONNRESET once. */
ssize_t stk_sock_sendmsg(struct stk_sock *s, const struct msghdr *msg,
                         int flags);

int stk_sock_shutdown(struct stk_sock *s, int how);

/** Release the socket (orderly close, or RST with SO_LINGER 0 / unread
 *  data, as Linux). The object must not be used afterwards. */
void stk_sock_close(struct stk_sock *s);

/** TCP_INFO: Linux's struct tcp_info goes on past glibc's (linux/tcp.h,
 *  which cannot be included with netinet/tcp.h): the fields up to
 *  tcpi_snd_wnd, at Linux's offsets. A larger buffer gets these 232
 *  bytes, as from a kernel of that version. */
struct stk_tcp_info {
    /* glibc's struct tcp_info (netinet/tcp.h, which lwIP's options
     * clash with): up to tcpi_total_retrans */
    unsigned char base[104];
    uint64_t tcpi_pacing_rate, tcpi_max_pacing_rate;
    uint64_t tcpi_bytes_acked, tcpi_bytes_received;
    uint32_t tcpi_segs_out, tcpi_segs_in, tcpi_notsent_bytes, tcpi_min_rtt;
    uint32_t tcpi_data_segs_in, tcpi_data_segs_out;
    uint64_t tcpi_delivery_rate, tcpi_busy_time, tcpi_rwnd_limited;
    uint64_t tcpi_sndbuf_limited;
    uint32_t tcpi_delivered, tcpi_delivered_ce;
    uint64_t tcpi_bytes_sent, tcpi_bytes_retrans;
    uint32_t tcpi_dsack_dups, tcpi_reord_seen, tcpi_rcv_ooopack, tcpi_snd_wnd;
};

int stk_sock_setsockopt(struct stk_sock *s, int level, int name,
                        const void *val, socklen_t len);
int stk_sock_getsockopt(struct stk_sock *s, int level, int name, void *val,
                        socklen_t *len);
/** Whether the stack keeps the TCP socket option's value (setsockopt and
 *  getsockopt both answered here, never by a kernel socket). */
bool stk_sock_opt_owned(int level, int name);

/** getsockname (peer false) / getpeername (peer true). */
int stk_sock_getname(struct stk_sock *s, struct sockaddr *addr, socklen_t *len,
                     bool peer);

/** Level-triggered readiness: EPOLLIN/OUT/ERR/HUP/RDHUP/PRI bits.
 *  *gen (may be NULL) receives a counter bumped at every new event
 *  (data arrival, new connection, space freed, error) for EPOLLET. */
uint32_t stk_sock_events(struct stk_sock *s, uint32_t *gen);

/** Bytes readable now (FIONREAD) / not yet acknowledged (SIOCOUTQ) / not
 *  yet sent (SIOCOUTQNSD); -EINVAL on a listener, as tcp_ioctl, and
 *  SIOCOUTQNSD on UDP is -ENOTTY. */
int stk_sock_inq(struct stk_sock *s);
int stk_sock_outq(struct stk_sock *s);
int stk_sock_outq_notsent(struct stk_sock *s);

int stk_sock_type(const struct stk_sock *s); /* SOCK_STREAM / SOCK_DGRAM */
bool stk_sock_is_listening(const struct stk_sock *s);

/** Pending error (SO_ERROR), cleared when read. */
int stk_sock_take_error(struct stk_sock *s);

/* ---- deferred output: stack/output.c ------------------------------------ */

/** Whether this thread's TCP sends leave their segments for
 *  stk_output_flush() (an event loop whose frames leave at the end of the
 *  turn anyway: a close in the same turn then puts its FIN on the last
 *  data segment). */
void stk_output_defer(bool on);
/** tcp_output for every socket a deferred send left queued. */
void stk_output_flush(void);
/** How many sockets wait for stk_output_flush (read without the lock). */
unsigned stk_output_pending(void);

/* ---- several processes (fork): stack/fork.c ---------------------------- */

/** A TCP connection's 4-tuple as seen locally: addresses in network
 *  order, ports in host order. An IPv6 connection (v6) has its addresses
 *  in lip6/rip6, and lip/rip hold a fold of them (the XOR of their four
 *  words), which only spreads a hash: two IPv6 flows are the same when
 *  v6, lip6, rip6 and the ports are. An IPv4 flow has v6 false and
 *  lip6/rip6 zero. */
struct stk_flow {
    uint32_t lip, rip;
    uint16_t lport, rport;
    bool v6;
    uint8_t lip6[16], rip6[16];
};

/** Told, in order, when a connection joins (add; tw: into TIME-WAIT) or
 *  leaves (del) this stack's demux, once several processes share the
 *  port; and asked, before an active open picks a local port, to reserve
 *  the 4-tuple across the processes (take) or give it back. */
struct stk_flow_ops {
    void (*note)(const struct stk_flow *f, bool add, bool tw);
    bool (*reserve)(const struct stk_flow *f, bool take);
    /* Datagrams queued on a UDP socket at a fork are in every process's
     * copy: udp_tag gives the ones a socket holds a tag the processes
     * share (0: none to give), udp_claim says whose they are: 1 this
     * process's (taken now if take), 0 nobody's yet, -1 another's. */
    uint32_t (*udp_tag)(void);
    int (*udp_claim)(uint32_t tag, bool take);
};
void stk_set_flow_ops(const struct stk_flow_ops *ops);
/** A fork is about to copy the process: the datagrams queued on UDP
 *  sockets get shared tags (before the copy, so both processes have
 *  them). */
void stk_fork_tag_udp(void);

/** The 128-bit key of initial sequence numbers (before connections are
 *  made); without it the stack draws one of its own. */
void stk_isn_set_key(const uint64_t key[2]);

/** The shared-address steering stops serving local TCP port (host
 *  order): the connections still on it get entries of their own
 *  (link op steer_flow), so they keep reaching the stack. */
void stk_steer_adopt_port(uint16_t port);

/** Visit every connection of the demux (active and TIME-WAIT); has_sock
 *  says whether a socket (accepted or not yet) holds it. */
void stk_each_flow(void (*fn)(void *ctx, const struct stk_flow *f,
                              bool has_sock),
                   void *ctx);

/** Right after fork, in the parent and in the child: every connection a
 *  socket holds is frozen (out of lwIP's lists, no input, no output, no
 *  timers) until one process claims it; the child also drops, silently,
 *  connections no socket holds (TIME-WAIT, half-open), which stay the
 *  parent's. */
void stk_fork_freeze(bool child);

/** True if this stack's demux holds f as a live connection (not frozen,
 *  not TIME-WAIT): a segment of it is this process's to input. */
bool stk_flow_active(const struct stk_flow *f);

/** True (and *f filled) if s is a frozen connection. */
bool stk_sock_frozen(const struct stk_sock *s, struct stk_flow *f);
/** The 4-tuple of s's TCP connection (any state with a peer); false for
 *  UDP, listeners and sockets without a connection. */
bool stk_sock_flow(const struct stk_sock *s, struct stk_flow *f);
/** This process claimed it: back into lwIP's lists. */
void stk_sock_thaw(struct stk_sock *s);
/** Another process has it: free the copy silently; s reads as reset. */
void stk_sock_drop_frozen(struct stk_sock *s);

/** For a listening TCP or a bound UDP socket: what the runtime needs to
 *  send it traffic (protocol IPPROTO_TCP/UDP, local port, listener id). */
bool stk_sock_service(const struct stk_sock *s, int *proto, uint16_t *port,
                      uint32_t *lid);

/** A connection queued on a listener and never accepted, moved to another
 *  process's stack (stack/migrate.c). */
#define STK_CONN_IMAGE_BYTES 1024
struct stk_conn_image {
    uint64_t pcb[STK_CONN_IMAGE_BYTES / 8]; /* lwIP's tcp_pcb, aligned */
    struct stk_flow f;
    uint32_t len; /* bytes of received data, stored next to the image */
    bool fin;     /* the peer already closed its side */
    bool half;    /* handshake not finished (SYN-RCVD): no socket yet */
};
/** Take one movable connection off listener l: 1 (img and data filled,
 *  this stack's copy dropped silently), 0 when none can move. Queued
 *  connections first; then, if l is the last socket on its lwIP listener,
 *  handshakes still in progress on it. */
int stk_listener_export(struct stk_sock *l, struct stk_conn_image *img,
                        void *data, uint32_t cap);
/** Queue an exported connection on listener l, as if it had been made
 *  here. 0 or -errno. */
int stk_listener_import(struct stk_sock *l, const struct stk_conn_image *img,
                        const void *data);

/** stk_input() for a frame the runtime dispatched to the listener lid:
 *  a SYN goes to that member of a SO_REUSEPORT group. */
void stk_input_lid(const void *frame, uint16_t len, uint32_t lid);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STK_H */
