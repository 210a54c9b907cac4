/*
 * ACCEL_TEST_IMPAIR, parsed (impair_spec.c): what the test-only
 * impairment engine of runtime/impair.h applies to the port's frames.
 */
#ifndef ACCEL_BASE_IMPAIR_SPEC_H
#define ACCEL_BASE_IMPAIR_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Frames delay= and rate= hold at most when limit= is not given (netem's
 *  default). */
#define BASE_IMPAIR_LIMIT_DEFAULT 1000

/** ACCEL_TEST_IMPAIR, parsed. A probability is a threshold out of 2^32
 *  (P percent: P / 100 * 2^32; 100 % is 2^32). */
struct base_impair_spec {
    uint64_t loss, dup, corrupt, reorder;
    uint32_t reorder_gap; /* frames a reordered frame goes after */
    uint64_t delay_ns, jitter_ns;
    uint64_t rate_bps; /* 0: no rate limit */
    uint32_t limit;    /* frames delay= and rate= hold at most */
    uint64_t seed;
    bool seed_set;
    bool tx, rx; /* dir= */
};

/**
 * Parse an ACCEL_TEST_IMPAIR value: comma-separated KEY=VALUE items, each
 * key at most once (the option's doc in cfg_options.def lists them). An
 * empty string is a spec that impairs nothing. 0, or -EINVAL with one
 * line in err naming ACCEL_TEST_IMPAIR, the bad item and the syntax.
 */
int base_impair_parse(const char *s, struct base_impair_spec *sp, char *err,
                      size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_IMPAIR_SPEC_H */
