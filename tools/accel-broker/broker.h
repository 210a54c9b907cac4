/*
 * accel-broker: what main.c (arguments, the socket) and serve.c (the
 * clients and their requests) share.
 */
#ifndef ACCEL_BROKER_H
#define ACCEL_BROKER_H

#include <stdbool.h>

#include "policy.h"

#define ABR_MAX_CLIENTS 64

/* One line on stderr, "accel-broker: ...". */
void abr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Serve the listening socket until *stop is set (a signal). Every client's
 * program is detached on the way out. */
int abr_serve(int lfd, const struct abp_conf *conf, volatile bool *stop);

#endif /* ACCEL_BROKER_H */
