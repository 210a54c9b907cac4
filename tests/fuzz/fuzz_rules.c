/*
 * Fuzzer: the per-application rules parser (preload/rules.c,
 * pl_rules_parse) on the input as a rules file's text, then every query
 * the preload layer makes of a parsed table: matches at bind and connect
 * for TCP and UDP, IPv4, IPv6 and dual-stack addresses taken from the
 * input's last bytes, the routing decisions combined with the built-in
 * ones, and the table cut down to one program's rules.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n);

/* Addresses to ask about: the stack's, a peer's, and one from the
 * input's tail (the part a rule's prefix and ports may cover). */
static void
queries(const struct pl_rules *r, const uint8_t *in, size_t n)
{
    struct pl_net net;
    struct sockaddr_in a4[3];
    struct sockaddr_in6 a6[3];
    const char *progs[] = {NULL, "nginx", "redis-server"};

    memset(&net, 0, sizeof(net));
    net.ip = htonl(0x0a000002u);
    net.mask = htonl(0xffffff00u);
    net.gw = htonl(0x0a000001u);
    net.has6 = true;
    net.prefix6 = 64;
    inet_pton(AF_INET6, "fd00:200::2", &net.ip6);
    inet_pton(AF_INET6, "fe80::ff:fe00:2", &net.ll6);
    memset(a4, 0, sizeof(a4));
    memset(a6, 0, sizeof(a6));
    for (int i = 0; i < 3; i++) {
        a4[i].sin_family = AF_INET;
        a6[i].sin6_family = AF_INET6;
    }
    a4[0].sin_addr.s_addr = net.ip;
    a4[0].sin_port = htons(80);
    a4[1].sin_addr.s_addr = htonl(0x0a000001u);
    a4[1].sin_port = htons(53);
    a6[0].sin6_addr = net.ip6;
    a6[0].sin6_port = htons(8080);
    a6[1].sin6_port = htons(443); /* :: */
    if (n >= 6) {
        memcpy(&a4[2].sin_addr, in + n - 6, 4);
        memcpy(&a4[2].sin_port, in + n - 2, 2);
    }
    if (n >= 18) {
        memcpy(&a6[2].sin6_addr, in + n - 18, 16);
        memcpy(&a6[2].sin6_port, in + n - 2, 2);
    }
    for (int i = 0; i < 3; i++)
        for (int t = 0; t < 2; t++) {
            int type = t ? SOCK_DGRAM : SOCK_STREAM;
            const char *prog = progs[i];
            const struct pl_rule *hit;

            for (int b = 0; b < 2; b++) {
                (void)pl_rules_match_addr(r, type, b, (struct sockaddr *)&a4[i],
                                          sizeof(a4[i]), false, prog);
                (void)pl_rules_match_addr(r, type, b, (struct sockaddr *)&a6[i],
                                          sizeof(a6[i]), b, prog);
            }
            (void)pl_rules_route_bind(r, type, (struct sockaddr *)&a4[i],
                                      sizeof(a4[i]), &net, prog, &hit);
            (void)pl_rules_route_bind(r, type, (struct sockaddr *)&a6[i],
                                      sizeof(a6[i]), &net, prog, &hit);
            (void)pl_rules_route_connect(r, type, (struct sockaddr *)&a4[i],
                                         sizeof(a4[i]), &net, prog, &hit);
            (void)pl_rules_route_connect(r, type, (struct sockaddr *)&a6[i],
                                         sizeof(a6[i]), &net, prog, &hit);
            if (hit != NULL && pl_rules_role_name(hit->role) == NULL)
                abort();
        }
}

int
LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
    struct pl_rules r;
    char err[512];

    memset(&r, 0, sizeof(r));
    if (pl_rules_parse((const char *)in, n, "fuzz.conf", &r, err,
                       sizeof(err)) != 0) {
        if (r.n != 0 || err[0] == '\0' ||
            memchr(err, '\0', sizeof(err)) == NULL)
            abort(); /* an error leaves the table empty and says why */
        pl_rules_free(&r);
        return 0;
    }
    queries(&r, in, n);
    pl_rules_for_prog(&r, "nginx");
    queries(&r, in, n);
    pl_rules_free(&r);
    pl_rules_free(&r);
    return 0;
}
