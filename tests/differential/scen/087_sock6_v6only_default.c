/*
 * Behaviour: IPV6_V6ONLY starts at net.ipv6.bindv6only (0 here, printed)
 * on TCP and UDP sockets; it can be set to 1 and back to 0 before bind,
 * any non-zero value reads back as 1, and a short option length is EINVAL.
 * On an AF_INET socket, getsockopt IPV6_V6ONLY is EOPNOTSUPP and
 * setsockopt ENOPROTOOPT (Linux's two paths differ).
 */
#include "scen.h"

int
main(void)
{
    FILE *f = fopen("/proc/sys/net/ipv6/bindv6only", "r");
    int sys = -1, t, u, v4, v = 7;
    short sh = 1;

    tr_init();
    if (f != NULL) {
        if (fscanf(f, "%d", &sys) != 1)
            sys = -1;
        fclose(f);
    }
    NOTE("net.ipv6.bindv6only = %d", sys);
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    d_geti(t, IPPROTO_IPV6, IPV6_V6ONLY, "tcp IPV6_V6ONLY");
    d_geti(u, IPPROTO_IPV6, IPV6_V6ONLY, "udp IPV6_V6ONLY");
    d_seti(t, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    d_geti(t, IPPROTO_IPV6, IPV6_V6ONLY, "tcp IPV6_V6ONLY after 1");
    d_seti(t, IPPROTO_IPV6, IPV6_V6ONLY, 0);
    d_geti(t, IPPROTO_IPV6, IPV6_V6ONLY, "tcp IPV6_V6ONLY after 0");
    T(setsockopt(u, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)));
    d_geti(u, IPPROTO_IPV6, IPV6_V6ONLY, "udp IPV6_V6ONLY after 7");
    T(setsockopt(u, IPPROTO_IPV6, IPV6_V6ONLY, &sh, sizeof(sh)));
    d_geti(u, IPPROTO_IPV6, IPV6_V6ONLY, "udp IPV6_V6ONLY after short set");
    v4 = TF(socket(AF_INET, SOCK_STREAM, 0));
    d_geti(v4, IPPROTO_IPV6, IPV6_V6ONLY, "AF_INET IPV6_V6ONLY");
    T(setsockopt(v4, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)));
    T(close(t));
    T(close(u));
    T(close(v4));
    return 0;
}
