/*
 * ACCEL_TEST_IMPAIR's syntax: the option's value parsed into what the
 * test-only impairment engine (runtime/impair.c) applies. Part of the
 * configuration, so that a bad value is refused where every other option
 * is (base_cfg_parse, accel-run) before anything starts.
 */
#include "impair_spec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT_MAX 16384
#define DELAY_MAX_MS 60000
#define RATE_MAX_MBIT 100000
#define GAP_MAX 100

#define SYNTAX                                                                 \
    "set ACCEL_TEST_IMPAIR to KEY=VALUE items separated by commas: loss=P, "   \
    "dup=P, corrupt=P, reorder=P[:N], delay=MS[:JITTER_MS], rate=MBIT_S, "     \
    "limit=FRAMES, seed=N, dir=tx|rx|both (P in percent, e.g. loss=0.5), or "  \
    "leave it empty"

static int
bad(char *err, size_t errlen, const char *s, const char *item, const char *why)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "ACCEL_TEST_IMPAIR=%s: %s %s; %s", s, item, why,
                 SYNTAX);
    return -EINVAL;
}

/* Decimal s[0..len) with at most `decimals` digits after an optional
 * point, scaled by 10^decimals: 0, or -1 if malformed or over max. */
static int
parse_dec(const char *s, size_t len, unsigned decimals, uint64_t max,
          uint64_t *out)
{
    uint64_t v = 0;
    unsigned frac = 0;
    bool point = false, digit = false;

    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.' && !point) {
            point = true;
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || (point && frac == decimals))
            return -1;
        if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
        digit = true;
        if (point)
            frac++;
    }
    if (!digit)
        return -1;
    for (; frac < decimals; frac++) {
        if (v > UINT64_MAX / 10)
            return -1;
        v *= 10;
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

/* P percent, up to 6 decimals, as a threshold out of 2^32. */
static int
parse_prob(const char *s, size_t len, uint64_t *thr)
{
    uint64_t micro; /* millionths of a percent */

    if (parse_dec(s, len, 6, 100000000ull, &micro) != 0)
        return -1;
    *thr = (micro << 32) / 100000000ull;
    return 0;
}

/* "A[:B]": the part before the colon in *alen, the one after in *b (NULL
 * when there is no colon). */
static void
split_colon(const char *v, size_t vlen, size_t *alen, const char **b,
            size_t *blen)
{
    const char *c = memchr(v, ':', vlen);

    *alen = c != NULL ? (size_t)(c - v) : vlen;
    *b = c != NULL ? c + 1 : NULL;
    *blen = c != NULL ? vlen - *alen - 1 : 0;
}

enum key {
    K_LOSS,
    K_DUP,
    K_CORRUPT,
    K_REORDER,
    K_DELAY,
    K_RATE,
    K_LIMIT,
    K_SEED,
    K_DIR,
    K_N
};
static const char *const keys[K_N] = {"loss",    "dup",   "corrupt",
                                      "reorder", "delay", "rate",
                                      "limit",   "seed",  "dir"};

/* One KEY=VALUE item (item[0..len)) into sp; 0 or -EINVAL. */
static int
parse_item(const char *s, const char *item, size_t len,
           struct base_impair_spec *sp, bool seen[K_N], char *err,
           size_t errlen)
{
    char it[64];
    const char *eq = memchr(item, '=', len), *v, *b;
    size_t klen, vlen, alen, blen;
    uint64_t x, y;
    int k;

    snprintf(it, sizeof(it), "'%.*s'", (int)(len < 40 ? len : 40), item);
    if (eq == NULL)
        return bad(err, errlen, s, it, "is not KEY=VALUE");
    klen = (size_t)(eq - item);
    v = eq + 1;
    vlen = len - klen - 1;
    for (k = 0; k < K_N; k++)
        if (strlen(keys[k]) == klen && memcmp(keys[k], item, klen) == 0)
            break;
    if (k == K_N)
        return bad(err, errlen, s, it, "has an unknown key");
    if (seen[k])
        return bad(err, errlen, s, it, "repeats a key given before");
    seen[k] = true;
    switch ((enum key)k) {
    case K_LOSS:
    case K_DUP:
    case K_CORRUPT:
        if (parse_prob(v, vlen, &x) != 0)
            return bad(err, errlen, s, it, "is not a percentage from 0 to 100");
        *(k == K_LOSS ? &sp->loss : k == K_DUP ? &sp->dup : &sp->corrupt) = x;
        return 0;
    case K_REORDER:
        split_colon(v, vlen, &alen, &b, &blen);
        if (parse_prob(v, alen, &x) != 0 ||
            (b != NULL && (parse_dec(b, blen, 0, GAP_MAX, &y) != 0 || y == 0)))
            return bad(err, errlen, s, it,
                       "is not P[:N] (P a percentage, N frames from 1 to "
                       "100)");
        sp->reorder = x;
        sp->reorder_gap = b != NULL ? (uint32_t)y : 1;
        return 0;
    case K_DELAY:
        split_colon(v, vlen, &alen, &b, &blen);
        if (parse_dec(v, alen, 6, DELAY_MAX_MS * 1000000ull, &x) != 0 ||
            (b != NULL &&
             parse_dec(b, blen, 6, DELAY_MAX_MS * 1000000ull, &y) != 0))
            return bad(err, errlen, s, it,
                       "is not MS[:JITTER_MS] (milliseconds from 0 to "
                       "60000)");
        sp->delay_ns = x;
        sp->jitter_ns = b != NULL ? y : 0;
        return 0;
    case K_RATE:
        if (parse_dec(v, vlen, 6, RATE_MAX_MBIT * 1000000ull, &x) != 0 ||
            x == 0)
            return bad(err, errlen, s, it,
                       "is not a rate in Mbit/s above 0, up to 100000");
        sp->rate_bps = x;
        return 0;
    case K_LIMIT:
        if (parse_dec(v, vlen, 0, LIMIT_MAX, &x) != 0 || x == 0)
            return bad(err, errlen, s, it,
                       "is not a frame count from 1 to 16384");
        sp->limit = (uint32_t)x;
        return 0;
    case K_SEED:
        if (parse_dec(v, vlen, 0, UINT64_MAX, &x) != 0)
            return bad(err, errlen, s, it, "is not a whole number");
        sp->seed = x;
        sp->seed_set = true;
        return 0;
    case K_DIR:
        if (vlen == 2 && memcmp(v, "tx", 2) == 0) {
            sp->tx = true, sp->rx = false;
        } else if (vlen == 2 && memcmp(v, "rx", 2) == 0) {
            sp->tx = false, sp->rx = true;
        } else if (vlen == 4 && memcmp(v, "both", 4) == 0) {
            sp->tx = true, sp->rx = true;
        } else {
            return bad(err, errlen, s, it, "is not tx, rx or both");
        }
        return 0;
    case K_N:
        break;
    }
    return -EINVAL;
}

int
base_impair_parse(const char *s, struct base_impair_spec *sp, char *err,
                  size_t errlen)
{
    bool seen[K_N] = {false};
    const char *p = s;

    memset(sp, 0, sizeof(*sp));
    sp->limit = BASE_IMPAIR_LIMIT_DEFAULT;
    sp->reorder_gap = 1;
    sp->tx = true;
    if (*s == '\0')
        return 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        int rc = parse_item(s, p, len, sp, seen, err, errlen);

        if (rc != 0)
            return rc;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}
