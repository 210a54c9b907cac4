/*
 * The fork, exit and deferred-output half of the stack contract (stk.h),
 * for the port tests' stand-in stacks: they hold no connections, so there
 * is nothing to freeze, report or send later; frames dispatched to a
 * listener go to the stand-in's stk_input.
 */
#include "stk.h"

#include <errno.h>

void
stk_set_flow_ops(const struct stk_flow_ops *ops)
{
    (void)ops;
}

void
stk_each_flow(void (*fn)(void *ctx, const struct stk_flow *f, bool has_sock),
              void *ctx)
{
    (void)fn;
    (void)ctx;
}

void
stk_fork_freeze(bool child)
{
    (void)child;
}

void
stk_fork_tag_udp(void)
{
}

void
stk_input_lid(const void *frame, uint16_t len, uint32_t lid)
{
    (void)lid;
    stk_input(frame, len);
}

int
stk_close_all_at_exit(void)
{
    return 0; /* no connections in this stand-in stack */
}

int
stk_pending_output(bool peer_fin)
{
    (void)peer_fin;
    return 0; /* no connections, nothing to linger for at exit */
}

uint64_t
stk_pending_bytes(void)
{
    return 0;
}

bool
stk_sock_service(const struct stk_sock *s, int *proto, uint16_t *port,
                 uint32_t *lid)
{
    (void)s;
    (void)proto;
    (void)port;
    (void)lid;
    return false; /* no listeners in the stand-in */
}

int
stk_listener_export(struct stk_sock *l, struct stk_conn_image *img, void *data,
                    uint32_t cap)
{
    (void)l;
    (void)img;
    (void)data;
    (void)cap;
    return 0;
}

int
stk_listener_import(struct stk_sock *l, const struct stk_conn_image *img,
                    const void *data)
{
    (void)l;
    (void)img;
    (void)data;
    return -1;
}

uint32_t
stk_sock_events(struct stk_sock *s, uint32_t *gen)
{
    (void)s;
    if (gen != NULL)
        *gen = 0;
    return 0;
}

void
stk_isn_set_key(const uint64_t key[2])
{
    (void)key;
}

bool
stk_flow_active(const struct stk_flow *f)
{
    (void)f;
    return false; /* no connections: every frame goes through dispatch */
}

void
stk_output_defer(bool on)
{
    (void)on;
}

void
stk_output_flush(void)
{
    /* no connections: nothing is ever deferred */
}

unsigned
stk_output_pending(void)
{
    return 0;
}

int
stk_tcp_configure(const struct stk_tcp_cfg *cfg)
{
    (void)cfg;
    return 0; /* no TCP in the stand-in */
}

int
stk_tcp_cc_find(const char *name)
{
    (void)name;
    return 0; /* any name: no TCP in the stand-in */
}

/* IPv6 on the netif: the stand-ins have none (ACCEL_IP6 unset here). */
int
stk_netif_set_ip6(const struct in6_addr *a, int prefix_len)
{
    (void)a;
    (void)prefix_len;
    return -EOPNOTSUPP;
}

int
stk_netif_set_gw6(const struct in6_addr *gw)
{
    (void)gw;
    return -EOPNOTSUPP;
}

/* The interface's index: the stand-ins have no sockets that name it. */
void
stk_set_ifindex(int ifindex)
{
    (void)ifindex;
}

/* The stand-ins have no connections to steer. */
void
stk_steer_adopt_port(uint16_t port)
{
    (void)port;
}
