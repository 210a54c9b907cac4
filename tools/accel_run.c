/*
 * accel-run: the wrapper that starts an unmodified program with libaccel.so
 * preloaded (Onload's `onload` is the model). It reads its own options,
 * validates the ACCEL_* environment with the same parser the library uses
 * (runtime/cfg.c): a bad setting is reported here in one line naming the
 * variable and the fix, and the command then runs on the kernel, without
 * the library (a misconfiguration never stops the application; unknown
 * ACCEL_* names are left to the library, which warns once). Otherwise it
 * checks that the library exists, puts it first in LD_PRELOAD (keeping what
 * was there, dropping duplicates) and execs the command. Exit statuses
 * follow env(1): 127 when the command is not found, 126 when it cannot be
 * executed, 2 for usage errors and a missing library.
 * Messages go to stderr; stdout carries only --help and --list-options.
 *
 * The settings are gathered in struct run_opts and applied in one place
 * (setup_environment), so a later --profile only has to merge a profile's
 * KEY=VALUE lines into the environment before validation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"

#ifndef ACCEL_DEFAULT_LIBRARY
#error "ACCEL_DEFAULT_LIBRARY must be defined by the build"
#endif

#define PROG "accel-run"
#define LIB_BASENAME "libaccel.so"

enum {
    EXIT_USAGE = 2,     /* bad option, missing library */
    RUN_ON_KERNEL = -1, /* bad ACCEL_* configuration: exec without us */
    EXIT_CANNOT_EXEC = 126,
    EXIT_NOT_FOUND = 127,
};

extern char **environ;

struct run_opts {
    int help;
    int list_options;
    char **cmd; /* the command and its arguments, NULL-terminated */
};

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " [--help] [--list-options] [--] CMD [ARGS...]\n"
            "\n"
            "Run CMD with " LIB_BASENAME " preloaded: its AF_INET TCP and UDP "
            "sockets run on\n"
            "the userspace stack over a DPDK port; every other fd stays on "
            "the kernel.\n"
            "\n"
            "Options:\n"
            "  -h, --help        show this help and exit\n"
            "  --list-options    list every ACCEL_* option with its type, "
            "default and range\n"
            "  --                end of options (CMD may then start with "
            "'-')\n"
            "\n"
            "Configuration comes from ACCEL_* environment variables, e.g.\n"
            "  ACCEL_IFACE=veth-a ACCEL_IP=10.200.0.2/24 " PROG
            " nginx -c /etc/nginx/nginx.conf\n"
            "They are checked before CMD starts; a bad value is reported "
            "in one line and CMD\nthen runs on the kernel, without the "
            "library.\n"
            "ACCEL_LIBRARY selects another " LIB_BASENAME
            " (default " ACCEL_DEFAULT_LIBRARY ").\n"
            "\n"
            "Exit status: CMD's, or 2 for a usage error or a missing library, "
            "126 when CMD\n"
            "cannot be executed, 127 when CMD is not found.\n");
}

/* Returns 0, or EXIT_USAGE after printing the reason. */
static int
parse_args(int argc, char **argv, struct run_opts *o)
{
    int i;

    memset(o, 0, sizeof(*o));
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
        } else if (strcmp(a, "--list-options") == 0) {
            o->list_options = 1;
        } else {
            fprintf(stderr,
                    PROG ": unknown option '%s' (see " PROG " --help)\n", a);
            return EXIT_USAGE;
        }
    }
    o->cmd = i < argc ? &argv[i] : NULL;
    return 0;
}

static int
empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

static void
warn_line(const char *line)
{
    fprintf(stderr, PROG ": warning: %s\n", line);
}

/*
 * Resolve the library to an absolute path (LD_PRELOAD must not depend on
 * the program's working directory) and check it is a readable ELF file.
 * Returns a malloc'd path, or NULL after printing the reason.
 */
static char *
resolve_library(const char *want, const char *origin)
{
    char *path = realpath(want, NULL);
    unsigned char magic[4];
    struct stat st;
    FILE *f;

    if (path == NULL) {
        fprintf(stderr,
                PROG ": library %s (%s): %s; build and install accel "
                     "(cmake --install), or set ACCEL_LIBRARY to a built "
                     "libaccel.so\n",
                want, origin, strerror(errno));
        return NULL;
    }
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, PROG ": library %s (%s) is not a regular file\n", path,
                origin);
        free(path);
        return NULL;
    }
    f = fopen(path, "rb");
    if (f == NULL || fread(magic, 1, 4, f) != 4 ||
        memcmp(magic, "\177ELF", 4) != 0) {
        fprintf(stderr, PROG ": library %s (%s) %s\n", path, origin,
                f == NULL ? strerror(errno) : "is not an ELF shared object");
        if (f != NULL)
            fclose(f);
        free(path);
        return NULL;
    }
    fclose(f);
    return path;
}

static int
same_library(const char *entry, const char *lib)
{
    const char *base = strrchr(entry, '/');
    char *real;
    int same;

    base = base != NULL ? base + 1 : entry;
    if (strcmp(base, LIB_BASENAME) == 0)
        return 1; /* any libaccel.so: two copies would interpose twice */
    real = realpath(entry, NULL);
    same = real != NULL && strcmp(real, lib) == 0;
    free(real);
    return same;
}

/*
 * The new LD_PRELOAD: lib first, then the entries of old (ld.so separates
 * them with spaces or colons) except other copies of the library.
 * Returns a malloc'd string, or NULL on allocation failure.
 */
static char *
build_preload(const char *lib, const char *old)
{
    size_t cap = strlen(lib) + (old != NULL ? strlen(old) : 0) + 2;
    char *out = malloc(cap), *copy, *tok, *save = NULL;

    if (out == NULL)
        return NULL;
    strcpy(out, lib);
    if (old == NULL)
        return out;
    copy = strdup(old);
    if (copy == NULL) {
        free(out);
        return NULL;
    }
    for (tok = strtok_r(copy, " :", &save); tok != NULL;
         tok = strtok_r(NULL, " :", &save)) {
        if (same_library(tok, lib)) {
            if (strcmp(tok, lib) != 0)
                fprintf(stderr,
                        PROG ": warning: dropping %s from LD_PRELOAD (using "
                             "%s)\n",
                        tok, lib);
            continue;
        }
        strcat(out, ":");
        strcat(out, tok);
    }
    free(copy);
    return out;
}

/*
 * Validate the configuration and prepare LD_PRELOAD. A --profile would
 * merge its settings into the environment here, before validation, so
 * the precedence default < profile < environment holds in one place.
 */
static int
setup_environment(void)
{
    struct rt_cfg cfg;
    char err[512] = "";
    const char *want, *origin;
    char *lib, *preload;

    /* Unknown ACCEL_* names are not reported here: the library reports
     * each one once when it loads the configuration, and a second copy of
     * the same warning from accel-run would only be noise. */
    memset(&cfg, 0, sizeof(cfg));
    if (rt_cfg_parse(environ, &cfg, err, sizeof(err), NULL) != 0) {
        fprintf(stderr, PROG ": %s; running on the kernel\n",
                err[0] != '\0' ? err : "invalid ACCEL_* configuration");
        rt_cfg_free(&cfg);
        return RUN_ON_KERNEL;
    }
    if (empty(cfg.iface) && empty(cfg.vdev)) {
        warn_line("neither ACCEL_IFACE nor ACCEL_VDEV is set: every socket "
                  "stays on the kernel");
    } else if (empty(cfg.ip)) {
        fprintf(stderr, PROG ": ACCEL_IP is not set; set ACCEL_IP=a.b.c.d/len "
                             "(in the lab: ACCEL_IP=10.200.0.2/24, see "
                             "`accel-lab up`); running on the kernel\n");
        rt_cfg_free(&cfg);
        return RUN_ON_KERNEL;
    }
    if (!empty(cfg.library)) {
        want = cfg.library;
        origin = "ACCEL_LIBRARY";
    } else {
        want = ACCEL_DEFAULT_LIBRARY;
        origin = "installed default";
    }
    lib = resolve_library(want, origin);
    rt_cfg_free(&cfg);
    if (lib == NULL)
        return EXIT_USAGE;
    preload = build_preload(lib, getenv("LD_PRELOAD"));
    free(lib);
    if (preload == NULL || setenv("LD_PRELOAD", preload, 1) != 0) {
        fprintf(stderr, PROG ": cannot set LD_PRELOAD: %s\n", strerror(errno));
        free(preload);
        return EXIT_USAGE;
    }
    free(preload);
    return 0;
}

int
main(int argc, char **argv)
{
    struct run_opts o;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc;
    if (o.help) {
        usage(stdout);
        return 0;
    }
    if (o.list_options) {
        fflush(stdout);
        rt_cfg_list_options(STDOUT_FILENO);
        return 0;
    }
    if (o.cmd == NULL) {
        usage(stderr);
        return EXIT_USAGE;
    }
    rc = setup_environment();
    if (rc > 0)
        return rc;
    execvp(o.cmd[0], o.cmd);
    rc = errno;
    fprintf(stderr, PROG ": cannot run '%s': %s\n", o.cmd[0], strerror(rc));
    return rc == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}
