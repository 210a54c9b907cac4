/*
 * Behaviour: SO_LINGER defaults to {0,0}, reads back what was set (onoff
 * normalised to 1), and close() of a connected socket with {1,0} returns
 * 0 at once (abortive close); with a short optlen getsockopt truncates.
 */
#include "scen.h"

static void
get(int fd)
{
    struct linger l = {-1, -1};
    socklen_t len = sizeof(l);

    T(getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len));
    NOTE("linger len %d onoff %d linger %d", (int)len, l.l_onoff, l.l_linger);
}

int
main(void)
{
    struct linger on = {5, 7}, abort0 = {1, 0};
    int fd, c;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    get(fd);
    T(setsockopt(fd, SOL_SOCKET, SO_LINGER, &on, sizeof(on)));
    get(fd);
    T(close(fd));
    c = d_connect(D_ECHO);
    T(setsockopt(c, SOL_SOCKET, SO_LINGER, &abort0, sizeof(abort0)));
    get(c);
    T(send(c, "bye", 3, 0));
    T(recv(c, (char[3]){0}, 3, MSG_WAITALL));
    T(close(c));
    return 0;
}
