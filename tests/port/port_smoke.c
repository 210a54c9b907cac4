/*
 * Port-level smoke test of runtime/ (accel_rtdpdk + accel_rtcore) without
 * the real stack. It starts the data path with rt_start() from the ACCEL_*
 * environment, then runs the application side of a blocking program: poll,
 * then rt_block() until frames arrive. A minimal stand-in for the stack
 * (this file only) answers ARP and ICMP echo for ACCEL_IP and, with
 * --ping A.B.C.D, resolves the peer and sends an echo request every 20 ms,
 * timing the replies. Used to check that af_xdp, af_packet and memif ports
 * start, that frames flow both ways, and that an idle process sleeps: the
 * report prints polls, sleeps and CPU time next to the counters.
 *
 *   port_smoke [--seconds N] [--ping A.B.C.D] [--min-replies N]
 *              [--min-rx N]
 *   port_smoke --backlog FILE
 *   port_smoke --blast N [--seconds S]
 *   port_smoke --die-mid-burst FILE --ping A.B.C.D
 *
 * --backlog: after "started", the process does not poll until FILE exists
 * (the caller sends frames meanwhile, which queue in the port's rings),
 * then runs one poll turn and prints how many frames that turn took
 * (ACCEL_RX_BUDGET at most), how many the following turns took (until
 * 500 ms pass without a frame), and whether rt_poll_due() is false right
 * after a turn and true once ACCEL_RX_INTERVAL_USEC has passed. Run with
 * ACCEL_PROGRESS_USEC=0.
 * --blast: sends N frames (to the broadcast address, a type nobody
 * handles) in one go, prints "blasted", then polls for S seconds (the
 * tx backlog goes out as the ring makes room) and prints what the port
 * sent, held and dropped.
 * --die-mid-burst (af_xdp or af_packet, run with ACCEL_PROGRESS_USEC=0):
 * forks; the child waits for FILE (the caller sends UDP datagrams
 * meanwhile, which wait in the rx ring), takes the port lock, leaves the
 * PMD's rings as a burst interrupted halfway would and kills itself with
 * SIGKILL. af_xdp: every waiting frame peeked, not released; 8 tx
 * descriptors reserved, not submitted. af_packet: every waiting frame
 * handed back to the kernel, the position not stored; 3 tx frames
 * written and marked for sending, no kick. The parent then polls
 * (recovering the lock), counts the UDP datagrams it receives and pings
 * the peer 5 times, 50 ms apart: "died_mid_burst taken P udp_seen U
 * replies R/5 repaired N". Exit 0 if P > 0, every echo request was
 * answered within the 2 s, and (af_xdp, whose peeked frames can be read
 * again) U >= P.
 * Exit 0 when the expectations hold, 1 otherwise, 2 on a start failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <linux/if_packet.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg.h"
#include "clock.h"
#include "inlib.h"
#include "rt.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"
#include "pkt_repair.h"
#include "rt_int.h"
#include "xsk_repair.h"

/* ---- stand-in stack ------------------------------------------------------ */

static struct stk_netif_cfg nc;
static uint32_t peer_ip;
static uint8_t peer_mac[6];
static int peer_known;
static unsigned arp_answered, echo_answered, replies, timers_run, udp_seen;
static uint64_t rtt_min = UINT64_MAX, rtt_max, rtt_sum;

static uint16_t
csum(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t s = 0;

    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint32_t)(b[i] << 8 | b[i + 1]);
    if (n & 1)
        s += (uint32_t)(b[n - 1] << 8);
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return htons((uint16_t)~s);
}

static void
send_frame(const uint8_t *f, uint16_t len)
{
    void *h;
    uint8_t *d = nc.link.tx_alloc(nc.link.ctx, len, &h);

    if (d == NULL)
        return;
    memcpy(d, f, len);
    nc.link.tx_send(nc.link.ctx, h, len);
}

static void
send_arp(int op, const uint8_t *dmac, uint32_t dip)
{
    uint8_t f[60] = {0};

    memcpy(f, op == 1 ? (const uint8_t *)"\xff\xff\xff\xff\xff\xff" : dmac, 6);
    memcpy(f + 6, nc.mac, 6);
    f[12] = 0x08, f[13] = 0x06;
    f[14] = 0, f[15] = 1, f[16] = 8, f[17] = 0, f[18] = 6, f[19] = 4;
    f[20] = 0, f[21] = (uint8_t)op;
    memcpy(f + 22, nc.mac, 6);
    memcpy(f + 28, &nc.ip, 4);
    if (op == 2)
        memcpy(f + 32, dmac, 6);
    memcpy(f + 38, &dip, 4);
    send_frame(f, sizeof(f));
}

static void
send_echo(uint16_t seq)
{
    uint8_t f[14 + 20 + 8 + 8] = {0};
    uint64_t now = base_now_ns();

    memcpy(f, peer_mac, 6);
    memcpy(f + 6, nc.mac, 6);
    f[12] = 0x08, f[13] = 0x00;
    uint8_t *ip = f + 14;
    ip[0] = 0x45, ip[3] = sizeof(f) - 14, ip[8] = 64, ip[9] = 1;
    memcpy(ip + 12, &nc.ip, 4);
    memcpy(ip + 16, &peer_ip, 4);
    uint16_t c = csum(ip, 20);
    memcpy(ip + 10, &c, 2);
    uint8_t *ic = ip + 20;
    ic[0] = 8, ic[4] = 0x12, ic[5] = 0x34;
    ic[6] = (uint8_t)(seq >> 8), ic[7] = (uint8_t)seq;
    memcpy(ic + 8, &now, 8);
    c = csum(ic, 16);
    memcpy(ic + 2, &c, 2);
    send_frame(f, sizeof(f));
}

int
stk_init(const struct stk_netif_cfg *cfg)
{
    nc = *cfg;
    return 0;
}

void
stk_timers(void)
{
    timers_run++;
}

uint32_t
stk_next_timer_ms(void)
{
    return 1000;
}

void
stk_clock_turn(uint64_t now_ns)
{
    (void)now_ns;
}

void
stk_clock_release(void)
{
}

void
stk_input(const void *frame, uint16_t len)
{
    uint8_t f[2048];
    uint16_t type;

    if (len < 42 || len > sizeof(f))
        return;
    memcpy(f, frame, len);
    type = (uint16_t)(f[12] << 8 | f[13]);
    if (type == 0x0806 && f[21] == 1 && memcmp(f + 38, &nc.ip, 4) == 0) {
        uint32_t sip;
        memcpy(&sip, f + 28, 4);
        send_arp(2, f + 22, sip);
        arp_answered++;
    } else if (type == 0x0806 && f[21] == 2 && peer_ip != 0 &&
               memcmp(f + 28, &peer_ip, 4) == 0) {
        memcpy(peer_mac, f + 22, 6);
        peer_known = 1;
    } else if (type == 0x0800 && f[23] == 17 &&
               memcmp(f + 30, &nc.ip, 4) == 0) {
        udp_seen++;
    } else if (type == 0x0800 && f[23] == 1 && memcmp(f + 30, &nc.ip, 4) == 0) {
        uint8_t *ip = f + 14, *ic = ip + (ip[0] & 0xf) * 4;
        uint16_t iplen = (uint16_t)(ip[2] << 8 | ip[3]);
        if (ic[0] == 8) {
            uint8_t tmp[6];
            uint16_t c;
            memcpy(tmp, f, 6), memcpy(f, f + 6, 6), memcpy(f + 6, tmp, 6);
            memcpy(tmp, ip + 12, 4), memcpy(ip + 12, ip + 16, 4),
                memcpy(ip + 16, tmp, 4);
            ip[10] = ip[11] = 0;
            c = csum(ip, (size_t)(ic - ip));
            memcpy(ip + 10, &c, 2);
            ic[0] = 0, ic[2] = ic[3] = 0;
            c = csum(ic, (size_t)(iplen - (ic - ip)));
            memcpy(ic + 2, &c, 2);
            send_frame(f, (uint16_t)(14 + iplen));
            echo_answered++;
        } else if (ic[0] == 0 && ic[4] == 0x12 && ic[5] == 0x34) {
            uint64_t sent, rtt;
            memcpy(&sent, ic + 8, 8);
            rtt = base_now_ns() - sent;
            replies++;
            rtt_sum += rtt;
            rtt_min = rtt < rtt_min ? rtt : rtt_min;
            rtt_max = rtt > rtt_max ? rtt : rtt_max;
        }
    }
}

/* ---- the "application" --------------------------------------------------- */

/* --backlog FILE: see the header. */
static int
backlog_turns(const char *file)
{
    int first, rest = 0, n;
    bool due_now, due_later;

    printf("started\n");
    fflush(stdout);
    while (access(file, F_OK) != 0)
        usleep(10000);
    usleep(200000); /* the last frames reach the ring */
    rt_lock();
    first = rt_poll();
    due_now = rt_poll_due();
    rt_unlock();
    for (uint64_t quiet = base_now_ns();
         base_now_ns() - quiet < 500000000ull;) {
        rt_lock();
        n = rt_poll();
        rt_unlock();
        if (n > 0) {
            rest += n;
            quiet = base_now_ns();
        }
    }
    usleep(base_cfg.rx_interval_usec + 2000);
    rt_lock();
    due_later = rt_poll_due();
    rt_unlock();
    printf("backlog first_turn %d later_turns %d due_after_turn %d "
           "due_after_interval %d\n",
           first, rest, due_now, due_later);
    return 0;
}

/* --blast N: see the header. */
static int
blast(unsigned n, unsigned seconds)
{
    uint8_t f[60] = {0};
    uint64_t end;

    memset(f, 0xff, 6);
    memcpy(f + 6, nc.mac, 6);
    f[12] = 0x88, f[13] = 0xb5; /* IEEE 802 local experimental */
    rt_lock();
    for (unsigned i = 0; i < n; i++) {
        memcpy(f + 14, &i, sizeof(i));
        send_frame(f, sizeof(f));
    }
    rt_poll();
    rt_unlock();
    printf("blasted\n");
    fflush(stdout);
    end = base_now_ns() + (uint64_t)seconds * 1000000000ull;
    while (base_now_ns() < end) {
        rt_lock();
        rt_poll();
        rt_unlock();
        usleep(1000);
    }
    printf(
        "blast sent %u tx_frames %llu tx_backlogged %llu tx_drop_full %llu\n",
        n, (unsigned long long)base_stats.tx_frames,
        (unsigned long long)base_stats.tx_backlogged,
        (unsigned long long)base_stats.tx_drop_full);
    return 0;
}

/* af_packet's rings as a burst interrupted halfway leaves them: every
 * waiting frame handed back to the kernel, and 3 frames written and
 * marked for sending, without the positions stored or a kick. Returns the
 * frames taken. */
static uint32_t
pkt_half_burst(struct rt__pkt_rings *k)
{
    uint32_t n = 0;
    unsigned at = *k->rx_num;
    uint8_t f[60] = {0};

    for (;;) {
        struct tpacket2_hdr *h = k->rx_rd[at].iov_base;

        if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) &
              TP_STATUS_USER))
            break;
        __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        at = (at + 1) % k->rx_count;
        n++;
    }
    memset(f, 0xff, 6);
    memcpy(f + 6, nc.mac, 6);
    f[12] = 0x88, f[13] = 0xb5; /* IEEE 802 local experimental */
    at = *k->tx_num;
    for (int i = 0; i < 3; i++) {
        struct tpacket2_hdr *h = k->tx_rd[at].iov_base;

        memcpy((uint8_t *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll), f,
               sizeof(f));
        h->tp_len = h->tp_snaplen = sizeof(f);
        __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST,
                         __ATOMIC_RELEASE);
        at = (at + 1) % k->tx_count;
    }
    return n;
}

/* --die-mid-burst FILE: see the header. */
static void
fork_parent(void)
{
    (void)rt_atfork_parent();
}

static int
die_mid_burst(const char *file)
{
    int pipefd[2], status;
    uint32_t peeked = 0;
    unsigned sent = 0;
    uint64_t end, next = 0;
    pid_t pid;

    if (peer_ip == 0 || pipe(pipefd) != 0 ||
        pthread_atfork(rt_atfork_prepare, fork_parent, rt_atfork_child) != 0)
        return 2;
    printf("started\n");
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        struct rt__xsk_rings r;
        struct rt__pkt_rings k;

        while (access(file, F_OK) != 0)
            usleep(10000);
        usleep(200000); /* the last frames reach the ring */
        rt__sh_port_lock();
        if (rt__xsk_rings(0, &r)) {
            /* xsk_ring_cons__peek of everything waiting, and
             * xsk_ring_prod__reserve of 8 entries; no release, no
             * submit: the process dies first. */
            peeked = __atomic_load_n(r.rx->producer, __ATOMIC_ACQUIRE) -
                     r.rx->cached_cons;
            r.rx->cached_cons += peeked;
            r.tx->cached_prod += 8;
        } else if (rt__pkt_rings(0, &k)) {
            peeked = pkt_half_burst(&k);
        }
        if (write(pipefd[1], &peeked, sizeof(peeked)) != sizeof(peeked))
            _exit(3);
        kill(getpid(), SIGKILL);
        _exit(3);
    }
    close(pipefd[1]);
    if (read(pipefd[0], &peeked, sizeof(peeked)) != sizeof(peeked))
        peeked = 0;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
        printf("child did not die of SIGKILL (status %#x)\n", status);
        return 1;
    }
    end = base_now_ns() + 2000000000ull;
    while (base_now_ns() < end && (sent < 5 || replies < 5)) {
        uint64_t now = base_now_ns();

        rt_lock();
        rt_poll();
        if (!peer_known && now >= next) {
            send_arp(1, NULL, peer_ip);
            next = now + 100000000ull;
        } else if (peer_known && sent < 5 && now >= next) {
            send_echo((uint16_t)sent++);
            next = now + 50000000ull;
        }
        rt_poll();
        rt_unlock();
        usleep(1000);
    }
    printf(
        "died_mid_burst taken %u udp_seen %u replies %u/5 repaired %llu\n",
        peeked, udp_seen, replies,
        (unsigned long long)(base_stats.xsk_repairs + base_stats.pkt_repairs));
    return peeked > 0 && replies == 5 && (rt__port.is_pkt || udp_seen >= peeked)
               ? 0
               : 1;
}

static double
cpu_ms(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

int
main(int argc, char **argv)
{
    unsigned seconds = 3, min_replies = 0, min_rx = 0;
    const char *backlog = NULL;
    unsigned blast_n = 0;
    const char *die_file = NULL;
    uint16_t seq = 0;
    uint64_t end, next_ping = 0, next_arp = 0;
    double cpu0;
    int rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--ping") == 0 && i + 1 < argc)
            peer_ip = inet_addr(argv[++i]);
        else if (strcmp(argv[i], "--min-replies") == 0 && i + 1 < argc)
            min_replies = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--min-rx") == 0 && i + 1 < argc)
            min_rx = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--backlog") == 0 && i + 1 < argc)
            backlog = argv[++i];
        else if (strcmp(argv[i], "--blast") == 0 && i + 1 < argc)
            blast_n = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--die-mid-burst") == 0 && i + 1 < argc)
            die_file = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--seconds N] [--ping IP] "
                    "[--min-replies N] [--min-rx N] | --backlog FILE | "
                    "--blast N [--seconds S] | --die-mid-burst FILE "
                    "--ping IP\n",
                    argv[0]);
            return 2;
        }
    }
    base_in_lib = 1; /* as preload's socket() wrapper would */
    rc = rt_start();
    base_in_lib = 0;
    if (rc != 0) {
        printf("start failed: %s\n", strerror(-rc));
        return 2;
    }
    if (backlog != NULL)
        return backlog_turns(backlog);
    if (blast_n > 0)
        return blast(blast_n, seconds);
    if (die_file != NULL)
        return die_mid_burst(die_file);
    printf("started\n");
    fflush(stdout);
    cpu0 = cpu_ms();
    end = base_now_ns() + (uint64_t)seconds * 1000000000ull;
    for (;;) {
        uint64_t now = base_now_ns();
        int ms;

        if (now >= end)
            break;
        rt_lock();
        rt_poll();
        if (peer_ip != 0 && !peer_known && now >= next_arp) {
            send_arp(1, NULL, peer_ip);
            next_arp = now + 100000000ull;
        }
        if (peer_ip != 0 && peer_known && now >= next_ping) {
            send_echo(seq++);
            next_ping = now + 20000000ull;
        }
        rt_poll(); /* flush what we queued */
        rt_unlock();
        ms = (int)((end - now) / 1000000u) + 1;
        if (peer_ip != 0) {
            uint64_t next = peer_known ? next_ping : next_arp;
            int pm = next > now ? (int)((next - now) / 1000000u) + 1 : 0;
            if (pm < ms)
                ms = pm;
        }
        rc = rt_block(RT_WAIT_POLL, NULL, 0, ms, NULL, rt_sig_count);
        if (rc < 0 && rc != -EINTR) {
            printf("rt_block: %s\n", strerror(-rc));
            return 1;
        }
    }
    printf("rx_frames %llu tx_frames %llu tx_drops %llu arp_answered %u "
           "echo_answered %u replies %u/%u",
           (unsigned long long)base_stats.rx_frames,
           (unsigned long long)base_stats.tx_frames,
           (unsigned long long)(base_stats.tx_drop_full +
                                base_stats.tx_drop_nombuf),
           arp_answered, echo_answered, replies, (unsigned)seq);
    if (replies > 0)
        printf(" rtt_us min %.1f avg %.1f max %.1f", rtt_min / 1e3,
               (double)rtt_sum / replies / 1e3, rtt_max / 1e3);
    printf(" polls %llu sleeps %llu timers %u cpu_ms %.0f over %u s\n",
           (unsigned long long)base_stats.polls,
           (unsigned long long)base_stats.sleeps, timers_run, cpu_ms() - cpu0,
           seconds);
    return replies >= min_replies && base_stats.rx_frames >= min_rx ? 0 : 1;
}
