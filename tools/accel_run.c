/*
 * accel-run: the wrapper that starts an unmodified program with libaccel.so
 * preloaded (Onload's `onload` is the model). It reads its own options,
 * validates the ACCEL_* environment with the same parser the library uses
 * (base/cfg.c): a bad setting is reported here in one line naming the
 * variable and the fix, and the command then runs on the kernel, without
 * the library (a misconfiguration never stops the application; unknown
 * ACCEL_* names are left to the library, which warns once). Otherwise it
 * checks that the library exists, puts it first in LD_PRELOAD (keeping what
 * was there, dropping duplicates) and execs the command. Exit statuses
 * follow env(1): 127 when the command is not found, 126 when it cannot be
 * executed, 2 for usage errors and a missing library.
 * Messages go to stderr; stdout carries only --help, --list-options,
 * --list-profiles and --explain. --prepare (prepare.c) attaches accel's
 * XDP program to ACCEL_IFACE ahead of the first accelerated process.
 *
 * Profiles (--profile NAME|PATH, or ACCEL_PROFILE): accel-run resolves the
 * name to its file (profile.c), checks every line with the library's own
 * parser (a bad line, like an unknown name, stops accel-run with exit 2
 * and one line naming file:line), and exports ACCEL_PROFILE=<absolute
 * path> (plus ACCEL_PROFILE_FORCE=1 for --force-profile). The values are
 * not copied into the environment: the library reads the file itself
 * (base/cfg.c), so defaults < profile < environment is decided in one
 * function, which --explain also runs to print every setting's source.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "prepare.h"
#include "profile.h"

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
    int list_profiles;
    int explain;
    int prepare;
    int force_profile;
    const char *profile; /* --profile's NAME or PATH, or NULL */
    char **cmd;          /* the command and its arguments, NULL-terminated */
};

static void
usage(FILE *f)
{
    fprintf(
        f, "usage: " PROG " [--profile NAME|PATH [--force-profile]] [--] CMD "
           "[ARGS...]\n"
           "       " PROG " [--profile NAME|PATH [--force-profile]] --explain "
           "[CMD [ARGS...]]\n"
           "       " PROG " [--profile NAME|PATH] --prepare\n"
           "       " PROG " --help | --list-options | --list-profiles\n"
           "\n"
           "Run CMD with " LIB_BASENAME " preloaded: its AF_INET TCP and UDP "
           "sockets run on\n"
           "the userspace stack over a DPDK port; every other fd stays on the "
           "kernel.\n"
           "\n"
           "Options:\n"
           "  -h, --help          show this help and exit\n"
           "  --list-options      list every ACCEL_* option with its type, "
           "default and range\n"
           "  --list-profiles     list the installed profiles\n"
           "  --profile NAME|PATH apply a profile: an installed one (latency,\n"
           "                      throughput, balanced, safe) or a file of "
           "NAME=VALUE\n"
           "                      lines given by path (any argument with a "
           "'/');\n"
           "                      the environment's ACCEL_* values still win\n"
           "  --force-profile     the profile's values win over the "
           "environment's\n"
           "  --explain           print every setting with its value and "
           "where it came\n"
           "                      from (default, profile, environment), as "
           "CMD would\n"
           "                      get it, and exit without running CMD\n"
           "  --prepare           attach accel's XDP program to ACCEL_IFACE "
           "now (as root,\n"
           "                      at boot or before a service starts): the "
           "first process\n"
           "                      then starts as fast as the next ones\n"
           "  --                  end of options (CMD may then start with "
           "'-')\n"
           "\n"
           "Configuration comes from ACCEL_* environment variables, e.g.\n"
           "  ACCEL_IFACE=veth-a ACCEL_IP=10.200.0.2/24 " PROG
           " --profile latency nginx\n"
           "They are checked before CMD starts; a bad value is reported "
           "in one line and CMD\nthen runs on the kernel, without the "
           "library. A bad profile (unknown name, bad\nline) stops " PROG
           " with one line naming the file and line.\n"
           "ACCEL_LIBRARY selects another " LIB_BASENAME
           " (default " ACCEL_DEFAULT_LIBRARY ").\n"
           "\n"
           "Exit status: CMD's, or 2 for a usage error, a bad profile or a "
           "missing library,\n"
           "126 when CMD cannot be executed, 127 when CMD is not found. "
           "--explain: 0, or 1\nwhen CMD would run on the kernel because of "
           "the configuration, or as above.\n--prepare: 0 when the program is "
           "attached (or none is needed), 1 when it\ncannot be, 2 for a "
           "bad configuration.\n");
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
        } else if (strcmp(a, "--list-profiles") == 0) {
            o->list_profiles = 1;
        } else if (strcmp(a, "--prepare") == 0) {
            o->prepare = 1;
        } else if (strcmp(a, "--explain") == 0) {
            o->explain = 1;
        } else if (strcmp(a, "--force-profile") == 0) {
            o->force_profile = 1;
        } else if (strcmp(a, "--profile") == 0 ||
                   strncmp(a, "--profile=", 10) == 0) {
            if (a[9] == '=') {
                o->profile = a + 10;
            } else if (i + 1 < argc) {
                o->profile = argv[++i];
            } else {
                fprintf(stderr, PROG ": --profile needs a NAME or a PATH "
                                     "(see " PROG " --list-profiles)\n");
                return EXIT_USAGE;
            }
            if (o->profile[0] == '\0') {
                fprintf(stderr, PROG ": --profile needs a NAME or a PATH "
                                     "(see " PROG " --list-profiles)\n");
                return EXIT_USAGE;
            }
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
 * The profile from --profile, or else ACCEL_PROFILE (a name or a path):
 * resolved, checked, and exported as ACCEL_PROFILE=<absolute path>, with
 * ACCEL_PROFILE_FORCE=1 for --force-profile. 0, or EXIT_USAGE after one
 * line.
 */
static int
apply_profile(const struct run_opts *o)
{
    const char *arg = o->profile != NULL ? o->profile : getenv("ACCEL_PROFILE");
    char *path;

    if (empty(arg)) {
        if (!o->force_profile)
            return 0;
        fprintf(stderr, PROG ": --force-profile needs a profile: add "
                             "--profile NAME or PATH\n");
        return EXIT_USAGE;
    }
    path = prof_resolve(arg);
    if (path == NULL)
        return EXIT_USAGE;
    if (setenv("ACCEL_PROFILE", path, 1) != 0 ||
        (o->force_profile && setenv("ACCEL_PROFILE_FORCE", "1", 1) != 0)) {
        fprintf(stderr, PROG ": cannot set ACCEL_PROFILE: %s\n",
                strerror(errno));
        free(path);
        return EXIT_USAGE;
    }
    free(path);
    return 0;
}

/*
 * Check the configuration as the library will read it. Returns 0 with *cfg
 * filled (base_cfg_free it), or RUN_ON_KERNEL with the reason in err.
 */
static int
check_config(struct base_cfg *cfg, char *err, size_t errlen)
{
    /* Unknown ACCEL_* names are not reported here: the library reports
     * each one once when it loads the configuration, and a second copy of
     * the same warning from accel-run would only be noise. */
    memset(cfg, 0, sizeof(*cfg));
    if (base_cfg_parse(environ, cfg, err, errlen, NULL) != 0) {
        if (err[0] == '\0')
            snprintf(err, errlen, "invalid ACCEL_* configuration");
        base_cfg_free(cfg);
        return RUN_ON_KERNEL;
    }
    if (empty(cfg->iface) && empty(cfg->vdev))
        return 0;
    if (empty(cfg->ip)) {
        char note[256];

        /* unset: the interface's own address, shared with the kernel */
        if (base_cfg_iface_addrs(cfg, note, sizeof(note)) == 0 &&
            !empty(cfg->ip))
            return 0;
        snprintf(err, errlen,
                 "ACCEL_IP is not set and ACCEL_IFACE has no IPv4 address to "
                 "share; set ACCEL_IP=a.b.c.d/len (in the lab: "
                 "ACCEL_IP=10.200.0.2/24, see `accel-lab up`)");
        base_cfg_free(cfg);
        return RUN_ON_KERNEL;
    }
    return 0;
}

/* The library to preload, resolved (malloc'd), or NULL after one line. */
static char *
pick_library(const struct base_cfg *cfg)
{
    if (!empty(cfg->library))
        return resolve_library(cfg->library, "ACCEL_LIBRARY");
    return resolve_library(ACCEL_DEFAULT_LIBRARY, "installed default");
}

/* Validate the configuration and prepare LD_PRELOAD. */
static int
setup_environment(void)
{
    struct base_cfg cfg;
    char err[512] = "";
    char *lib, *preload;

    if (check_config(&cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, PROG ": %s; running on the kernel\n", err);
        return RUN_ON_KERNEL;
    }
    if (empty(cfg.iface) && empty(cfg.vdev))
        warn_line("neither ACCEL_IFACE nor ACCEL_VDEV is set: every socket "
                  "stays on the kernel");
    lib = pick_library(&cfg);
    base_cfg_free(&cfg);
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

/*
 * Where execvp would find cmd (malloc'd), or NULL with errno ENOENT (not
 * found) or EACCES (found, not executable).
 */
static char *
find_program(const char *cmd)
{
    const char *path = getenv("PATH");
    char buf[PATH_MAX], *copy, *dir, *save = NULL, *found = NULL;
    int saw_noexec = 0;

    if (strchr(cmd, '/') != NULL) {
        if (access(cmd, X_OK) == 0)
            return strdup(cmd);
        errno = errno == ENOENT ? ENOENT : EACCES;
        return NULL;
    }
    copy = strdup(path != NULL ? path : "/bin:/usr/bin");
    for (dir = copy != NULL ? strtok_r(copy, ":", &save) : NULL;
         dir != NULL && found == NULL; dir = strtok_r(NULL, ":", &save)) {
        struct stat st;

        snprintf(buf, sizeof(buf), "%s/%s", dir, cmd);
        if (stat(buf, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (access(buf, X_OK) == 0)
            found = strdup(buf);
        else
            saw_noexec = 1;
    }
    free(copy);
    if (found == NULL)
        errno = saw_noexec ? EACCES : ENOENT;
    return found;
}

/*
 * --explain: what CMD would run with (program, library, profile, data
 * path) and every setting with its source, on stdout; CMD is not run.
 */
static int
explain(const struct run_opts *o)
{
    const char *prof = getenv("ACCEL_PROFILE");
    char err[512] = "", *prog = NULL, *lib;
    struct base_cfg cfg;
    int rc = 0;

    if (o->cmd != NULL) {
        const char *base = strrchr(o->cmd[0], '/');

        printf("command:");
        for (char **a = o->cmd; *a != NULL; a++)
            printf(" %s", *a);
        prog = find_program(o->cmd[0]);
        if (prog == NULL)
            rc = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
        printf("\nprogram: %s (%s)\n", base != NULL ? base + 1 : o->cmd[0],
               prog != NULL           ? prog
               : rc == EXIT_NOT_FOUND ? "not found"
                                      : "not executable");
        free(prog);
    } else {
        printf("command: (none given)\n");
    }
    if (empty(prof))
        printf("profile: none (built-in defaults)\n");
    fflush(stdout);
    if (check_config(&cfg, err, sizeof(err)) != 0) {
        fprintf(stderr,
                PROG ": %s; %s would run on the kernel, without the "
                     "library\n",
                err, o->cmd != NULL ? o->cmd[0] : "CMD");
        return rc != 0 ? rc : 1;
    }
    if (!empty(prof)) {
        const char *base = strrchr(cfg.profile, '/');
        size_t len;

        base = base != NULL ? base + 1 : cfg.profile;
        len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".conf") == 0)
            len -= 5;
        printf("profile: %.*s (%s), %s\n", (int)len, base, cfg.profile,
               cfg.profile_force ? "forced: its values win over the "
                                   "environment's"
                                 : "the environment's values win over it");
    }
    if (empty(cfg.iface) && empty(cfg.vdev))
        printf("data path: none: neither ACCEL_IFACE nor ACCEL_VDEV is set, "
               "every socket stays on the kernel\n");
    else
        printf("data path: %s, ip %s\n",
               !empty(cfg.vdev) ? cfg.vdev : cfg.iface, cfg.ip);
    lib = pick_library(&cfg);
    printf("library: %s\n", lib != NULL ? lib : "(missing, see above)");
    if (lib == NULL && rc == 0)
        rc = EXIT_USAGE;
    free(lib);
    base_cfg_free(&cfg);
    printf("settings (value, then where it comes from):\n");
    fflush(stdout);
    if (base_cfg_explain(environ, STDOUT_FILENO, err, sizeof(err)) != 0) {
        fprintf(stderr, PROG ": %s\n", err); /* checked above: not reached */
        return 1;
    }
    return rc;
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
        base_cfg_list_options(STDOUT_FILENO);
        return 0;
    }
    if (o.list_profiles) {
        prof_list(stdout);
        return 0;
    }
    if (o.prepare && o.cmd != NULL) {
        fprintf(stderr,
                PROG ": --prepare takes no command (see " PROG " --help)\n");
        return EXIT_USAGE;
    }
    if (o.cmd == NULL && !o.explain && !o.prepare) {
        usage(stderr);
        return EXIT_USAGE;
    }
    rc = apply_profile(&o);
    if (rc != 0)
        return rc;
    if (o.explain)
        return explain(&o);
    if (o.prepare)
        return prep_run();
    rc = setup_environment();
    if (rc > 0)
        return rc;
    execvp(o.cmd[0], o.cmd);
    rc = errno;
    fprintf(stderr, PROG ": cannot run '%s': %s\n", o.cmd[0], strerror(rc));
    return rc == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}
