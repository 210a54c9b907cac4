/*
 * The accel-broker protocol (docs/DESIGN.md section 3, "Privileges"),
 * shared by the broker (tools/accel-broker/) and the library's client
 * (runtime/broker_client.c). Both ends are the same build, so the structs
 * are sent as they are, one request or reply per SOCK_SEQPACKET message;
 * a version or size mismatch is refused with a reason.
 *
 * The socket is /run/accel/broker-<netns inode>.sock (one broker per
 * network namespace, named like the interface locks of ifacelock.c),
 * mode 0660, group accel. A connection is one process family: the client
 * keeps it open (inherited by fork children, closed by exec), and when
 * its last copy closes the broker takes back everything it set up for it.
 *
 *   HELLO       iface, address, queues, umem size: authorise the peer,
 *               check the request, load and attach accel's own XDP
 *               program (never a client's)
 *   XSK_SOCKET  an unbound AF_XDP socket, passed back with SCM_RIGHTS
 *   UMEM_REG    the XSK (SCM_RIGHTS) and the client's umem (address,
 *               length, chunk size): the broker maps the same hugepage
 *               file (/proc/PID/map_files: the file the client maps, owned
 *               by the client) and registers it with CAP_IPC_LOCK, so the
 *               pinned memory is not charged to the service's
 *               RLIMIT_MEMLOCK (bounded by --memlock-max-mb instead)
 *   XSK_ATTACH  the client's bound XSK (SCM_RIGHTS): checked to be bound
 *               to the HELLO's interface and a queue of its range, then
 *               put in the program's xsks_map
 *   STEER       add or remove one entry of a named steering map of the
 *               program, validated per map (IPv6 destinations; with the
 *               kernel's address shared, ports, connections and neighbour
 *               requests, a port only if a kernel socket of the client's
 *               user holds it); no map fd ever leaves the broker
 */
#ifndef ACCEL_RT_BROKER_PROTO_H
#define ACCEL_RT_BROKER_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#define AB_MAGIC 0x6b726261u /* "abrk" */
#define AB_VERSION 2u
#define AB_DIR "/run/accel"
#define AB_GROUP_DEFAULT "accel"
#define AB_WHY_MAX 240

enum ab_op {
    AB_HELLO = 1,
    AB_XSK_SOCKET = 2,
    AB_XSK_ATTACH = 3,
    AB_STEER = 4,
    AB_UMEM_REG = 5,
};

enum ab_steer_op {
    AB_STEER_ADD = 1,
    AB_STEER_DEL = 2,
};

struct ab_hello {
    char iface[16];
    uint32_t ip, mask; /* network order */
    uint32_t queues;   /* XSKs the client will bind: queues 0..queues-1 */
    uint32_t keep;     /* ACCEL_XDP_KEEP: leave the program attached after */
    uint64_t umem_bytes;
};

struct ab_xsk {
    uint32_t queue;
};

struct ab_umem {
    uint64_t addr, len; /* in the client's address space */
    uint32_t chunk_size, headroom, flags;
};

/* A STEER the broker does not answer (refusals go to its log): the
 * processes of a family share one connection, and a reply one of them
 * waited for could be read by another. */
#define AB_STEER_NOREPLY 1u

struct ab_steer {
    char map[32];
    uint32_t op; /* enum ab_steer_op */
    uint32_t flags;
    uint32_t klen, vlen;
    uint8_t key[32];
    uint8_t val[16];
};

struct ab_req {
    uint32_t magic, version, op, size; /* size: sizeof(struct ab_req) */
    union {
        struct ab_hello hello;
        struct ab_xsk xsk;
        struct ab_steer steer;
        struct ab_umem umem;
    } u;
};

struct ab_rep {
    uint32_t magic;
    int32_t status; /* 0 or -errno */
    char why[AB_WHY_MAX];
};

/* Room for the one fd a message carries. */
#define AB_CBUF_SIZE CMSG_SPACE(sizeof(int))

/* Attach fd to mh (SCM_RIGHTS), its control data in cbuf. */
static inline void
ab_msg_put_fd(struct msghdr *mh, char cbuf[AB_CBUF_SIZE], int fd)
{
    struct cmsghdr *cm;

    memset(cbuf, 0, AB_CBUF_SIZE);
    mh->msg_control = cbuf;
    mh->msg_controllen = AB_CBUF_SIZE;
    cm = CMSG_FIRSTHDR(mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
}

/* The fd a received message carried, or -1. */
static inline int
ab_msg_get_fd(struct msghdr *mh)
{
    int fd = -1;

    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL;
         cm = CMSG_NXTHDR(mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof(int));
    return fd;
}

#endif /* ACCEL_RT_BROKER_PROTO_H */
