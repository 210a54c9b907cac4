/*
 * Fuzzer: the configuration (base/cfg.c, cfg_ip6.c) and the impairment
 * spec (base/impair_spec.c). The first byte picks what the rest is:
 *   0  environment strings, one a line ("ACCEL_NAME=value"), parsed as
 *      at load (base_cfg_parse), the effective configuration written and
 *      explained (accel-run --explain), and freed;
 *   1  a profile file's text, checked (accel-run --profile) and applied
 *      under an empty environment;
 *   2  a profile file and environment strings, separated by a form feed,
 *      with ACCEL_PROFILE naming the file (ACCEL_PROFILE_FORCE as the
 *      environment says);
 *   3  an ACCEL_TEST_IMPAIR value (base_impair_parse).
 * Bit 2 of the first byte asks for the warnings about unknown names
 * (their nearest known name, an edit distance to every option: the
 * costly part, so only half the inputs pay for it).
 * The profile is written to a memfd and named by its /proc/self/fd path.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfg.h"
#include "impair_spec.h"

#define MAX_ENV 16

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n);

static int devnull = -1, memfd = -1;
static char memfd_path[64];

static void
warn(const char *line)
{
    if (line == NULL || line[0] == '\0')
        abort();
}

/* An error is one line, NUL-terminated. */
static void
check_err(int rc, const char *err, size_t len)
{
    if (rc != 0 && (memchr(err, '\0', len) == NULL || err[0] == '\0'))
        abort();
}

static void
parse_env(char **envp, bool warnings)
{
    struct base_cfg cfg;
    char err[512];
    int rc;

    memset(&cfg, 0, sizeof(cfg));
    rc = base_cfg_parse(envp, &cfg, err, sizeof(err), warnings ? warn : NULL);
    check_err(rc, err, sizeof(err));
    if (rc == 0)
        base_cfg_write_effective(devnull, &cfg);
    base_cfg_free(&cfg);
    base_cfg_free(&cfg);
    rc = base_cfg_explain(envp, devnull, err, sizeof(err));
    check_err(rc, err, sizeof(err));
}

/* Split text (NUL-terminated, modified) into lines after envp[*k]. */
static void
split_env(char *text, char **envp, int *k)
{
    for (char *s = text; s != NULL && *k < MAX_ENV;) {
        char *nl = strchr(s, '\n');

        if (nl != NULL)
            *nl = '\0';
        envp[(*k)++] = s;
        s = nl != NULL ? nl + 1 : NULL;
    }
}

static void
write_profile(const char *text, size_t len)
{
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, text, len, 0) != (ssize_t)len)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
    char *envp[MAX_ENV + 2], *text, *ff, err[512], prof[96];
    struct base_impair_spec sp;
    int k = 0, rc;

    if (devnull < 0) {
        devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        memfd = memfd_create("fuzz-profile", MFD_CLOEXEC);
        if (devnull < 0 || memfd < 0)
            abort();
        snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
    }
    if (n < 1)
        return 0;
    text = malloc(n);
    memcpy(text, in + 1, n - 1);
    text[n - 1] = '\0';
    switch (in[0] & 3) {
    case 0:
        split_env(text, envp, &k);
        envp[k] = NULL;
        parse_env(envp, in[0] & 4);
        break;
    case 1:
        write_profile(text, n - 1);
        rc = base_cfg_profile_check(memfd_path, err, sizeof(err));
        check_err(rc, err, sizeof(err));
        snprintf(prof, sizeof(prof), "ACCEL_PROFILE=%s", memfd_path);
        envp[0] = prof;
        envp[1] = NULL;
        parse_env(envp, in[0] & 4);
        break;
    case 2:
        ff = memchr(text, '\f', n - 1);
        write_profile(text, ff != NULL ? (size_t)(ff - text) : n - 1);
        snprintf(prof, sizeof(prof), "ACCEL_PROFILE=%s", memfd_path);
        envp[k++] = prof;
        if (ff != NULL)
            split_env(ff + 1, envp, &k);
        envp[k] = NULL;
        parse_env(envp, in[0] & 4);
        break;
    default:
        rc = base_impair_parse(text, &sp, err, sizeof(err));
        check_err(rc, err, sizeof(err));
        break;
    }
    free(text);
    return 0;
}
