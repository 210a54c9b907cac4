/*
 * Behaviour: a blocking connect with SO_SNDTIMEO 200 ms to an address
 * nobody has gives up waiting with EINPROGRESS (Linux's answer for a
 * timed-out connect), the attempt going on: the next connect is
 * EALREADY; SO_ERROR 0; close.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_NONLOCAL_IP, D_ECHO);
    struct timeval tv = {0, 200000};
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
    T(connect(fd, SA(&a), sizeof(a)));
    T(connect(fd, SA(&a), sizeof(a)));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    T(close(fd));
    return 0;
}
