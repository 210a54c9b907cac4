/*
 * Helpers every view uses: the clocks, compact numbers and durations for
 * 80-column tables, and writing text from the region (which may hold any
 * bytes: a command line is the application's) as valid UTF-8, escaped
 * for JSON strings or Prometheus label values.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "ast.h"

static uint64_t
clock_ns(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
ast_now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

uint64_t
ast_realtime_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

void
ast_sleep_ns(uint64_t ns)
{
    struct timespec ts = {
        .tv_sec = (time_t)(ns / 1000000000ull),
        .tv_nsec = (long)(ns % 1000000000ull),
    };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void
ast_fmt_count(uint64_t v, char *buf, size_t len)
{
    static const char units[] = "kMGTPE";
    double d = (double)v;
    int u = -1;

    if (v < 1000000) {
        snprintf(buf, len, "%" PRIu64, v);
        return;
    }
    while (d >= 999.95 && u < 5) {
        d /= 1000.0;
        u++;
    }
    snprintf(buf, len, "%.1f%c", d, units[u]);
}

void
ast_fmt_duration(double seconds, char *buf, size_t len)
{
    unsigned long s = seconds > 0 ? (unsigned long)seconds : 0;

    if (seconds < 0)
        snprintf(buf, len, "-");
    else if (s >= 86400)
        snprintf(buf, len, "%lud %02lu:%02lu:%02lu", s / 86400, s / 3600 % 24,
                 s / 60 % 60, s % 60);
    else
        snprintf(buf, len, "%02lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
}

void
ast_fmt_trunc(const char *s, size_t width, char *buf, size_t len)
{
    size_t n = strlen(s);

    if (n <= width || width == 0) {
        snprintf(buf, len, "%s", s);
        return;
    }
    snprintf(buf, len, "%.*s~", (int)(width - 1), s);
}

void
ast_printable(char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if invalid. */
static size_t
utf8_len(const unsigned char *s)
{
    size_t n, i;
    uint32_t c;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2;
        c = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3;
        c = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4;
        c = s[0] & 0x07;
    } else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; /* also stops at the NUL */
        c = c << 6 | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
    if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
        (n == 4 && c < 0x10000) || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return n;
}

void
ast_put_escaped(FILE *f, const char *s, bool json)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p != '\0') {
        size_t n = utf8_len(p);

        if (n == 0) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD for a bad byte */
            p++;
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, n, f);
            p += n;
            continue;
        }
        if (*p == '\\' || *p == '"')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (json && *p == '\t')
            fputs("\\t", f);
        else if (json && *p == '\r')
            fputs("\\r", f);
        else if (json && (*p < 0x20 || *p == 0x7f))
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
        p++;
    }
}
