/*
 * Behaviour: F_GETFL on a socket gives O_RDWR; F_SETFL O_NONBLOCK sets
 * it (other status bits like O_APPEND are ignored as Linux does for
 * sockets); a non-blocking connect returns EINPROGRESS; clearing the flag
 * makes the socket blocking again.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    int fd, fl;
    char buf[4];

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    fl = T(fcntl(fd, F_GETFL));
    NOTE("accmode O_RDWR %d nonblock %d", (fl & O_ACCMODE) == O_RDWR,
         !!(fl & O_NONBLOCK));
    T(fcntl(fd, F_SETFL, fl | O_NONBLOCK));
    T(fcntl(fd, F_GETFL));
    T(connect(fd, SA(&a), sizeof(a)));
    d_wait(fd, POLLOUT);
    T(fcntl(fd, F_SETFL, O_NONBLOCK | O_APPEND));
    T(fcntl(fd, F_GETFL));
    T(recv(fd, buf, sizeof(buf), 0));
    T(fcntl(fd, F_SETFL, 0));
    T(fcntl(fd, F_GETFL));
    T(send(fd, "blk", 3, 0));
    T(recv(fd, buf, 3, MSG_WAITALL));
    T(close(fd));
    return 0;
}
