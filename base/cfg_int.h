/*
 * Shared between the files of the configuration parser (cfg.c, cfg_ip6.c),
 * not for other modules: the derivations of option values into binary
 * fields of struct base_cfg. Each returns 0, or -EINVAL with one line in
 * err naming the variable and the fix.
 */
#ifndef ACCEL_BASE_CFG_INT_H
#define ACCEL_BASE_CFG_INT_H

#include <stddef.h>

#include "cfg.h"

/** One error line into err (may be NULL or errlen 0: nothing written). */
void base__cfg_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** ACCEL_IP6 (cfg->ip6, not empty) -> ip6_addr, ip6_prefix, has_ip6. */
int base__cfg_derive_ip6(struct base_cfg *cfg, char *err, size_t errlen);

/** ACCEL_GATEWAY6 (cfg->gateway6, not empty; after ACCEL_IP6) -> gw6_addr,
 *  has_gw6. */
int base__cfg_derive_gateway6(struct base_cfg *cfg, char *err, size_t errlen);

#endif /* ACCEL_BASE_CFG_INT_H */
