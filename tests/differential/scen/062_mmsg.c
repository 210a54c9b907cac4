/*
 * Behaviour: sendmmsg sends several UDP datagrams in one call and returns
 * their count (msg_len filled); recvmmsg receives them into separate
 * buffers with msg_len each; with MSG_WAITFORONE it returns what is
 * queued; with MSG_DONTWAIT on an empty socket it fails with EAGAIN.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    char bufs[4][32];
    struct iovec wv[3] = {{"alpha", 5}, {"be", 2}, {"gamma!", 6}};
    struct iovec rv[4];
    struct mmsghdr w[3], r[4];
    int u, i, n;

    tr_init();
    memset(w, 0, sizeof(w));
    memset(r, 0, sizeof(r));
    for (i = 0; i < 3; i++) {
        w[i].msg_hdr.msg_iov = &wv[i];
        w[i].msg_hdr.msg_iovlen = 1;
    }
    for (i = 0; i < 4; i++) {
        rv[i] = (struct iovec){bufs[i], sizeof(bufs[i])};
        r[i].msg_hdr.msg_iov = &rv[i];
        r[i].msg_hdr.msg_iovlen = 1;
    }
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(u, SA(&d), sizeof(d)));
    T(recvmmsg(u, r, 4, MSG_DONTWAIT, NULL));
    T(sendmmsg(u, w, 3, 0));
    for (i = 0; i < 3; i++)
        NOTE("sent[%d] msg_len %u", i, w[i].msg_len);
    n = (int)T(recvmmsg(u, r, 3, 0, NULL));
    for (i = 0; i < n; i++)
        NOTE("recv[%d] %s", i, tr_data(bufs[i], r[i].msg_len));
    T(sendmmsg(u, w, 1, 0));
    d_wait(u, POLLIN);
    n = (int)T(recvmmsg(u, r, 4, MSG_WAITFORONE, NULL));
    for (i = 0; i < n; i++)
        NOTE("recv[%d] %s", i, tr_data(bufs[i], r[i].msg_len));
    T(sendmmsg(u, w, 0, 0));
    T(close(u));
    return 0;
}
