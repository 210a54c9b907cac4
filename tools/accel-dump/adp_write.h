/*
 * The capture files accel-dump writes (adp_write.c): classic pcap with
 * nanosecond timestamps, which every tcpdump and tshark reads, and pcapng,
 * which also carries each frame's direction and, for a frame the stack
 * dropped, a comment saying why. Both on a stdio stream; Ethernet only.
 */
#ifndef ACCEL_TOOLS_ADP_WRITE_H
#define ACCEL_TOOLS_ADP_WRITE_H

#include <stdint.h>
#include <stdio.h>

#include "adp_ring.h"

/* pcap's magic for nanosecond timestamps, and the Ethernet link type. */
#define ADP_PCAP_MAGIC_NS 0xa1b23c4du
#define ADP_LINKTYPE_ETHERNET 1u

enum adp_format {
    ADP_PCAP,
    ADP_PCAPNG,
};

struct adp_writer {
    FILE *f;
    enum adp_format fmt;
    uint32_t snaplen; /* the file's; frames are cut to it by the caller */
};

/* The summary a pcapng file ends with (an Interface Statistics Block). */
struct adp_write_stats {
    uint64_t start_ns, end_ns; /* CLOCK_REALTIME */
    uint64_t ring_drops;       /* lost: the ring was full */
    uint64_t accepted;         /* passed the filter */
    uint64_t written;
};

/**
 * Write the file header: pcap's, or pcapng's section header and one
 * interface (if_name ifname, if_description desc, both may be NULL;
 * nanosecond resolution).
 * @return 0, or -errno.
 */
int adp_write_begin(struct adp_writer *w, const char *ifname, const char *desc);

/** One frame; pcapng adds its direction and drop comment. 0 or -errno. */
int adp_write_frame(struct adp_writer *w, const struct adp_frame *fr);

/** pcapng: the statistics block; pcap: nothing. Then flush. 0 or -errno. */
int adp_write_end(struct adp_writer *w, const struct adp_write_stats *st);

/**
 * Why the stack dropped a frame, in words and with the counter that
 * counted it ("dropped by the stack (rx_drop_stack)"); NULL for a frame
 * not dropped. An unknown mark (a newer library) gets a generic text.
 */
const char *adp_drop_text(uint8_t drop);

#endif /* ACCEL_TOOLS_ADP_WRITE_H */
