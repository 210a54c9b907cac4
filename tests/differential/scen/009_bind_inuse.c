/*
 * Behaviour: binding a second socket to an address:port in use fails with
 * EADDRINUSE: TCP without SO_REUSEADDR (bound or listening first socket),
 * TCP with SO_REUSEADDR on the second only, UDP without
 * options; the wildcard address conflicts with the specific one. After the
 * first socket is closed the port is free again.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_SUBJ_IP, D_LPORT_BASE + 9);
    struct sockaddr_in any = d_sin("0.0.0.0", D_LPORT_BASE + 9);
    int one = 1, s1, s2, s3, u1, u2;

    tr_init();
    s1 = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(s1, SA(&a), sizeof(a)));
    s2 = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(s2, SA(&a), sizeof(a)));
    T(bind(s2, SA(&any), sizeof(any)));
    T(listen(s1, 4));
    T(bind(s2, SA(&a), sizeof(a)));
    T(close(s2));

    s3 = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(s3, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(s3, SA(&a), sizeof(a)));
    T(close(s3));
    T(close(s1));

    s1 = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(s1, SA(&a), sizeof(a)));
    T(close(s1));

    u1 = TF(socket(AF_INET, SOCK_DGRAM, 0));
    u2 = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u1, SA(&a), sizeof(a)));
    T(bind(u2, SA(&a), sizeof(a)));
    T(bind(u2, SA(&any), sizeof(any)));
    T(close(u1));
    T(close(u2));
    return 0;
}
