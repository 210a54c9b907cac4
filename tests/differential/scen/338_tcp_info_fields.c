/*
 * Behaviour: TCP_INFO on an idle established connection gives the
 * deterministic fields as Linux: tcpi_state 1 (ESTABLISHED), ca_state 0,
 * retransmits, probes, backoff, unacked, sacked, lost, retrans 0; on a
 * listener tcpi_state 10; on a bound socket 7 (CLOSE); a short length (8)
 * copies 8 bytes and reports 8; a UDP socket's TCP_INFO is EOPNOTSUPP.
 */
#include "scen.h"

static void
info(int fd, const char *what)
{
    struct tcp_info ti;
    socklen_t l = sizeof(ti);

    memset(&ti, 0, sizeof(ti));
    if (T(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l)) == 0)
        NOTE("%s: state %d ca %d retransmits %d probes %d backoff %d "
             "unacked %u sacked %u lost %u retrans %u",
             what, ti.tcpi_state, ti.tcpi_ca_state, ti.tcpi_retransmits,
             ti.tcpi_probes, ti.tcpi_backoff, ti.tcpi_unacked, ti.tcpi_sacked,
             ti.tcpi_lost, ti.tcpi_retrans);
}

int
main(void)
{
    struct sockaddr_in b = d_sin(D_SUBJ_IP, 0);
    unsigned char small[8];
    socklen_t l = sizeof(small);
    int fd, lfd, bd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    T(send(fd, "x", 1, 0));
    T(d_read_full(fd, small, 1));
    usleep(50000);
    info(fd, "established");
    T(getsockopt(fd, IPPROTO_TCP, TCP_INFO, small, &l));
    NOTE("short len %d state %d", (int)l, small[0]);
    lfd = d_listen(D_LPORT_BASE + 338);
    info(lfd, "listener");
    bd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(bd, SA(&b), sizeof(b)));
    info(bd, "bound");
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&b), sizeof(b)));
    info(u, "udp");
    T(close(u));
    T(close(bd));
    T(close(lfd));
    T(close(fd));
    return 0;
}
