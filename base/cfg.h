/*
 * Configuration: the ACCEL_* options of cfg_options.def, read once from the
 * environment and the ACCEL_PROFILE file, range-checked, then immutable.
 */
#ifndef ACCEL_BASE_CFG_H
#define ACCEL_BASE_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BASE_CFG_STR_MAX 256

struct base_cfg {
#define BASE_OPT_TYPE_u32 uint32_t
#define BASE_OPT_TYPE_u32w uint32_t
#define BASE_OPT_TYPE_bool bool
#define BASE_OPT_TYPE_str char *
#define BASE_OPT_TYPE_enum int
#define BASE_OPT(NAME, field, type, def, min, max, doc)                        \
    BASE_OPT_TYPE_##type field;
#include "cfg_options.def"
#undef BASE_OPT
    /* Derived from ip/gateway/mac by base_cfg_parse (network byte order). */
    uint32_t ip_addr, ip_mask, gw_addr;
    /* The kernel holds ip_addr on ACCEL_IFACE too (cfg_iface.c, at load;
     * ACCEL_IP may have come from there). */
    bool ip_shared;
    uint8_t mac_addr[6];
    bool mac_set;
    /* Derived from ip6/gateway6 (cfg_ip6.c); has_*: the option is set.
     * ip6_addr is a global or unique local unicast address, never ::, ::1,
     * multicast, IPv4-mapped or link-local; ip6_prefix is 1..128. gw6_addr
     * is a fe80::/64 address or one inside ip6_addr/ip6_prefix (not
     * ip6_addr); has_gw6 implies has_ip6. */
    struct in6_addr ip6_addr, gw6_addr;
    uint8_t ip6_prefix;
    bool has_ip6, has_gw6;
    /* The kernel holds ip6_addr on ACCEL_IFACE too (cfg_iface.c). */
    bool ip6_shared;
};

/** The value of a u32w option set to its word (or left at it): "inherit",
 *  "none", ... (see cfg_options.def). Outside every option's range. */
#define BASE_CFG_WORD UINT32_MAX

/** v, or dflt when v is BASE_CFG_WORD (an "inherit" option left unset). */
static inline uint32_t
base_cfg_or(uint32_t v, uint32_t dflt)
{
    return v == BASE_CFG_WORD ? dflt : v;
}

/** The interface's own addresses (cfg_iface.c): ACCEL_IP from
 *  ACCEL_IFACE's first IPv4 address when unset, ip_shared (the kernel
 *  holds ACCEL_IP there too), ACCEL_GATEWAY from the kernel's default
 *  route through the interface when shared and unset. Reads the system;
 *  called at load, not by base_cfg_parse. A line for the log goes to
 *  note (empty: nothing to say). 0 or -errno. */
int base_cfg_iface_addrs(struct base_cfg *cfg, char *note, size_t notelen);

/** The process configuration (valid after base_cfg_load). */
extern struct base_cfg base_cfg;

/**
 * Parse the configuration from an environment array (NULL-terminated
 * "NAME=value" strings) into *out. On error returns -EINVAL and writes one
 * line naming the variable and the fix into err. Unknown ACCEL_* names are
 * reported through warn (may be NULL), one call per name.
 */
int base_cfg_parse(char *const *envp, struct base_cfg *out, char *err,
                   size_t errlen, void (*warn)(const char *line));

/** Parse environ into base_cfg once (thread-safe). 0 or -EINVAL (logged). */
int base_cfg_load(void);

/** Write every option with its type, default, range and doc to fd. */
void base_cfg_list_options(int fd);

/* ---- additive (runtime work) -------------------------------------------- */

/** Free the strdup'd str options of *cfg and zero them (safe twice). */
void base_cfg_free(struct base_cfg *cfg);

/** Write the effective configuration, one "NAME=value" line per option,
 *  to fd (no stdio). */
void base_cfg_write_effective(int fd, const struct base_cfg *cfg);

/** The word of an enum option's value, e.g. base_cfg_enum_word("ACCEL_DRIVER",
 *  base_cfg.driver) -> "auto"; "?" when out of range or not an enum. */
const char *base_cfg_enum_word(const char *name, int value);

/* ---- profiles and accel-run --explain ----------------------------------- */

/** Where an option's effective value came from. */
enum base_cfg_source {
    BASE_CFG_SRC_DEFAULT = 0, /* cfg_options.def's default */
    BASE_CFG_SRC_PROFILE,     /* a line of the ACCEL_PROFILE file */
    BASE_CFG_SRC_ENV,         /* the environment */
    BASE_CFG_SRC_FORCED,      /* the profile, over the environment's value
                               (ACCEL_PROFILE_FORCE=1) */
};

/**
 * Check the profile file at path on its own: every line is blank, a
 * # comment or NAME=VALUE with a known option (not ACCEL_PROFILE*), set
 * once, to a valid value. 0, or -EINVAL / -errno with one line in err:
 * "PATH:LINE: ..." (or "PATH: ..." when the file cannot be read).
 */
int base_cfg_profile_check(const char *path, char *err, size_t errlen);

/**
 * Parse envp as base_cfg_parse does (profile included), then write one line
 * per option of cfg_options.def to fd: "NAME=value", padded, and where the
 * value came from: "default", "environment", "profile NAME (PATH:LINE)" or
 * "forced profile NAME (PATH:LINE), over environment NAME=value". Returns
 * base_cfg_parse's result; on an error only err is written.
 */
int base_cfg_explain(char *const *envp, int fd, char *err, size_t errlen);

/* Enum values, in the order of the words in cfg_options.def. */
enum {
    BASE_DRIVER_AUTO = 0,
    BASE_DRIVER_AF_XDP = 1,
    BASE_DRIVER_AF_PACKET = 2
};
enum { BASE_HUGE_AUTO = 0, BASE_HUGE_ON = 1, BASE_HUGE_OFF = 2 };

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_CFG_H */
