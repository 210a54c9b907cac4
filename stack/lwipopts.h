/*
 * lwIP options for accel: the only place lwIP compile-time choices are
 * made. lwIP's opt.h includes this file first and fills in defaults for
 * everything not set here. One line per option says why.
 *
 * Shape: NO_SYS=1 raw API (our own socket layer gives Linux semantics),
 * dual stack (IPv4 and IPv6), sized for >= 65k connections with large windows.
 * Every pool comes from malloc so nothing is preallocated.
 */
#ifndef ACCEL_LWIPOPTS_H
#define ACCEL_LWIPOPTS_H

/* ---- system ------------------------------------------------------------ */
#define NO_SYS 1               /* run to completion in the caller's thread */
#define SYS_LIGHTWEIGHT_PROT 0 /* the stack lock (rt_lock) serialises lwIP */
#define LWIP_TIMERS 1          /* sys_check_timeouts() from the poll loop */
#define LWIP_SOCKET 0          /* our own socket layer (stack/sock*.c) */
#define LWIP_NETCONN 0         /* no tcpip thread, no mailboxes */
#define LWIP_RAW 0             /* raw sockets stay on the kernel */
#define LWIP_STATS                                                             \
    1                      /* protocol error counters only: rx_drops.c         \
                              turns them into base_stats drop counts */
#define LWIP_STATS_LARGE 1 /* 32-bit counters */
#define LWIP_STATS_DISPLAY 0
#define LINK_STATS 0 /* the port layer counts frames */
#define MEM_STATS 0  /* no per-allocation bookkeeping */
#define MEMP_STATS 0
#define SYS_STATS 0
#define MIB2_STATS 0
#define ETHARP_STATS 1 /* unknown ethertypes, bad ARP */
#define IP_STATS 1
#define IPFRAG_STATS 1
#define ICMP_STATS 1
#define IGMP_STATS 1
#define IP6_STATS 1 /* IPv6 drops: rx_drops.c counts them as IPv4's */
#define IP6_FRAG_STATS 1
#define ICMP6_STATS 1
#define MLD6_STATS 1
#define ND6_STATS 1
#define UDP_STATS 1
#define TCP_STATS 1
#define LWIP_NETIF_API 0                        /* needs NO_SYS=0 */
#define LWIP_DONT_PROVIDE_BYTEORDER_FUNCTIONS 1 /* htons etc. from libc */

/* ---- memory: everything from malloc, nothing preallocated --------------- */
#define MEM_LIBC_MALLOC 1              /* lwIP heap = libc malloc */
#define MEMP_MEM_MALLOC 1              /* pools = malloc, sized by use */
#define MEM_ALIGNMENT 8                /* malloc returns 8-byte (or better) */
#define MEM_SIZE (64u * 1024u * 1024u) /* only bounds mem_size_t's type */
/* Count lwIP's live heap blocks so tests can check for leaks. */
#define mem_clib_malloc stk_mem_malloc
#define mem_clib_free stk_mem_free
#define mem_clib_calloc stk_mem_calloc
#define MEMP_NUM_TCP_PCB 65535       /* 16-bit limit: >= 65k connections */
#define MEMP_NUM_TCP_PCB_LISTEN 4096 /* listening sockets */
#define MEMP_NUM_UDP_PCB 65535       /* UDP sockets */
#define MEMP_NUM_TCP_SEG 65535       /* queued segments (malloc'd anyway) */
#define MEMP_NUM_SYS_TIMEOUT 32      /* lwIP's cyclic timers + a margin */
#define MEMP_NUM_ARP_QUEUE 256       /* packets waiting for ARP */
#define MEMP_NUM_REASSDATA 64        /* datagrams being reassembled */
#define MEMP_NUM_FRAG_PBUF 256       /* fragments being sent */
#define MEMP_NUM_IGMP_GROUP 64       /* joined multicast groups */
#define PBUF_POOL_SIZE 1024          /* only a cap: pool pbufs are malloc'd */
#define PBUF_POOL_BUFSIZE 1536       /* one Ethernet frame */

/* ---- link and IP -------------------------------------------------------- */
#define LWIP_IPV4 1
/* Dual stack. lwIP's and DPDK's IPv6 headers both define ip6 names, but no
 * translation unit includes both (stack/ never includes DPDK, runtime/
 * never includes lwIP: stk.h exposes neither). */
#define LWIP_IPV6 1
#define LWIP_ETHERNET 1
#define LWIP_ARP 1
/* Peers on the subnet (Linux's gc_thresh3 is 1024): 64 let a SYN flood
 * from 100 spoofed neighbours evict a real client's entry. A linear
 * search, but a pcb finds its entry by its netif hint. */
#define ARP_TABLE_SIZE 512
#define ARP_QUEUEING 1 /* keep first packets while resolving */
/* Linux's 3 probes 1 s apart (mcast_probes, retrans_time), then the
 * packets waiting are reported undeliverable (patch 0039, neigh_unres.c) */
#define ARP_MAXPENDING 3
#define LWIP_HOOK_ETHARP_UNRESOLVED(p) stk_etharp_unresolved(p)
#define ARP_QUEUE_LEN 64 /* per-entry queue bound */
#define ETHARP_SUPPORT_VLAN 0
#define ETH_PAD_SIZE 0        /* frames are copied, no alignment trick */
#define LWIP_ICMP 1           /* echo replies, port unreachables */
#define LWIP_BROADCAST_PING 0 /* Linux ignores broadcast echo by default */
#define LWIP_MULTICAST_PING 0
#define LWIP_IGMP 1                 /* multicast groups (later issues) */
#define LWIP_MULTICAST_TX_OPTIONS 1 /* required by IGMP */
#define IP_REASSEMBLY 1             /* UDP datagrams up to 65507 bytes */
#define IP_FRAG 1
#define IP_REASS_MAX_PBUFS 128 /* a 64 KB datagram is 45 fragments */
#define IP_DEFAULT_TTL 64      /* Linux's default */
#define IP_SOF_BROADCAST 0     /* SO_BROADCAST is enforced in sock_udp.c */
#define LWIP_DHCP 0
/* IPv6 as Linux with a static address (stack/netif.c): */
#define LWIP_IPV6_NUM_ADDRESSES 3 /* link-local (EUI-64) + ACCEL_IP6 + 1 */
/* One interface: a link-local address cannot be ambiguous, and a socket's
 * sin6_scope_id is checked against the port's ifindex by our layer. */
#define LWIP_IPV6_SCOPES 0
#define LWIP_IPV6_AUTOCONFIG 0          /* static address only (ACCEL_IP6) */
#define LWIP_IPV6_SEND_ROUTER_SOLICIT 0 /* the gateway is configured */
/* No duplicate address detection: the address is usable at once, as our
 * IPv4 address is (no ARP probe either). Linux would hold a static address
 * tentative for a second, and a program started under accel would see its
 * first connect or send fail; a duplicate is a configuration error. */
#define LWIP_IPV6_DUP_DETECT_ATTEMPTS 0
#define LWIP_IPV6_MLD 1        /* multicast listeners, solicited-node groups */
#define MEMP_NUM_MLD6_GROUP 64 /* joined IPv6 groups (as IGMP) */
#define LWIP_IPV6_REASS 1      /* Linux reassembles */
#define IPV6_FRAG_COPYHEADER 1 /* 64-bit pointers: lwIP asks for it */
#define LWIP_IPV6_FRAG 1       /* UDP datagrams beyond the MTU */
#define IPV6_REASS_MAXAGE 60   /* 60 s, Linux's ip6frag_time */
#define LWIP_ICMP6 1           /* echo replies, errors */
#define LWIP_ICMP6_DATASIZE 8  /* bytes quoted beyond the IPv6 header */
#define LWIP_ND6_QUEUEING 1    /* keep first packets while resolving */
#define LWIP_HOOK_ND6_UNRESOLVED(p) stk_nd6_unresolved(p)
#define MEMP_NUM_ND6_QUEUE 256    /* as MEMP_NUM_ARP_QUEUE */
#define LWIP_ND6_NUM_NEIGHBORS 64 /* as ARP_TABLE_SIZE (s8_t index) */
/* nd6.c walks both with s8_t indices: at most 127 */
#define LWIP_ND6_NUM_DESTINATIONS 64 /* destination cache: next hop, PMTU */
#define LWIP_ND6_NUM_PREFIXES 5
#define LWIP_ND6_NUM_ROUTERS 3
#define LWIP_ND6_ALLOW_RA_UPDATES 1 /* Linux accepts RAs (accept_ra 1) */
#define LWIP_ND6_TCP_REACHABILITY_HINTS 1
#define LWIP_IPV6_DHCP6 0
/* The static IPv6 gateway (ACCEL_GATEWAY6) for destinations off-link. */
#define LWIP_HOOK_ND6_GET_GW(netif, dest) stk_nd6_gateway((netif), (dest))
#define LWIP_AUTOIP 0
#define LWIP_DNS 0            /* DNS stays on the kernel */
#define LWIP_NETIF_LOOPBACK 1 /* traffic to our own IP loops back */
#define LWIP_LOOPBACK_MAX_PBUFS 0
#define LWIP_HAVE_LOOPIF 0
#define LWIP_NETIF_STATUS_CALLBACK 0
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_SINGLE_NETIF 1            /* one netif: faster routing */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1 /* skip checks the port offloads */
#define LWIP_CHECKSUM_ON_COPY 1        /* checksum while copying in tcp_write */
/* 32-bit loads into 64-bit sums instead of lwIP's 16 bits at a time
 * (stack/arch/chksum.c) */
#define LWIP_CHKSUM stk_chksum
unsigned short stk_chksum(const void *data, int len);

/* ---- UDP ---------------------------------------------------------------- */
#define LWIP_UDP 1
#define LWIP_UDPLITE 0
#define UDP_LOCAL_PORT_RANGE_START 32768 /* Linux ip_local_port_range */
#define UDP_LOCAL_PORT_RANGE_END 60999
#define UDP_ENSURE_LOCAL_PORT_RANGE(port)                                      \
    ((u16_t)(32768u + ((u32_t)(port) % (60999u - 32768u))))

/* ---- TCP ---------------------------------------------------------------- */
#define LWIP_TCP 1
#define LWIP_CALLBACK_API 1          /* tcp_recv/tcp_sent/tcp_err callbacks */
#define TCP_MSS 1460                 /* 1500-byte MTU minus 40 */
#define TCP_CALCULATE_EFF_SEND_MSS 1 /* honour the netif MTU */
#define LWIP_WND_SCALE 1             /* windows beyond 64 KB */
#define TCP_RCV_SCALE 7              /* Linux's usual shift */
#define TCP_WND (4096u * 1024u)      /* 4 MB receive window per connection */
#define TCP_SND_BUF (4096u * 1024u)  /* 4 MB send buffer per connection */
#define TCP_SNDLOWAT (32u * 1024u)   /* explicit: the default overflows u16 */
#define TCP_SND_QUEUELEN 8192        /* >= 2*SND_BUF/MSS, fits u16 */
#define TCP_SNDQUEUELOWAT 4096       /* half of the queue */
#define TCP_OVERSIZE TCP_MSS         /* fill segments in place on append */
#define TCP_QUEUE_OOSEQ 1   /* keep out-of-order data (SACK needs it) */
#define LWIP_TCP_SACK_OUT 1 /* generate SACK blocks */
#define LWIP_TCP_MAX_SACK_NUM 4
/* patch 0007: the delayed ACK of a busy application waits a tick more */
#define LWIP_TCP_DELACK_BUSY 1
#define LWIP_TCP_TIMESTAMPS 1          /* RTTM/PAWS, as Linux */
#define LWIP_TCP_KEEPALIVE 1           /* per-pcb TCP_KEEPIDLE/INTVL/CNT */
#define TCP_KEEPIDLE_DEFAULT 7200000UL /* Linux: 7200 s */
#define TCP_KEEPINTVL_DEFAULT 75000UL  /* Linux: 75 s */
#define TCP_KEEPCNT_DEFAULT 9U         /* Linux: 9 probes */
#define TCP_TMR_INTERVAL                                                       \
    100 /* 100 ms fast timer: delayed ACKs; the 200 ms slow timer keeps        \
           keepalive, persist and FIN-WAIT-2 (the RTO is stack/tcp_timer.c's,  \
           in milliseconds) */
/* pcb->nrtx values at which tcp_slowtmr ends a connection: accel's timer
 * sets them when Linux's limits are reached (tcp_retries2 by time,
 * tcp_syn_retries, tcp_synack_retries; stack/tcp_recovery.c). */
#define TCP_MAXRTX 12
#define TCP_SYNMAXRTX 6
#define TCP_MSL 30000UL /* TIME_WAIT = 2*MSL = 60 s, as Linux */
#define TCP_LISTEN_BACKLOG                                                     \
    1 /* refuse SYNs when the accept queue is                                  \
         full (limit set by sock_tcp.c) */
#define TCP_DEFAULT_LISTEN_BACKLOG 0xff /* 8-bit in lwIP */
#define SO_REUSE 1                      /* SO_REUSEADDR/SO_REUSEPORT binds */
#define SO_REUSE_RXTOALL 0
/* 0: destroy callback (pcb freed -> sock); 1: the listener id a SYN was
 * dispatched to (several processes, sock_tcp_listen.c) */
#define LWIP_TCP_PCB_NUM_EXT_ARGS 2
#define TCP_LOCAL_PORT_RANGE_START 32768 /* Linux ip_local_port_range */
#define TCP_LOCAL_PORT_RANGE_END 60999
#define TCP_ENSURE_LOCAL_PORT_RANGE(port)                                      \
    ((u16_t)(32768u + ((u32_t)(port) % (60999u - 32768u))))
#define LWIP_RANDOMIZE_INITIAL_LOCAL_PORTS 1 /* random start, like Linux */
/* Initial congestion window: 10 segments, as Linux (RFC 6928,
 * TCP_INIT_CWND), kept by accel's sender in packets (stack/tcp_recovery.c). */
#define STK_TCP_INIT_CWND_SEGS 10u
/* accel's sender (stack/tcp_recovery.c) keeps cwnd in packets; lwIP's
 * pcb->cwnd stays open so that tcp_output's check is the receiver's window
 * alone (patch 0002 makes this overridable). */
#define LWIP_TCP_CALC_INITIAL_CWND(mss) ((tcpwnd_size_t)0x7fffffffu)

/* ---- accel's TCP sender and receiver hooks (patches 0008, 0009) ----------
 * Loss recovery (SACK scoreboard, RACK-TLP, PRR, NewReno), RTO in
 * milliseconds, CUBIC/Reno and undo run in stack/tcp_*.c; lwIP queues,
 * sends and frees the segments. See stack/tcp_snd.h. */
#include "stk_tcp_ext.h"
#define LWIP_TCP_SENDER_HOOKS 1
#define LWIP_TCP_PCB_EXT_FIELDS struct stk_tcp_ext acc;
#define LWIP_HOOK_TCP_ACK_IN(pcb, hdr, optlen, opt1len, opt2, ackno, tcplen,   \
                             redge)                                            \
    stk_tcp_ack_in((pcb), (hdr), (optlen), (opt1len), (opt2), (ackno),         \
                   (tcplen), (redge))
#define LWIP_HOOK_TCP_ACK_DONE(pcb) stk_tcp_ack_done(pcb)
#define LWIP_HOOK_TCP_SYN_ACKED(pcb, seg) stk_tcp_syn_acked((pcb), (seg))
#define LWIP_HOOK_TCP_OUTPUT_BEGIN(pcb) stk_tcp_output_begin(pcb)
#define LWIP_HOOK_TCP_OUTPUT_MAY_SEND(pcb, seg) stk_tcp_may_send((pcb), (seg))
#define LWIP_HOOK_TCP_SEG_SENT(pcb, seg) stk_tcp_seg_sent((pcb), (seg))
#define LWIP_HOOK_TCP_PCB_FREE(pcb) stk_tcp_pcb_free(pcb)
/* tcp_fasttmr and tcp_slowtmr walk only the connections touched lately or
 * with something timed, not every active one (patch 0036, tcp_tick.c);
 * cmake -DACCEL_TICK_LIST=OFF: every pcb, as lwIP (for comparison). */
#ifndef STK_TICK_LIST_OFF
#define LWIP_HOOK_TCP_TMR_FIRST() stk_tcp_tick_first()
#define LWIP_HOOK_TCP_TMR_NEXT(pcb) stk_tcp_tick_next(pcb)
#define LWIP_HOOK_TCP_TMR_DONE(pcb) stk_tcp_tick_done(pcb)
#define LWIP_HOOK_TCP_TMR_SLOW() stk_tcp_tick_slow()
#endif
#define LWIP_HOOK_TCP_UNACKED_TAIL(pcb) stk_tcp_unacked_tail(pcb)
#define LWIP_HOOK_TCP_DSACK_SET(pcb, l, r) stk_tcp_dsack_set((pcb), (l), (r))
#define LWIP_HOOK_TCP_DSACK_PENDING(pcb) stk_tcp_dsack_pending(pcb)
#define LWIP_HOOK_TCP_DSACK_GET(pcb, l, r) stk_tcp_dsack_get((pcb), (l), (r))
#define LWIP_HOOK_TCP_DSACK_SENT(pcb) stk_tcp_dsack_sent(pcb)
#define LWIP_HOOK_TCP_OOSEQ_ADD(seg) stk_tcp_ooseq_add(seg)
#define LWIP_HOOK_TCP_OOSEQ_DEL(seg) stk_tcp_ooseq_del(seg)
#define LWIP_HOOK_TCP_OOSEQ_DROPPED(pcb, seg)                                  \
    stk_tcp_ooseq_dropped((pcb), (seg))
/* Every segment of a connection is checked before lwIP's state machine
 * (patch 0030, stack/tcp_validate.c): RFC 5961 challenge ACKs with
 * Linux's per-connection rate limit, ACK validation, RFC 7323 PAWS. */
#define LWIP_TCP_VALIDATE_PASS 0
#define LWIP_TCP_VALIDATE_DROP 1
#define LWIP_TCP_VALIDATE_DROP_ACK 2
#define LWIP_HOOK_TCP_INPUT_VALIDATE(pcb, hdr, optlen, opt1len, opt2, seqno,   \
                                     ackno, flags, tcplen)                     \
    stk_tcp_validate((pcb), (hdr), (optlen), (opt1len), (opt2), (seqno),       \
                     (ackno), (flags), (tcplen))
/* SYN cookies when the pending handshakes fill a listener's backlog
 * (Linux's tcp_syncookies=1; patch 0032, stack/syncookie.c). */
#define LWIP_HOOK_TCP_LISTEN_SYN_FULL(lpcb, hdr, optlen, opt1len, opt2, seqno) \
    stk_tcp_syn_full((lpcb), (hdr), (optlen), (opt1len), (opt2), (seqno))
#define LWIP_HOOK_TCP_LISTEN_ACK(lpcb, hdr, optlen, opt1len, opt2, seqno,      \
                                 ackno, pcb)                                   \
    stk_tcp_listen_ack((lpcb), (hdr), (optlen), (opt1len), (opt2), (seqno),    \
                       (ackno), (pcb))
/* A pure ACK to a TIME-WAIT pcb carrying a valid cookie for its port pair
 * ends TIME-WAIT (patch 0041): its SYN was answered by the XDP program. */
#define LWIP_HOOK_TCP_TW_COOKIE(hdr, seqno, ackno)                             \
    stk_tcp_tw_cookie((hdr), (seqno), (ackno))
/* Out-of-order segments held (each a whole frame): per connection, and
 * per process in all (stack/tcp_rx.c). */
#define STK_OOSEQ_SEGS_PER_CONN 4096u
#define STK_OOSEQ_SEGS_MAX 65536u
#define TCP_OOSEQ_PBUFS_LIMIT(pcb) stk_tcp_ooseq_limit(pcb)

/* ---- hooks and platform --------------------------------------------------*/
#define LWIP_HOOK_FILENAME "stk_hooks.h"
/* RFC 6528 initial sequence numbers (stack/isn.c). */
#define LWIP_HOOK_TCP_ISN(lip, lport, rip, rport)                              \
    stk_isn_hook((lip), (lport), (rip), (rport))
/* SYN refused on a full accept queue (our patch 0001; counts it). */
#define LWIP_HOOK_TCP_LISTEN_OVERFLOW(lpcb) stk_listen_overflow_hook(lpcb)
#define LWIP_RAND() stk_rand() /* getrandom-seeded PRNG (sys_arch.c) */
/* Hashed PCB lookup for tcp_input instead of walking the PCB lists
 * (patch 0004, stack/pcb_hash.c). STK_PCB_HASH_OFF (cmake
 * -DACCEL_PCB_HASH=OFF) builds lwIP's list walk, for comparison. */
/* A pcb joins or leaves one of lwIP's lists: the demux table, the
 * runtime's flow table and the connection's timer follow (pcb_hash.c). */
#define LWIP_HOOK_TCP_PCB_REG(pcbs, pcb) stk_pcb_hash_reg((pcbs), (pcb))
#define LWIP_HOOK_TCP_PCB_RMV(pcbs, pcb) stk_pcb_hash_rmv((pcbs), (pcb))
#ifndef STK_PCB_HASH_OFF
/* TCP_RMV starts its walk at the predecessor the table keeps for an
 * active pcb (patch 0006): O(1) instead of a walk from the list's head. */
#define LWIP_HOOK_TCP_PCB_RMV_FROM(pcbs, pcb) stk_pcb_rmv_from((pcbs), (pcb))
#define LWIP_HOOK_TCP_PCB_LOOKUP(pcbs, after, lip, lport, rip, rport)          \
    stk_pcb_hash_lookup((pcbs), (after), (lip), (lport), (rip), (rport))
/* A TIME-WAIT pcb ended by a new SYN (patch 0003) leaves the table now and
 * lwIP's list at tcp_slowtmr's next tick, instead of a walk of the list. */
#define LWIP_HOOK_TCP_TW_RETIRE(pcb) stk_pcb_tw_retire(pcb)
/* tcp_slowtmr looks at a share of the TIME-WAIT list per tick, resuming
 * where it stopped (patch 0005): never tens of thousands at once. The
 * resume point is kept valid by the RMV hook above. */
#define LWIP_HOOK_TCP_TW_WALK_FROM(pcbp, prevp)                                \
    stk_pcb_tw_walk_from((pcbp), (prevp))
#define LWIP_HOOK_TCP_TW_WALK_AT(pcb, prev) stk_pcb_tw_walk_at((pcb), (prev))
#endif

/* ---- sanity checks on our own choices ----------------------------------- */
#if TCP_SND_QUEUELEN > 0xffff
#error "TCP_SND_QUEUELEN must fit lwIP's u16_t snd_queuelen"
#endif
#if MEMP_NUM_TCP_PCB > 0xffff || MEMP_NUM_UDP_PCB > 0xffff
#error "MEMP_NUM_* counts are 16-bit in lwIP"
#endif
#if (TCP_WND >> TCP_RCV_SCALE) > 0xffff || (TCP_WND >> TCP_RCV_SCALE) == 0
#error "TCP_WND must be representable with TCP_RCV_SCALE"
#endif
#if TCP_SND_BUF < 2 * TCP_MSS || TCP_SNDLOWAT >= TCP_SND_BUF
#error "TCP_SND_BUF too small for TCP_MSS/TCP_SNDLOWAT"
#endif
#if TCP_SNDLOWAT >= (0xffff - 4 * TCP_MSS)
#error "TCP_SNDLOWAT must stay 4*MSS below u16 overflow (lwIP init.c)"
#endif
#if !NO_SYS || LWIP_SOCKET || LWIP_NETCONN
#error "accel uses lwIP's raw API with NO_SYS=1 only"
#endif
#if !LWIP_IPV4 || !LWIP_IPV6
#error "accel's stack is dual stack: its address model needs both"
#endif
#if TCP_DEFAULT_LISTEN_BACKLOG > 0xff
#error "lwIP's listen backlog is 8-bit"
#endif
#if !MEMP_MEM_MALLOC || !MEM_LIBC_MALLOC
#error "pools must come from malloc: nothing is preallocated for 65k pcbs"
#endif

#endif /* ACCEL_LWIPOPTS_H */
