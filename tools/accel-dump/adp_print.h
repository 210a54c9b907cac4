/*
 * accel-dump's own one-line printer (adp_print.c), used when tcpdump is
 * not installed: time, direction, length and, when the frame parses, a
 * tcpdump-like summary of its addresses, ports and protocol; a frame the
 * stack dropped says so at the end of its line.
 */
#ifndef ACCEL_TOOLS_ADP_PRINT_H
#define ACCEL_TOOLS_ADP_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "adp_ring.h"

/** The line for fr, without a newline, into buf (always terminated). */
void adp_print_line(const struct adp_frame *fr, char *buf, size_t len);

/** Print the line and a newline to f. 0, or -errno. */
int adp_print_frame(FILE *f, const struct adp_frame *fr);

#endif /* ACCEL_TOOLS_ADP_PRINT_H */
