/*
 * Configuration: the ACCEL_* options of cfg_options.def, read once from the
 * environment (and, later, a profile), range-checked, then immutable.
 */
#ifndef ACCEL_RT_CFG_H
#define ACCEL_RT_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_CFG_STR_MAX 256

struct rt_cfg {
#define RT_OPT_TYPE_u32 uint32_t
#define RT_OPT_TYPE_bool bool
#define RT_OPT_TYPE_str char *
#define RT_OPT_TYPE_enum int
#define RT_OPT(NAME, field, type, def, min, max, doc) RT_OPT_TYPE_##type field;
#include "cfg_options.def"
#undef RT_OPT
    /* Derived from ip/gateway/mac by rt_cfg_parse (network byte order). */
    uint32_t ip_addr, ip_mask, gw_addr;
    uint8_t mac_addr[6];
    bool mac_set;
};

/** The process configuration (valid after rt_cfg_load). */
extern struct rt_cfg rt_cfg;

/**
 * Parse the configuration from an environment array (NULL-terminated
 * "NAME=value" strings) into *out. On error returns -EINVAL and writes one
 * line naming the variable and the fix into err. Unknown ACCEL_* names are
 * reported through warn (may be NULL), one call per name.
 */
int rt_cfg_parse(char *const *envp, struct rt_cfg *out, char *err,
                 size_t errlen, void (*warn)(const char *line));

/** Parse environ into rt_cfg once (thread-safe). 0 or -EINVAL (logged). */
int rt_cfg_load(void);

/** Write every option with its type, default, range and doc to fd. */
void rt_cfg_list_options(int fd);

/* ---- additive (runtime work) -------------------------------------------- */

/** Free the strdup'd str options of *cfg and zero them (safe twice). */
void rt_cfg_free(struct rt_cfg *cfg);

/** Write the effective configuration, one "NAME=value" line per option,
 *  to fd (no stdio). */
void rt_cfg_write_effective(int fd, const struct rt_cfg *cfg);

/** The word of an enum option's value, e.g. rt_cfg_enum_word("ACCEL_DRIVER",
 *  rt_cfg.driver) -> "auto"; "?" when out of range or not an enum. */
const char *rt_cfg_enum_word(const char *name, int value);

/* Enum values, in the order of the words in cfg_options.def. */
enum { RT_DRIVER_AUTO = 0, RT_DRIVER_AF_XDP = 1, RT_DRIVER_AF_PACKET = 2 };
enum { RT_HUGE_AUTO = 0, RT_HUGE_ON = 1, RT_HUGE_OFF = 2 };

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RT_CFG_H */
