/*
 * Configuration parser. The table of options is generated from
 * cfg_options.def (one BASE_OPT row per ACCEL_* variable): defaults, types,
 * ranges and docs all come from that one list. base_cfg_parse() reads a
 * NULL-terminated environment array, applies defaults, then the profile
 * file named by ACCEL_PROFILE, then the environment (see "profiles"
 * below), range-checks every value, warns about unknown ACCEL_* names (with
 * the nearest known name as a suggestion) and derives the binary forms of
 * ACCEL_IP, ACCEL_GATEWAY and ACCEL_MAC (ACCEL_IP6 and ACCEL_GATEWAY6 in
 * cfg_ip6.c; ACCEL_TEST_IMPAIR is checked with impair_spec.c's parser). A
 * bad value gives -EINVAL and one line naming the variable, the bad value
 * and the fix. base_cfg_load() does this once for `environ` into the
 * process-wide base_cfg; base_cfg_explain() writes every setting with where
 * it came from (accel-run --explain). Nothing here uses stdio: output goes
 * through raw write(2) so it works inside the preloaded library.
 */
#include "cfg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfg_int.h"
#include "impair_spec.h"
#include "log.h"

extern char **environ;

struct base_cfg base_cfg;

enum opt_type { T_u32, T_u32w, T_bool, T_str, T_enum };

struct opt_desc {
    const char *name;
    enum opt_type type;
    size_t off;
    const char *def_str; /* bool, str, enum; u32w: its word */
    uint32_t def_u32;
    uint32_t min, max; /* u32, u32w */
    const char *words; /* enum: "a|b|c" */
    const char *doc;
};

#define OPT_DEF_u32(d) .def_u32 = (d)
#define OPT_DEF_u32w(d) .def_str = (d)
#define OPT_DEF_bool(d) .def_str = (d)
#define OPT_DEF_str(d) .def_str = (d)
#define OPT_DEF_enum(d) .def_str = (d)
#define OPT_RANGE_u32(lo, hi) .min = (lo), .max = (hi)
#define OPT_RANGE_u32w(lo, hi) .min = (lo), .max = (hi)
#define OPT_RANGE_bool(lo, hi) .min = (lo), .max = (hi)
#define OPT_RANGE_str(lo, hi) .min = (lo), .max = (hi)
#define OPT_RANGE_enum(lo, hi) .words = (lo), .max = (hi)

static const struct opt_desc opts[] = {
#define BASE_OPT(NAME, fld, ty, def, lo, hi, docstr)                           \
    {.name = #NAME,                                                            \
     .type = T_##ty,                                                           \
     .off = offsetof(struct base_cfg, fld),                                    \
     OPT_DEF_##ty(def),                                                        \
     OPT_RANGE_##ty(lo, hi),                                                   \
     .doc = docstr},
#include "cfg_options.def"
#undef BASE_OPT
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

/* Raw write of a whole buffer (no stdio, not the interposed write). */
static void
put(int fd, const char *s, size_t n)
{
    while (n > 0) {
        long w = syscall(SYS_write, fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void putf(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
putf(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    put(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void
base__cfg_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static const struct opt_desc *
find_opt(const char *name, size_t len)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (strlen(opts[i].name) == len && memcmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

/* Index of word in "a|b|c" (case-insensitive), or -1. */
static int
enum_index(const char *words, const char *val)
{
    size_t vlen = strlen(val);
    int idx = 0;

    for (const char *w = words; *w != '\0'; idx++) {
        const char *bar = strchr(w, '|');
        size_t wlen = bar ? (size_t)(bar - w) : strlen(w);

        if (wlen == vlen && strncasecmp(w, val, wlen) == 0)
            return idx;
        if (bar == NULL)
            break;
        w = bar + 1;
    }
    return -1;
}

/* Copy word number idx of "a|b|c" into out; "?" if none. */
static const char *
enum_word(const char *words, int idx, char *out, size_t n)
{
    const char *w = words;

    for (int i = 0; i < idx && w != NULL; i++) {
        w = strchr(w, '|');
        if (w != NULL)
            w++;
    }
    if (w == NULL || idx < 0) {
        snprintf(out, n, "?");
        return out;
    }
    const char *bar = strchr(w, '|');
    size_t wlen = bar ? (size_t)(bar - w) : strlen(w);
    snprintf(out, n, "%.*s", (int)wlen, w);
    return out;
}

static int
parse_bool(const char *v)
{
    static const char *const yes[] = {"1", "yes", "on", "true"};
    static const char *const no[] = {"0", "no", "off", "false"};

    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return 1;
        if (strcasecmp(v, no[i]) == 0)
            return 0;
    }
    return -1;
}

/* Strict decimal: digits only, no sign, no spaces, no overflow. */
static int
parse_u32(const char *v, uint32_t *out)
{
    uint64_t n = 0;

    if (*v == '\0')
        return -1;
    for (; *v != '\0'; v++) {
        if (*v < '0' || *v > '9')
            return -1;
        n = n * 10 + (uint64_t)(*v - '0');
        if (n > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)n;
    return 0;
}

/* Store value v of option o into cfg. 0 or -EINVAL with err set. */
static int
set_opt(const struct opt_desc *o, const char *v, struct base_cfg *cfg,
        char *err, size_t errlen)
{
    void *field = (char *)cfg + o->off;
    uint32_t u;
    int b, idx;
    char *copy;

    switch (o->type) {
    case T_u32w:
        if (strcasecmp(v, o->def_str) == 0) {
            *(uint32_t *)field = BASE_CFG_WORD;
            return 0;
        }
        if (parse_u32(v, &u) != 0) {
            base__cfg_seterr(
                err, errlen,
                "%s=%s: not a number; set %s to a whole number from %u to "
                "%u, or to %s",
                o->name, v, o->name, o->min, o->max, o->def_str);
            return -EINVAL;
        }
        if (u < o->min || u > o->max) {
            base__cfg_seterr(
                err, errlen,
                "%s=%s: out of range; set %s to a number from %u to %u, "
                "or to %s",
                o->name, v, o->name, o->min, o->max, o->def_str);
            return -EINVAL;
        }
        *(uint32_t *)field = u;
        return 0;
    case T_u32:
        if (parse_u32(v, &u) != 0) {
            base__cfg_seterr(
                err, errlen,
                "%s=%s: not a number; set %s to a whole number from %u to %u",
                o->name, v, o->name, o->min, o->max);
            return -EINVAL;
        }
        if (u < o->min || u > o->max) {
            base__cfg_seterr(
                err, errlen,
                "%s=%s: out of range; set %s to a number from %u to %u",
                o->name, v, o->name, o->min, o->max);
            return -EINVAL;
        }
        *(uint32_t *)field = u;
        return 0;
    case T_bool:
        b = parse_bool(v);
        if (b < 0) {
            base__cfg_seterr(
                err, errlen,
                "%s=%s: not a boolean; set %s=1 or %s=0 (yes/no, on/off, "
                "true/false also work)",
                o->name, v, o->name, o->name);
            return -EINVAL;
        }
        *(bool *)field = b != 0;
        return 0;
    case T_enum:
        idx = enum_index(o->words, v);
        if (idx < 0) {
            base__cfg_seterr(err, errlen,
                             "%s=%s: not a valid choice; set %s to one of %s",
                             o->name, v, o->name, o->words);
            return -EINVAL;
        }
        *(int *)field = idx;
        return 0;
    case T_str:
        if (strlen(v) >= BASE_CFG_STR_MAX) {
            base__cfg_seterr(
                err, errlen,
                "%s: value too long (%zu bytes); set %s to at most %d "
                "bytes",
                o->name, strlen(v), o->name, BASE_CFG_STR_MAX - 1);
            return -EINVAL;
        }
        copy = strdup(v);
        if (copy == NULL) {
            base__cfg_seterr(err, errlen, "%s: out of memory", o->name);
            return -ENOMEM;
        }
        free(*(char **)field);
        *(char **)field = copy;
        return 0;
    }
    return -EINVAL;
}

/* Levenshtein distance of two short names (capped at 64 characters). */
static unsigned
edit_distance(const char *a, const char *b)
{
    unsigned prev[65], cur[65];
    size_t la = strlen(a), lb = strlen(b);

    if (la > 64 || lb > 64)
        return UINT_MAX;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] =
                sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(unsigned) * (lb + 1));
    }
    return prev[lb];
}

/* The known option nearest to nm (edit distance <= 3), or NULL. */
static const char *
nearest_opt(const char *nm)
{
    const char *best = NULL;
    unsigned bestd = UINT_MAX;

    for (size_t i = 0; i < NOPTS; i++) {
        unsigned d = edit_distance(nm, opts[i].name);
        if (d < bestd) {
            bestd = d;
            best = opts[i].name;
        }
    }
    return bestd <= 3 ? best : NULL;
}

static void
warn_unknown(const char *name, size_t len, void (*warn)(const char *line))
{
    char nm[128], line[256];
    const char *best;

    if (warn == NULL)
        return;
    snprintf(nm, sizeof(nm), "%.*s", (int)len, name);
    best = nearest_opt(nm);
    if (best != NULL)
        snprintf(line, sizeof(line),
                 "unknown variable %s ignored; did you mean %s?", nm, best);
    else
        snprintf(line, sizeof(line),
                 "unknown variable %s ignored; `accel-run --list-options` "
                 "lists the known ones",
                 nm);
    warn(line);
}

/* "a.b.c.d" -> network order; strict dotted quad. */
static int
parse_ip4(const char *s, uint32_t *out)
{
    struct in_addr a;

    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *out = a.s_addr;
    return 0;
}

static bool
ip_is_unicast(uint32_t ip_n)
{
    uint32_t h = ntohl(ip_n);
    uint8_t first = (uint8_t)(h >> 24);

    return h != 0 && first != 127 && first < 224;
}

static int
derive_ip(struct base_cfg *cfg, char *err, size_t errlen)
{
    const char *v = cfg->ip;
    char addr[64];
    const char *slash = strchr(v, '/');
    uint32_t ip = 0, prefix = 0, mask;

    bool ok = slash != NULL && (size_t)(slash - v) < sizeof(addr);

    if (ok) {
        memcpy(addr, v, (size_t)(slash - v));
        addr[slash - v] = '\0';
        ok = parse_ip4(addr, &ip) == 0 && parse_u32(slash + 1, &prefix) == 0 &&
             prefix >= 1 && prefix <= 32;
    }
    if (!ok) {
        base__cfg_seterr(err, errlen,
                         "ACCEL_IP=%s: not an IPv4 address/prefix; set "
                         "ACCEL_IP=a.b.c.d/len (len 1..32), e.g. 10.200.0.2/24",
                         v);
        return -EINVAL;
    }
    mask = prefix == 32 ? 0xffffffffu : htonl(~(0xffffffffu >> prefix));
    if (!ip_is_unicast(ip)) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_IP=%s: not a usable unicast address (0.0.0.0, "
            "loopback, multicast and reserved are refused); set ACCEL_IP "
            "to the stack's own address, e.g. 10.200.0.2/24",
            v);
        return -EINVAL;
    }
    if (prefix <= 30 && ((ip & ~mask) == 0 || (ip | mask) == 0xffffffffu)) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_IP=%s: is the %s address of its subnet; set ACCEL_IP "
            "to a host address inside it",
            v, (ip & ~mask) == 0 ? "network" : "broadcast");
        return -EINVAL;
    }
    cfg->ip_addr = ip;
    cfg->ip_mask = mask;
    return 0;
}

static int
derive_gateway(struct base_cfg *cfg, char *err, size_t errlen)
{
    uint32_t gw;

    if (cfg->ip[0] == '\0') {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_GATEWAY=%s: needs ACCEL_IP; set ACCEL_IP=a.b.c.d/len "
            "too, or unset ACCEL_GATEWAY",
            cfg->gateway);
        return -EINVAL;
    }
    if (parse_ip4(cfg->gateway, &gw) != 0 || !ip_is_unicast(gw)) {
        base__cfg_seterr(err, errlen,
                         "ACCEL_GATEWAY=%s: not an IPv4 unicast address; set "
                         "ACCEL_GATEWAY=a.b.c.d (no prefix) or unset it",
                         cfg->gateway);
        return -EINVAL;
    }
    if ((gw & cfg->ip_mask) != (cfg->ip_addr & cfg->ip_mask) ||
        gw == cfg->ip_addr) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_GATEWAY=%s: not %s; set ACCEL_GATEWAY to a router "
            "address inside %s",
            cfg->gateway,
            gw == cfg->ip_addr ? "another host (it is ACCEL_IP itself)"
                               : "inside ACCEL_IP's subnet",
            cfg->ip);
        return -EINVAL;
    }
    cfg->gw_addr = gw;
    return 0;
}

static int
hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int
derive_mac(struct base_cfg *cfg, char *err, size_t errlen)
{
    const char *s = cfg->mac;
    uint8_t m[6];
    bool ok = strlen(s) == 17;

    for (int i = 0; ok && i < 6; i++) {
        int hi = hexval(s[i * 3]), lo = hexval(s[i * 3 + 1]);
        if (hi < 0 || lo < 0 || (i < 5 && s[i * 3 + 2] != ':'))
            ok = false;
        else
            m[i] = (uint8_t)(hi << 4 | lo);
    }
    if (!ok) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_MAC=%s: not a MAC address; set "
            "ACCEL_MAC=aa:bb:cc:dd:ee:ff or unset it to use the port's",
            s);
        return -EINVAL;
    }
    if ((m[0] & 1) != 0 || (m[0] | m[1] | m[2] | m[3] | m[4] | m[5]) == 0) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_MAC=%s: %s; set a unicast MAC (first byte even), or "
            "unset it to use the port's",
            s, (m[0] & 1) ? "is a multicast address" : "is all zeros");
        return -EINVAL;
    }
    memcpy(cfg->mac_addr, m, 6);
    cfg->mac_set = true;
    return 0;
}

/* ACCEL_TEST_IMPAIR: checked here, parsed again when the data path
 * starts (impair_port.c). */
static int
check_impair(const struct base_cfg *cfg, char *err, size_t errlen)
{
    struct base_impair_spec sp;

    return base_impair_parse(cfg->test_impair, &sp, err, errlen);
}

static void
set_defaults(struct base_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < NOPTS; i++) {
        const struct opt_desc *o = &opts[i];
        if (o->type == T_u32)
            *(uint32_t *)((char *)cfg + o->off) = o->def_u32;
        else
            (void)set_opt(o, o->def_str, cfg, NULL, 0);
    }
}

void
base_cfg_free(struct base_cfg *cfg)
{
    for (size_t i = 0; i < NOPTS; i++) {
        if (opts[i].type == T_str) {
            char **p = (char **)((char *)cfg + opts[i].off);
            free(*p);
            *p = NULL;
        }
    }
}

/* ---- profiles ------------------------------------------------------------
 * A profile is a text file of NAME=VALUE lines (blank lines and lines whose
 * first non-blank character is '#' are ignored; blanks around NAME and
 * VALUE are dropped; a VALUE in matching double or single quotes loses
 * them). Every NAME must be a known option other than ACCEL_PROFILE*, set
 * once, to a valid value: a profile is written by hand, so a typo is an
 * error naming the file and line, never a silent default. ACCEL_PROFILE
 * names the file (accel-run resolves profile names to it); its values sit
 * between the built-in defaults and the environment, or above the
 * environment with ACCEL_PROFILE_FORCE=1. The file is read with raw
 * system calls, as the library's wrappers must not be re-entered.
 */

/* Index of every option in opts[], by name: OPT_ACCEL_PROFILE, ... */
enum opt_index {
#define BASE_OPT(NAME, ...) OPT_##NAME,
#include "cfg_options.def"
#undef BASE_OPT
};

#define PROFILE_MAX_BYTES (64 * 1024)
#define PROFILE_MAX_LINE 1024

/* Where an option's value came from. */
struct origin {
    enum base_cfg_source src;
    unsigned line;       /* PROFILE, FORCED: the line of the profile */
    const char *env_val; /* FORCED: the environment value it overrode */
};

/* A profile file read and checked: values point into buf. */
struct profile {
    char *buf;
    size_t n;
    struct {
        size_t opt;
        unsigned line;
        const char *val;
    } e[NOPTS];
};

static void explain_line(size_t idx, const struct origin *g,
                         const struct base_cfg *cfg, char *out, size_t n);

/* The whole file at path, NUL-terminated, in a malloc'd *out. */
static int
read_profile_file(const char *path, char **out, char *err, size_t errlen)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    size_t len = 0;
    char *buf;
    int e = 0;

    *out = NULL;
    if (fd < 0) {
        e = errno;
        base__cfg_seterr(err, errlen,
                         "%s: cannot read the profile: %s; give the path of a "
                         "readable file",
                         path, strerror(e));
        return -e;
    }
    buf = malloc(PROFILE_MAX_BYTES + 1);
    if (buf == NULL) {
        syscall(SYS_close, fd);
        base__cfg_seterr(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    while (len <= PROFILE_MAX_BYTES) {
        long r = syscall(SYS_read, fd, buf + len, PROFILE_MAX_BYTES + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            e = errno;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    syscall(SYS_close, fd);
    if (e != 0) {
        base__cfg_seterr(err, errlen, "%s: cannot read the profile: %s", path,
                         strerror(e));
    } else if (len > PROFILE_MAX_BYTES) {
        e = EFBIG;
        base__cfg_seterr(
            err, errlen,
            "%s: larger than %d KiB; a profile holds NAME=VALUE lines", path,
            PROFILE_MAX_BYTES / 1024);
    } else if (memchr(buf, '\0', len) != NULL) {
        e = EINVAL;
        base__cfg_seterr(
            err, errlen,
            "%s: not a text file; a profile holds NAME=VALUE lines", path);
    }
    if (e != 0) {
        free(buf);
        return -e;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

static char *
skip_blank(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

static void
trim_end(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

/* One line's error: "path:line: ..." into err, -EINVAL. */
static int line_err(char *err, size_t errlen, const char *path, unsigned line,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int
line_err(char *err, size_t errlen, const char *path, unsigned line,
         const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    base__cfg_seterr(err, errlen, "%s:%u: %s", path, line, msg);
    return -EINVAL;
}

/* Read and check the profile at path into *p (p->buf to free). Every value
 * is checked here, so applying them afterwards cannot fail. */
static int
read_profile(const char *path, struct profile *p, char *err, size_t errlen)
{
    unsigned first[NOPTS], lineno = 0;
    struct base_cfg scratch;
    char *line, *next;
    int rc;

    p->n = 0;
    rc = read_profile_file(path, &p->buf, err, errlen);
    if (rc != 0)
        return rc;
    memset(first, 0, sizeof(first));
    set_defaults(&scratch);
    for (line = p->buf; rc == 0 && line != NULL; line = next) {
        char msg[400], *key, *val, *eq;
        const struct opt_desc *o;
        size_t idx, vlen;

        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        lineno++;
        if (strlen(line) > PROFILE_MAX_LINE) {
            rc = line_err(err, errlen, path, lineno,
                          "line longer than %d characters", PROFILE_MAX_LINE);
            break;
        }
        key = skip_blank(line);
        trim_end(key);
        if (*key == '\0' || *key == '#')
            continue;
        eq = strchr(key, '=');
        if (eq == NULL) {
            rc =
                line_err(err, errlen, path, lineno,
                         "expected NAME=VALUE or a # comment, got \"%s\"", key);
            break;
        }
        *eq = '\0';
        trim_end(key);
        val = skip_blank(eq + 1);
        vlen = strlen(val);
        if (vlen >= 2 && (val[0] == '"' || val[0] == '\'') &&
            val[vlen - 1] == val[0]) {
            val[vlen - 1] = '\0';
            val++;
        }
        o = find_opt(key, strlen(key));
        if (o == NULL) {
            char prefixed[128];
            const char *near;

            snprintf(prefixed, sizeof(prefixed), "ACCEL_%s", key);
            near = find_opt(prefixed, strlen(prefixed)) != NULL
                       ? find_opt(prefixed, strlen(prefixed))->name
                       : nearest_opt(key);
            if (near != NULL)
                rc = line_err(err, errlen, path, lineno,
                              "unknown option %s; did you mean %s?", key, near);
            else
                rc = line_err(err, errlen, path, lineno,
                              "unknown option %s; `accel-run "
                              "--list-options` lists the known ones",
                              key);
            break;
        }
        idx = (size_t)(o - opts);
        if (idx == OPT_ACCEL_PROFILE || idx == OPT_ACCEL_PROFILE_FORCE) {
            rc = line_err(err, errlen, path, lineno,
                          "%s cannot be set in a profile; give it to "
                          "accel-run (--profile, --force-profile)",
                          o->name);
            break;
        }
        if (first[idx] != 0) {
            rc = line_err(err, errlen, path, lineno,
                          "%s is set again (first at line %u); keep one "
                          "line",
                          o->name, first[idx]);
            break;
        }
        if (set_opt(o, val, &scratch, msg, sizeof(msg)) != 0) {
            rc = line_err(err, errlen, path, lineno, "%s", msg);
            break;
        }
        first[idx] = lineno;
        p->e[p->n].opt = idx;
        p->e[p->n].line = lineno;
        p->e[p->n].val = val;
        p->n++;
    }
    base_cfg_free(&scratch);
    if (rc != 0) {
        free(p->buf);
        p->buf = NULL;
        p->n = 0;
    }
    return rc;
}

/*
 * Defaults, then the profile named by ACCEL_PROFILE, then the environment
 * (the first definition of a name wins, as with getenv(3)), except that
 * with ACCEL_PROFILE_FORCE=1 the profile's names keep the profile's value.
 * orig (NOPTS entries, may be NULL) gets where each value came from.
 */
static int
parse_full(char *const *envp, struct base_cfg *out, struct origin *orig,
           char *err, size_t errlen, void (*warn)(const char *line))
{
    const char *envv[NOPTS];
    bool seen[NOPTS], forced[NOPTS];
    struct profile prof = {.buf = NULL, .n = 0};
    int rc = 0;

    memset(envv, 0, sizeof(envv));
    memset(seen, 0, sizeof(seen));
    memset(forced, 0, sizeof(forced));
    set_defaults(out);
    if (orig != NULL)
        memset(orig, 0, sizeof(*orig) * NOPTS);
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    for (size_t k = 0; envp != NULL && envp[k] != NULL; k++) {
        const char *e = envp[k];
        const char *eq = strchr(e, '=');
        const struct opt_desc *o;

        if (strncmp(e, "ACCEL_", 6) != 0 || eq == NULL)
            continue;
        o = find_opt(e, (size_t)(eq - e));
        if (o == NULL)
            warn_unknown(e, (size_t)(eq - e), warn);
        else if (envv[o - opts] == NULL)
            envv[o - opts] = eq + 1;
    }
    if (envv[OPT_ACCEL_PROFILE] != NULL)
        rc = set_opt(&opts[OPT_ACCEL_PROFILE], envv[OPT_ACCEL_PROFILE], out,
                     err, errlen);
    if (rc == 0 && envv[OPT_ACCEL_PROFILE_FORCE] != NULL)
        rc = set_opt(&opts[OPT_ACCEL_PROFILE_FORCE],
                     envv[OPT_ACCEL_PROFILE_FORCE], out, err, errlen);
    if (rc == 0 && out->profile[0] != '\0') {
        if (strchr(out->profile, '/') == NULL) {
            base__cfg_seterr(
                err, errlen,
                "ACCEL_PROFILE=%s: not a path; run the program with "
                "`accel-run --profile %s` (which finds the installed "
                "profile), or set ACCEL_PROFILE to the file's path",
                out->profile, out->profile);
            rc = -EINVAL;
        } else {
            rc = read_profile(out->profile, &prof, err, errlen);
        }
    }
    for (size_t i = 0; rc == 0 && i < prof.n; i++) {
        size_t idx = prof.e[i].opt;

        if (envv[idx] != NULL && !out->profile_force)
            continue;
        rc = set_opt(&opts[idx], prof.e[i].val, out, err, errlen);
        forced[idx] = envv[idx] != NULL;
        if (orig != NULL) {
            orig[idx].src =
                forced[idx] ? BASE_CFG_SRC_FORCED : BASE_CFG_SRC_PROFILE;
            orig[idx].line = prof.e[i].line;
            orig[idx].env_val = envv[idx];
        }
    }
    free(prof.buf);
    /* The environment, in its own order (the first bad value is the one
     * reported). */
    for (size_t k = 0; envp != NULL && envp[k] != NULL; k++) {
        const char *e = envp[k];
        const char *eq = strchr(e, '=');
        const struct opt_desc *o;
        size_t idx;

        if (strncmp(e, "ACCEL_", 6) != 0 || eq == NULL)
            continue;
        o = find_opt(e, (size_t)(eq - e));
        if (o == NULL)
            continue;
        idx = (size_t)(o - opts);
        if (seen[idx] || forced[idx])
            continue;
        seen[idx] = true;
        if (orig != NULL)
            orig[idx].src = BASE_CFG_SRC_ENV;
        if (rc == 0 && idx != OPT_ACCEL_PROFILE &&
            idx != OPT_ACCEL_PROFILE_FORCE)
            rc = set_opt(o, eq + 1, out, err, errlen);
    }
    if (rc == 0 && out->ip[0] != '\0')
        rc = derive_ip(out, err, errlen);
    if (rc == 0 && out->gateway[0] != '\0')
        rc = derive_gateway(out, err, errlen);
    if (rc == 0 && out->ip6[0] != '\0')
        rc = base__cfg_derive_ip6(out, err, errlen);
    if (rc == 0 && out->gateway6[0] != '\0')
        rc = base__cfg_derive_gateway6(out, err, errlen);
    if (rc == 0 && out->mac[0] != '\0')
        rc = derive_mac(out, err, errlen);
    if (rc == 0 && out->test_impair[0] != '\0')
        rc = check_impair(out, err, errlen);
    return rc;
}

int
base_cfg_parse(char *const *envp, struct base_cfg *out, char *err,
               size_t errlen, void (*warn)(const char *line))
{
    return parse_full(envp, out, NULL, err, errlen, warn);
}

/* Not rate-limited: one call site for every warning of the (bounded)
 * configuration, once per process. */
static void
warn_log(const char *line)
{
    BASE_LOG_ALL(BASE_LOG_WARN, "cfg", "%s", line);
}

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_rc;

static void
load(void)
{
    struct origin orig[NOPTS];
    char err[512], line[1024];
    struct base_cfg tmp;

    /* First pass without warnings, to learn the log level and file. */
    if (base_cfg_parse(environ, &tmp, err, sizeof(err), NULL) == 0) {
        base_log_level = tmp.log_level;
        if (tmp.log_file[0] != '\0' && base_log_set_file(tmp.log_file) != 0)
            BASE_WARN("cfg",
                      "ACCEL_LOG_FILE=%s: cannot open; logging to stderr "
                      "instead (check the directory exists and is writable)",
                      tmp.log_file);
    }
    base_cfg_free(&tmp);
    load_rc = parse_full(environ, &base_cfg, orig, err, sizeof(err), warn_log);
    if (load_rc != 0) {
        BASE_ERR("cfg", "%s (the program runs on the kernel stack)", err);
        base_cfg_free(&base_cfg);
        set_defaults(&base_cfg);
        base_log_level = base_cfg.log_level;
        return;
    }
    if (base_cfg_iface_addrs(&base_cfg, line, sizeof(line)) == 0) {
        if (line[0] != '\0')
            BASE_INFO("cfg", "%s", line);
    }
    /* At info level, every setting that is not a default, with its
     * source: the library's side of `accel-run --explain`. */
    for (size_t i = 0; base_log_level >= BASE_LOG_INFO && i < NOPTS; i++) {
        if (orig[i].src != BASE_CFG_SRC_DEFAULT) {
            explain_line(i, &orig[i], &base_cfg, line, sizeof(line));
            BASE_LOG_ALL(BASE_LOG_INFO, "cfg", "%s", line);
        }
    }
}

int
base_cfg_load(void)
{
    pthread_once(&load_once, load);
    return load_rc;
}

static const char *
type_name(enum opt_type t)
{
    switch (t) {
    case T_u32:
    case T_u32w:
        return "number";
    case T_bool:
        return "bool";
    case T_str:
        return "string";
    case T_enum:
        return "choice";
    }
    return "?";
}

void
base_cfg_list_options(int fd)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const struct opt_desc *o = &opts[i];

        putf(fd, "%s (%s", o->name, type_name(o->type));
        if (o->type == T_u32)
            putf(fd, " %u..%u, default %u", o->min, o->max, o->def_u32);
        else if (o->type == T_u32w)
            putf(fd, " %u..%u or %s, default %s", o->min, o->max, o->def_str,
                 o->def_str);
        else if (o->type == T_enum)
            putf(fd, " %s, default %s", o->words, o->def_str);
        else if (o->type == T_bool)
            putf(fd, ", default %s", o->def_str);
        else if (o->def_str[0] != '\0')
            putf(fd, ", default \"%s\"", o->def_str);
        putf(fd, ")\n    %s\n", o->doc);
    }
}

void
base_cfg_write_effective(int fd, const struct base_cfg *cfg)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const struct opt_desc *o = &opts[i];
        const void *field = (const char *)cfg + o->off;
        char w[64];

        switch (o->type) {
        case T_u32:
            putf(fd, "%s=%u\n", o->name, *(const uint32_t *)field);
            break;
        case T_u32w:
            if (*(const uint32_t *)field == BASE_CFG_WORD)
                putf(fd, "%s=%s\n", o->name, o->def_str);
            else
                putf(fd, "%s=%u\n", o->name, *(const uint32_t *)field);
            break;
        case T_bool:
            putf(fd, "%s=%d\n", o->name, *(const bool *)field ? 1 : 0);
            break;
        case T_enum:
            putf(fd, "%s=%s\n", o->name,
                 enum_word(o->words, *(const int *)field, w, sizeof(w)));
            break;
        case T_str: {
            const char *s = *(char *const *)field;
            putf(fd, "%s=%s\n", o->name, s != NULL ? s : "");
            break;
        }
        }
    }
}

const char *
base_cfg_enum_word(const char *name, int value)
{
    static __thread char w[64];
    const struct opt_desc *o = find_opt(name, strlen(name));

    if (o == NULL || o->type != T_enum)
        return "?";
    return enum_word(o->words, value, w, sizeof(w));
}

/* ---- explain ------------------------------------------------------------ */

/* The value of option o in cfg, as NAME= would set it. */
static const char *
format_value(const struct opt_desc *o, const struct base_cfg *cfg, char *buf,
             size_t n)
{
    const void *field = (const char *)cfg + o->off;
    const char *s;

    switch (o->type) {
    case T_u32:
        snprintf(buf, n, "%u", *(const uint32_t *)field);
        break;
    case T_u32w:
        if (*(const uint32_t *)field == BASE_CFG_WORD)
            snprintf(buf, n, "%s", o->def_str);
        else
            snprintf(buf, n, "%u", *(const uint32_t *)field);
        break;
    case T_bool:
        snprintf(buf, n, "%d", *(const bool *)field ? 1 : 0);
        break;
    case T_enum:
        enum_word(o->words, *(const int *)field, buf, n);
        break;
    case T_str:
        s = *(char *const *)field;
        snprintf(buf, n, "%s", s != NULL ? s : "");
        break;
    }
    return buf;
}

/* "latency" for ".../latency.conf". */
static const char *
profile_name(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    size_t len;

    base = base != NULL ? base + 1 : path;
    len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".conf") == 0)
        len -= 5;
    snprintf(buf, n, "%.*s", (int)len, base);
    return buf;
}

/* "NAME=value", padded, then where the value came from. */
static void
explain_line(size_t idx, const struct origin *g, const struct base_cfg *cfg,
             char *out, size_t n)
{
    char val[BASE_CFG_STR_MAX + 8], setting[BASE_CFG_STR_MAX + 80], name[128];
    const char *pname;

    snprintf(setting, sizeof(setting), "%s=%s", opts[idx].name,
             format_value(&opts[idx], cfg, val, sizeof(val)));
    switch (g->src) {
    case BASE_CFG_SRC_DEFAULT:
        snprintf(out, n, "%-36s default", setting);
        break;
    case BASE_CFG_SRC_ENV:
        snprintf(out, n, "%-36s environment", setting);
        break;
    case BASE_CFG_SRC_PROFILE:
        pname = profile_name(cfg->profile, name, sizeof(name));
        snprintf(out, n, "%-36s profile %s (%s:%u)", setting, pname,
                 cfg->profile, g->line);
        break;
    case BASE_CFG_SRC_FORCED:
        pname = profile_name(cfg->profile, name, sizeof(name));
        snprintf(out, n,
                 "%-36s forced profile %s (%s:%u), over environment %s=%.80s",
                 setting, pname, cfg->profile, g->line, opts[idx].name,
                 g->env_val != NULL ? g->env_val : "");
        break;
    }
}

int
base_cfg_explain(char *const *envp, int fd, char *err, size_t errlen)
{
    struct origin orig[NOPTS];
    struct base_cfg cfg;
    char line[1024];
    int rc;

    rc = parse_full(envp, &cfg, orig, err, errlen, NULL);
    for (size_t i = 0; rc == 0 && i < NOPTS; i++) {
        explain_line(i, &orig[i], &cfg, line, sizeof(line));
        putf(fd, "%s\n", line);
    }
    base_cfg_free(&cfg);
    return rc;
}

int
base_cfg_profile_check(const char *path, char *err, size_t errlen)
{
    struct profile p;
    int rc;

    if (err != NULL && errlen > 0)
        err[0] = '\0';
    rc = read_profile(path, &p, err, errlen);
    free(p.buf);
    return rc;
}
