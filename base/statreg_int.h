/* Between statreg.c and statreg_cap.c. */
#ifndef ACCEL_BASE_STATREG_INT_H
#define ACCEL_BASE_STATREG_INT_H

#include <stdint.h>

#include "statreg_layout.h"

/** This process's region, or NULL. */
struct base_sr_hdr *base_sr__hdr(void);
/** At each snapshot tick: start or stop the capture as cap_on says. */
void base_sr__cap_tick(struct base_sr_hdr *h, uint64_t now_ns);
/** The region goes away (fork child, exit): no more records. */
void base_sr__cap_stop(void);

#endif
