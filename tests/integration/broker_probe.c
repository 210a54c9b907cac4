/*
 * broker_probe: speaks accel-broker's protocol (runtime/broker_proto.h)
 * directly, as a client that did not go through libaccel.so would, for the
 * unpriv_shared integration test: a HELLO for an address the kernel holds
 * on the interface (the shared-address mode), then one STEER per argument
 * adding a port to accel_lport, each answered (no AB_STEER_NOREPLY). One
 * line per request on stdout: "hello STATUS WHY" and "PROTO/PORT STATUS
 * WHY" (STATUS 0 or -errno). Exit 0 when every request got an answer.
 *
 * usage: broker_probe SOCKET IFACE IP PREFIXLEN tcp|udp/PORT...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker_proto.h"
#include "xdp/steer.h"

static int
ask(int fd, struct ab_req *q, struct ab_rep *r)
{
    q->magic = AB_MAGIC;
    q->version = AB_VERSION;
    q->size = sizeof(*q);
    memset(r, 0, sizeof(*r));
    if (send(fd, q, sizeof(*q), 0) != (ssize_t)sizeof(*q) ||
        recv(fd, r, sizeof(*r), 0) != (ssize_t)sizeof(*r))
        return -1;
    r->why[sizeof(r->why) - 1] = '\0';
    return 0;
}

int
main(int argc, char **argv)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    struct ab_req q;
    struct ab_rep r;
    int fd, len;

    if (argc < 5) {
        fprintf(stderr, "usage: broker_probe SOCKET IFACE IP PREFIXLEN "
                        "tcp|udp/PORT...\n");
        return 2;
    }
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[1]);
    fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        perror("connect");
        return 1;
    }
    memset(&q, 0, sizeof(q));
    q.op = AB_HELLO;
    snprintf(q.u.hello.iface, sizeof(q.u.hello.iface), "%s", argv[2]);
    q.u.hello.ip = inet_addr(argv[3]);
    len = atoi(argv[4]);
    q.u.hello.mask = htonl(len == 0 ? 0 : ~0u << (32 - len));
    q.u.hello.queues = 1;
    q.u.hello.keep = 0;
    q.u.hello.umem_bytes = 64ull << 20;
    if (ask(fd, &q, &r) != 0)
        return 1;
    printf("hello %d %s\n", r.status, r.why);
    for (int i = 5; i < argc; i++) {
        struct accel_lport_key k = {0};
        uint32_t one = 1;
        char proto[8];
        unsigned port;

        if (sscanf(argv[i], "%7[a-z]/%u", proto, &port) != 2)
            return 2;
        k.proto = strcmp(proto, "udp") == 0 ? IPPROTO_UDP : IPPROTO_TCP;
        k.port = htons((uint16_t)port);
        memset(&q, 0, sizeof(q));
        q.op = AB_STEER;
        snprintf(q.u.steer.map, sizeof(q.u.steer.map), "%s", ACCEL_LPORT_MAP);
        q.u.steer.op = AB_STEER_ADD;
        q.u.steer.klen = sizeof(k);
        q.u.steer.vlen = sizeof(one);
        memcpy(q.u.steer.key, &k, sizeof(k));
        memcpy(q.u.steer.val, &one, sizeof(one));
        if (ask(fd, &q, &r) != 0)
            return 1;
        printf("%s %d %s\n", argv[i], r.status, r.why);
    }
    close(fd);
    return 0;
}
