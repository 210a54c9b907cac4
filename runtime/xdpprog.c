/*
 * accel's XDP program on an interface, kept from one process to the next
 * (xdpprog.h).
 *
 * Loading the program (the verifier) and attaching it (on veth ~8 ms; a
 * NIC in driver mode reconfigures its rings) were most of a lone
 * process's start-up, and its exit detached it again. With no XSK in its
 * xsks_map the program passes every frame to the kernel
 * (bpf_redirect_map's fallback action), so it is left attached when the
 * process exits, and the next process on the interface adopts it when it
 * is the same program: the same build (a hash of the embedded object,
 * written into the constant accel_build) and the same constants. The
 * .rodata map of the attached program holds exactly what this process
 * would load, so the check is one read and one comparison. Its maps keep
 * the last process's entries (listening ports, flows, IPv6 addresses):
 * emptied before the XSK goes in. `ip link set dev IFACE xdp off` removes
 * it; ACCEL_XDP_KEEP=0 detaches it at exit as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpprog.h"

extern const unsigned char rt__xdp_steer_obj[];
extern const size_t rt__xdp_steer_obj_len;

/* steer.bpf.c's placeholder values (as the u32 is stored). */
#define XP_IP_MARK 0x5A1ECCA1u
#define XP_BCAST_MARK 0x5B1ECCA1u
#define XP_SHARED_MARK 0x5C1ECCA1u
#define XP_BUILD_MARK 0x5D1ECCA1u
#define XP_MAPS_MAX 16

static int
libbpf_rc(long rc)
{
    if (rc >= 0)
        return 0;
    return rc == -1 ? -errno : (int)rc;
}

/* FNV-1a over the embedded object: which build the program is. Never the
 * placeholder itself. */
static uint32_t
build_hash(void)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < rt__xdp_steer_obj_len; i++)
        h = (h ^ rt__xdp_steer_obj[i]) * 16777619u;
    return h == XP_BUILD_MARK ? h + 1 : h;
}

/* The object's .rodata map. */
static struct bpf_map *
rodata_of(struct bpf_object *obj)
{
    struct bpf_map *m;

    bpf_object__for_each_map(m, obj)
    {
        if (bpf_map__is_internal(m) &&
            strstr(bpf_map__name(m), ".rodata") != NULL)
            return m;
    }
    return NULL;
}

int
rt__xdpprog_patch(void *buf, size_t n, const struct rt__xdpprog_cfg *c)
{
    const uint32_t vals[4] = {c->ip, c->ip | ~c->mask, c->shared ? 1u : 0u,
                              build_hash()};
    const uint32_t marks[4] = {XP_IP_MARK, XP_BCAST_MARK, XP_SHARED_MARK,
                               XP_BUILD_MARK};
    uint8_t *at[4] = {NULL, NULL, NULL, NULL};

    for (size_t off = 0; off + 4 <= n; off++) {
        uint32_t v;

        memcpy(&v, (uint8_t *)buf + off, 4);
        for (int i = 0; i < 4; i++) {
            if (v != marks[i])
                continue;
            if (at[i] != NULL)
                return -ENOENT;
            at[i] = (uint8_t *)buf + off;
        }
    }
    for (int i = 0; i < 4; i++)
        if (at[i] == NULL)
            return -ENOENT;
    for (int i = 0; i < 4; i++)
        memcpy(at[i], &vals[i], 4);
    return 0;
}

/* The constants in .rodata's initial value. */
static int
set_constants(struct bpf_object *obj, const struct rt__xdpprog_cfg *c)
{
    struct bpf_map *m = rodata_of(obj);
    const uint8_t *init;
    uint8_t *copy;
    size_t sz;
    int rc;

    if (m == NULL || (init = bpf_map__initial_value(m, &sz)) == NULL)
        return -ENOENT;
    if ((copy = malloc(sz)) == NULL)
        return -ENOMEM;
    memcpy(copy, init, sz);
    rc = rt__xdpprog_patch(copy, sz, c);
    if (rc == 0)
        rc = libbpf_rc(bpf_map__set_initial_value(m, copy, sz));
    free(copy);
    return rc;
}

/* The map ids of a loaded program (at most XP_MAPS_MAX). */
static uint32_t
map_ids(int prog_fd, uint32_t ids[XP_MAPS_MAX])
{
    struct bpf_prog_info info;
    uint32_t len = sizeof(info);

    memset(&info, 0, sizeof(info));
    info.nr_map_ids = XP_MAPS_MAX;
    info.map_ids = (uint64_t)(uintptr_t)ids;
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
        return 0;
    return info.nr_map_ids < XP_MAPS_MAX ? info.nr_map_ids : XP_MAPS_MAX;
}

int
rt__xdpprog_map_fd(int prog_fd, const char *name)
{
    uint32_t ids[XP_MAPS_MAX], n = map_ids(prog_fd, ids);

    for (uint32_t i = 0; i < n; i++) {
        struct bpf_map_info mi;
        uint32_t mlen = sizeof(mi);
        int fd = bpf_map_get_fd_by_id(ids[i]);

        if (fd < 0)
            continue;
        memset(&mi, 0, sizeof(mi));
        if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 &&
            (strcmp(mi.name, name) == 0 ||
             (name[0] == '.' && strstr(mi.name, name) != NULL)))
            return fd;
        close(fd);
    }
    return -ENOENT;
}

int
rt__xdpprog_attached(int ifindex)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof(info), id = 0;
    int fd;

    if (bpf_xdp_query_id(ifindex, 0, &id) != 0)
        return -errno;
    if (id == 0)
        return -ENOENT;
    fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0)
        return -errno;
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 ||
        strcmp(info.name, RT__XDPPROG_NAME) != 0) {
        close(fd);
        return -ENOENT;
    }
    return fd;
}

/* 1 when the attached program's .rodata is want (sz bytes). */
static int
same_constants(int prog_fd, const void *want, size_t sz)
{
    struct bpf_map_info mi;
    uint32_t mlen = sizeof(mi), key = 0;
    int fd = rt__xdpprog_map_fd(prog_fd, ".rodata"), same = 0;
    void *cur;

    if (fd < 0)
        return 0;
    memset(&mi, 0, sizeof(mi));
    if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 && mi.value_size == sz &&
        (cur = calloc(1, sz)) != NULL) {
        same = bpf_map_lookup_elem(fd, &key, cur) == 0 &&
               memcmp(cur, want, sz) == 0;
        free(cur);
    }
    close(fd);
    return same;
}

/* Delete every entry of the program's maps (the internal .rodata/.bss
 * ones aside). XSKMAP slots are indices: each is deleted; the hash maps
 * are walked from their first key until empty. */
static void
empty_maps(int prog_fd)
{
    uint32_t ids[XP_MAPS_MAX], n = map_ids(prog_fd, ids);

    for (uint32_t i = 0; i < n; i++) {
        struct bpf_map_info mi;
        uint32_t mlen = sizeof(mi);
        int fd = bpf_map_get_fd_by_id(ids[i]);
        uint8_t key[64];

        if (fd < 0)
            continue;
        memset(&mi, 0, sizeof(mi));
        if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) != 0 ||
            strchr(mi.name, '.') != NULL || mi.key_size > sizeof(key)) {
            close(fd);
            continue;
        }
        if (mi.type == BPF_MAP_TYPE_XSKMAP) {
            for (uint32_t k = 0; k < mi.max_entries; k++)
                bpf_map_delete_elem(fd, &k);
        } else {
            /* Bounded: a map refilled meanwhile cannot keep us here. */
            for (uint32_t left = mi.max_entries + 1;
                 left > 0 && bpf_map_get_next_key(fd, NULL, key) == 0; left--)
                bpf_map_delete_elem(fd, key);
        }
        close(fd);
    }
}

/* Detach prog_fd from ifindex if it is the attached program.
 * bpf_xdp_detach is bpf_xdp_attach with fd -1; called that way because
 * the library wraps bpf_xdp_detach for the af_xdp PMD (broker_client.c). */
static int
detach_prog(int ifindex, int prog_fd)
{
    LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = prog_fd);

    return libbpf_rc(bpf_xdp_attach(ifindex, -1, XDP_FLAGS_REPLACE, &o));
}

static int
dup_cloexec(int fd)
{
    int d = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);

    return d < 0 ? -errno : d;
}

/* Adopt the attached program prog_fd: p gets it and its xsks_map. */
static int
adopt(int prog_fd, struct rt__xdpprog *p)
{
    int xsks = rt__xdpprog_map_fd(prog_fd, "xsks_map");

    if (xsks < 0)
        return xsks;
    empty_maps(prog_fd);
    p->prog_fd = prog_fd;
    p->xsks_fd = xsks;
    p->adopted = true;
    return 0;
}

/* Load obj and attach it where no program is. */
static int
load_attach(struct bpf_object *obj, struct rt__xdpprog *p, char *why, size_t n)
{
    struct bpf_program *prog;
    int rc = libbpf_rc(bpf_object__load(obj));

    if (rc != 0) {
        snprintf(why, n, "cannot load the XDP program: %s", strerror(-rc));
        return rc;
    }
    prog = bpf_object__find_program_by_name(obj, RT__XDPPROG_NAME);
    p->prog_fd = dup_cloexec(prog != NULL ? bpf_program__fd(prog) : -1);
    p->xsks_fd = dup_cloexec(bpf_object__find_map_fd_by_name(obj, "xsks_map"));
    if (p->prog_fd < 0 || p->xsks_fd < 0) {
        snprintf(why, n, "the XDP program has no %s or xsks_map",
                 RT__XDPPROG_NAME);
        rt__xdpprog_release(p);
        return -ENOENT;
    }
    rc = libbpf_rc(bpf_xdp_attach(p->ifindex, p->prog_fd,
                                  XDP_FLAGS_UPDATE_IF_NOEXIST, NULL));
    if (rc != 0) {
        snprintf(why, n,
                 "cannot attach the XDP program (%s): another XDP program "
                 "is on the interface",
                 strerror(-rc));
        rt__xdpprog_release(p);
    }
    return rc;
}

int
rt__xdpprog_ensure(int ifindex, const struct rt__xdpprog_cfg *c,
                   struct rt__xdpprog *p, char *why, size_t n)
{
    LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "accel");
    struct bpf_object *obj;
    const void *want;
    size_t sz = 0;
    int rc, cur;

    memset(p, 0, sizeof(*p));
    p->ifindex = ifindex;
    p->prog_fd = p->xsks_fd = -1;
    why[0] = '\0';
    obj = bpf_object__open_mem(rt__xdp_steer_obj, rt__xdp_steer_obj_len, &oo);
    rc = libbpf_rc(libbpf_get_error(obj));
    if (rc != 0) {
        snprintf(why, n, "cannot open the XDP program: %s", strerror(-rc));
        return rc;
    }
    rc = set_constants(obj, c);
    if (rc != 0) {
        snprintf(why, n,
                 "the XDP program has no unique constant placeholders (a "
                 "build problem)");
        goto out;
    }
    want = bpf_map__initial_value(rodata_of(obj), &sz);
    cur = rt__xdpprog_attached(ifindex);
    if (cur >= 0) {
        if (same_constants(cur, want, sz) && adopt(cur, p) == 0)
            goto out; /* rc 0 */
        /* An earlier process's, with other constants or of another build
         * (the interface lock says it is nobody's now): replaced. */
        detach_prog(ifindex, cur);
        close(cur);
    }
    rc = load_attach(obj, p, why, n);
out:
    bpf_object__close(obj);
    return rc;
}

void
rt__xdpprog_release(struct rt__xdpprog *p)
{
    if (p->prog_fd >= 0)
        close(p->prog_fd);
    if (p->xsks_fd >= 0)
        close(p->xsks_fd);
    p->prog_fd = p->xsks_fd = -1;
}

int
rt__xdpprog_detach(struct rt__xdpprog *p)
{
    int rc = p->prog_fd >= 0 ? detach_prog(p->ifindex, p->prog_fd) : -ENOENT;

    rt__xdpprog_release(p);
    return rc;
}
