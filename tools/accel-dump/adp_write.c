/*
 * pcap and pcapng writers (adp_write.h), in the host's byte order (the
 * readers detect it from the magic). pcap: the nanosecond variant of the
 * classic format, a 24-byte header and a 16-byte header per frame.
 * pcapng (draft-ietf-opsawg-pcapng): a Section Header Block, one
 * Interface Description Block with if_tsresol 9 (nanoseconds), an
 * Enhanced Packet Block per frame with epb_flags giving the direction
 * and, when the stack dropped the frame, an opt_comment saying why, and
 * at the end an Interface Statistics Block with the ring's drops.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "adp_write.h"

/* pcapng block types and option codes. */
#define NG_SHB 0x0A0D0D0Au
#define NG_IDB 1u
#define NG_ISB 5u
#define NG_EPB 6u
#define NG_BYTE_ORDER 0x1A2B3C4Du
#define OPT_END 0
#define OPT_COMMENT 1
#define SHB_USERAPPL 4
#define IF_NAME 2
#define IF_DESCRIPTION 3
#define IF_TSRESOL 9
#define EPB_FLAGS 2
#define EPB_FLAG_INBOUND 1u
#define EPB_FLAG_OUTBOUND 2u
#define ISB_STARTTIME 2
#define ISB_ENDTIME 3
#define ISB_FILTERACCEPT 6
#define ISB_OSDROP 7
#define ISB_USRDELIV 8

/* The options of one block: every block here needs well under this. */
struct opts {
    uint8_t b[512];
    uint32_t n;
};

static const uint8_t zeros[8];

static uint32_t
pad4(uint32_t n)
{
    return (n + 3u) & ~3u;
}

/* Append option code with len bytes of v (cut to fit), padded to 4. */
static void
opt_add(struct opts *o, uint16_t code, const void *v, size_t len)
{
    uint16_t l16;

    if (len > sizeof(o->b) - o->n - 8u) /* room for it and opt_endofopt */
        len = sizeof(o->b) - o->n - 8u;
    l16 = (uint16_t)len;
    memcpy(o->b + o->n, &code, 2);
    memcpy(o->b + o->n + 2, &l16, 2);
    memcpy(o->b + o->n + 4, v, len);
    memset(o->b + o->n + 4 + len, 0, pad4(l16) - len);
    o->n += 4u + pad4(l16);
}

static void
opt_str(struct opts *o, uint16_t code, const char *s)
{
    if (s != NULL && s[0] != '\0')
        opt_add(o, code, s, strlen(s));
}

static void
opt_u64(struct opts *o, uint16_t code, uint64_t v)
{
    opt_add(o, code, &v, sizeof(v));
}

/* A timestamp as pcapng splits it: the high 32 bits, then the low ones. */
static void
opt_ts(struct opts *o, uint16_t code, uint64_t ns)
{
    uint32_t t[2] = {(uint32_t)(ns >> 32), (uint32_t)ns};

    opt_add(o, code, t, sizeof(t));
}

static void
opt_end(struct opts *o)
{
    if (o->n == 0)
        return; /* no options: no end marker either */
    memset(o->b + o->n, 0, 4);
    o->n += 4;
}

static int
put(struct adp_writer *w, const void *p, size_t n)
{
    if (n == 0 || fwrite(p, 1, n, w->f) == n)
        return 0;
    return errno != 0 ? -errno : -EIO;
}

/* One block: type, total length, body, data (padded), options, length. */
static int
block(struct adp_writer *w, uint32_t type, const void *body, uint32_t blen,
      const void *data, uint32_t dlen, const struct opts *o)
{
    uint32_t total = 12u + blen + pad4(dlen) + o->n;
    uint32_t head[2] = {type, total};
    int rc;

    errno = 0;
    if ((rc = put(w, head, sizeof(head))) != 0 ||
        (rc = put(w, body, blen)) != 0 || (rc = put(w, data, dlen)) != 0 ||
        (rc = put(w, zeros, pad4(dlen) - dlen)) != 0 ||
        (rc = put(w, o->b, o->n)) != 0 || (rc = put(w, &total, 4)) != 0)
        return rc;
    return 0;
}

const char *
adp_drop_text(uint8_t drop)
{
    switch (drop) {
    case BASE_SR_CAP_KEPT:
        return NULL;
    case BASE_SR_CAP_DROP_STACK:
        return "dropped by the stack (rx_drop_stack)";
    case BASE_SR_CAP_DROP_NOBUF:
        return "dropped: no stack memory (rx_drop_nobuf)";
    case BASE_SR_CAP_DROP_TXBUF:
        return "dropped: no mbuf to send it (tx_drop_nombuf)";
    case BASE_SR_CAP_DROP_PORT:
        return "dropped before the stack: the port flagged a bad checksum, "
               "or a chained mbuf (rx_drop_stack)";
    case BASE_SR_CAP_DROP_SHARE:
        return "dropped before the stack: for another process of the "
               "family, whose ring was full or which could not take it "
               "(share_drop_*)";
    default:
        return "dropped (a reason this accel-dump does not know)";
    }
}

int
adp_write_begin(struct adp_writer *w, const char *ifname, const char *desc)
{
    struct opts o = {.n = 0};

    if (w->fmt == ADP_PCAP) {
        struct {
            uint32_t magic;
            uint16_t major, minor;
            int32_t thiszone;
            uint32_t sigfigs, snaplen, linktype;
        } hdr = {ADP_PCAP_MAGIC_NS,    2, 4, 0, 0, w->snaplen,
                 ADP_LINKTYPE_ETHERNET};

        errno = 0;
        return put(w, &hdr, sizeof(hdr));
    }

    struct {
        uint32_t bom;
        uint16_t major, minor;
        int64_t section_len;
    } shb = {NG_BYTE_ORDER, 1, 0, -1};
    struct {
        uint16_t linktype, reserved;
        uint32_t snaplen;
    } idb = {ADP_LINKTYPE_ETHERNET, 0, w->snaplen};
    uint8_t tsresol = 9; /* 10^-9 s */
    int rc;

    opt_str(&o, SHB_USERAPPL, "accel-dump");
    opt_end(&o);
    rc = block(w, NG_SHB, &shb, sizeof(shb), NULL, 0, &o);
    if (rc != 0)
        return rc;
    o.n = 0;
    opt_str(&o, IF_NAME, ifname);
    opt_str(&o, IF_DESCRIPTION, desc);
    opt_add(&o, IF_TSRESOL, &tsresol, 1);
    opt_end(&o);
    return block(w, NG_IDB, &idb, sizeof(idb), NULL, 0, &o);
}

int
adp_write_frame(struct adp_writer *w, const struct adp_frame *fr)
{
    struct opts o = {.n = 0};
    const char *why;

    if (w->fmt == ADP_PCAP) {
        uint32_t rec[4] = {(uint32_t)(fr->ts_ns / 1000000000u),
                           (uint32_t)(fr->ts_ns % 1000000000u), fr->caplen,
                           fr->origlen};
        int rc;

        errno = 0;
        if ((rc = put(w, rec, sizeof(rec))) != 0)
            return rc;
        return put(w, fr->data, fr->caplen);
    }

    uint32_t epb[5] = {0, (uint32_t)(fr->ts_ns >> 32), (uint32_t)fr->ts_ns,
                       fr->caplen, fr->origlen};
    uint32_t flags = fr->dir == BASE_SR_CAP_RX   ? EPB_FLAG_INBOUND
                     : fr->dir == BASE_SR_CAP_TX ? EPB_FLAG_OUTBOUND
                                                 : 0;
    char comment[256];

    if (flags != 0)
        opt_add(&o, EPB_FLAGS, &flags, sizeof(flags));
    why = adp_drop_text(fr->drop);
    if (why != NULL) {
        snprintf(comment, sizeof(comment), "accel: %s", why);
        opt_str(&o, OPT_COMMENT, comment);
    }
    opt_end(&o);
    return block(w, NG_EPB, epb, sizeof(epb), fr->data, fr->caplen, &o);
}

int
adp_write_end(struct adp_writer *w, const struct adp_write_stats *st)
{
    if (w->fmt == ADP_PCAPNG) {
        struct opts o = {.n = 0};
        uint32_t isb[3] = {0, (uint32_t)(st->end_ns >> 32),
                           (uint32_t)st->end_ns};
        int rc;

        opt_ts(&o, ISB_STARTTIME, st->start_ns);
        opt_ts(&o, ISB_ENDTIME, st->end_ns);
        opt_u64(&o, ISB_FILTERACCEPT, st->accepted);
        opt_u64(&o, ISB_OSDROP, st->ring_drops);
        opt_u64(&o, ISB_USRDELIV, st->written);
        opt_str(&o, OPT_COMMENT,
                "accel: isb_osdrop counts the frames the capture ring had "
                "no room for (the data path did not wait)");
        opt_end(&o);
        rc = block(w, NG_ISB, isb, sizeof(isb), NULL, 0, &o);
        if (rc != 0)
            return rc;
    }
    errno = 0;
    if (fflush(w->f) != 0)
        return errno != 0 ? -errno : -EIO;
    return 0;
}
