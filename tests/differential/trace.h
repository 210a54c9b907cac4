/*
 * Trace helpers for the differential scenarios.
 *
 * A scenario prints one line per observable fact to stdout; the runner
 * diffs the kernel run against the accelerated run, so every line must be
 * deterministic on Linux: no pointers, no fd numbers (the library may own
 * some fds), no ephemeral ports, no timings, no partial-write sizes.
 *
 * Line format:  "LINE: expression -> result"  where result is the value,
 * "fd" for a descriptor, ">0" for a positive count, or "-1 errno=ENAME".
 * errno is cleared before the call and sampled right after it, inside one
 * statement expression, so argument evaluation order cannot mix them up.
 */
#ifndef DIFF_TRACE_H
#define DIFF_TRACE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

enum tr_kind {
    TR_VAL, /* print the return value as a number */
    TR_FD,  /* print "fd" for any descriptor >= 0 */
    TR_POS, /* print ">0" for a positive count (sizes that may vary) */
};

/** Set stdout line-buffered; call first in main(). */
void tr_init(void);

/** Print one call line; returns @p r unchanged. */
long tr_call(int line, const char *expr, long r, int err, enum tr_kind kind);

/** Print "LINE: text" (printf-style). */
void tr_note(int line, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Symbolic errno name ("EAGAIN"), or "E<n>". */
const char *tr_errname(int err);

/*
 * The returned strings below live in a small ring of static buffers:
 * up to eight may be used in one printf.
 */
/** poll revents as "POLLIN|POLLOUT" ("0" when empty). */
const char *tr_pollev(int ev);
/** epoll events as "EPOLLIN|EPOLLRDHUP" ("0" when empty). */
const char *tr_epollev(uint32_t ev);
/** msg_flags as "MSG_TRUNC|MSG_EOR" ("0" when empty). */
const char *tr_msgflags(int flags);
/** Data as a quoted, escaped string, cut at 120 bytes. */
const char *tr_data(const void *buf, size_t len);
/**
 * A sockaddr: AF_INET as "a.b.c.d:port", AF_INET6 as "[addr]:port flow=F
 * scope=S" (canonical RFC 5952 text, "::ffff:a.b.c.d" for a mapped one;
 * flowinfo in host order, scope_id), any other family as "family=N".
 * @p eph prints a non-zero port as "eph". The buffer must hold the whole
 * sockaddr of its family (print truncated ones byte by byte).
 */
const char *tr_addr(const void *sa, int eph);

/* The text is stringified by T/TF/TP themselves, before macro expansion. */
#define TR_DO(kind, e, text)                                                   \
    ({                                                                         \
        errno = 0;                                                             \
        long tr_r_ = (long)(e);                                                \
        int tr_e_ = errno;                                                     \
        tr_call(__LINE__, text, tr_r_, tr_e_, kind);                           \
    })

/** Trace a call whose return value is deterministic. */
#define T(e) TR_DO(TR_VAL, e, #e)
/** Trace a call returning a descriptor. */
#define TF(e) TR_DO(TR_FD, e, #e)
/** Trace a call returning a count whose exact value may vary. */
#define TP(e) TR_DO(TR_POS, e, #e)
/** Free-form trace line. */
#define NOTE(...) tr_note(__LINE__, __VA_ARGS__)

#endif
