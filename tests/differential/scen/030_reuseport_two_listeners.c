/*
 * Behaviour: two TCP sockets with SO_REUSEPORT bind and listen on the same
 * port; a third without it fails with EADDRINUSE; a connection to the port
 * is queued on exactly one of the two listeners and is accepted there.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 30;
    struct sockaddr_in a = d_sin(D_SUBJ_IP, port);
    int one = 1, s[2], x, v = -1, i, ready = 0, c = -1;
    socklen_t vl = sizeof(v);
    struct pollfd p[2];
    char buf[8];

    tr_init();
    for (i = 0; i < 2; i++) {
        s[i] = TF(socket(AF_INET, SOCK_STREAM, 0));
        T(setsockopt(s[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)));
        T(bind(s[i], SA(&a), sizeof(a)));
        T(listen(s[i], 8));
    }
    T(getsockopt(s[0], SOL_SOCKET, SO_REUSEPORT, &v, &vl));
    NOTE("SO_REUSEPORT %d", v);
    x = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(x, SA(&a), sizeof(a)));
    T(close(x));

    d_connect_back(port, "send:rp");
    for (i = 0; i < 2; i++)
        p[i] = (struct pollfd){.fd = s[i], .events = POLLIN};
    while (poll(p, 2, -1) <= 0)
        ;
    for (i = 0; i < 2; i++)
        if (p[i].revents & POLLIN) {
            ready++;
            c = accept(s[i], NULL, NULL);
        }
    NOTE("listeners with a connection: %d", ready);
    T(c >= 0);
    T(d_read_full(c, buf, 2));
    NOTE("got %s", tr_data(buf, 2));
    T(close(c));
    T(close(s[0]));
    T(close(s[1]));
    return 0;
}
