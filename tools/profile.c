/*
 * Profile lookup for accel-run (see profile.h). The contents of a profile
 * are read and checked by base/cfg.c, the same code the library uses,
 * so accel-run rejects exactly what the library would.
 */
#include "profile.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"

#ifndef ACCEL_PROFILE_DIR
#error "ACCEL_PROFILE_DIR must be defined by the build"
#endif

#define PROG "accel-run"
#define NDIRS 3

/* The profile directories that exist, most specific first, without
 * duplicates; returns how many were written to dirs (each malloc'd). */
static int
profile_dirs(char *dirs[NDIRS])
{
    char exe[PATH_MAX], cand[NDIRS][PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    int count = 0, ncand = 0;

    if (n > 0) {
        char *slash;

        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(cand[ncand++], sizeof(cand[0]), "%s/profiles", exe);
        snprintf(cand[ncand++], sizeof(cand[0]), "%s/../share/accel/profiles",
                 exe);
    }
    snprintf(cand[ncand++], sizeof(cand[0]), "%s", ACCEL_PROFILE_DIR);
    for (int i = 0; i < ncand; i++) {
        char *real = realpath(cand[i], NULL);
        int dup = 0;

        if (real == NULL)
            continue;
        for (int j = 0; j < count; j++)
            dup |= strcmp(dirs[j], real) == 0;
        if (dup)
            free(real);
        else
            dirs[count++] = real;
    }
    return count;
}

static void
free_dirs(char *dirs[], int n)
{
    for (int i = 0; i < n; i++)
        free(dirs[i]);
}

static int
is_conf(const char *name)
{
    size_t len = strlen(name);

    return len > 5 && name[0] != '.' && strcmp(name + len - 5, ".conf") == 0;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The profile names found in dirs, sorted, space separated, into buf. */
static void
known_names(char *dirs[], int ndirs, char *buf, size_t size)
{
    char *names[64];
    size_t nnames = 0, used = 0;

    buf[0] = '\0';
    for (int i = 0; i < ndirs; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;

        if (d == NULL)
            continue;
        while ((e = readdir(d)) != NULL && nnames < 64) {
            char *name;
            int dup = 0;

            if (!is_conf(e->d_name))
                continue;
            name = strndup(e->d_name, strlen(e->d_name) - strlen(".conf"));
            for (size_t k = 0; name != NULL && k < nnames; k++)
                dup |= strcmp(names[k], name) == 0;
            if (name != NULL && !dup)
                names[nnames++] = name;
            else
                free(name);
        }
        closedir(d);
    }
    qsort(names, nnames, sizeof(names[0]), by_name);
    for (size_t k = 0; k < nnames; k++) {
        if (used + strlen(names[k]) + 2 < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s",
                                     used > 0 ? " " : "", names[k]);
        free(names[k]);
    }
}

static int
valid_name(const char *s)
{
    if (*s == '\0' || *s == '.')
        return 0;
    for (; *s != '\0'; s++)
        if (!(*s == '-' || *s == '_' || *s == '.' || (*s >= '0' && *s <= '9') ||
              (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
            return 0;
    return 1;
}

/* The file of profile NAME, malloc'd, or NULL after one line. */
static char *
find_named(const char *name)
{
    char *dirs[NDIRS], known[512], path[PATH_MAX];
    int ndirs = profile_dirs(dirs);
    size_t len;

    for (int i = 0; valid_name(name) && i < ndirs; i++) {
        snprintf(path, sizeof(path), "%s/%s.conf", dirs[i], name);
        if (access(path, F_OK) == 0) {
            free_dirs(dirs, ndirs);
            return strdup(path);
        }
    }
    known_names(dirs, ndirs, known, sizeof(known));
    len = strlen(name);
    fprintf(stderr,
            PROG ": unknown profile '%s'; known profiles: %s (in %s); %s%s\n",
            name, known[0] != '\0' ? known : "none",
            ndirs > 0 ? dirs[0] : ACCEL_PROFILE_DIR,
            len > 5 && strcmp(name + len - 5, ".conf") == 0
                ? "a file is given by path: --profile ./"
                : "a file of your own is given by path (with a '/')",
            len > 5 && strcmp(name + len - 5, ".conf") == 0 ? name : "");
    free_dirs(dirs, ndirs);
    return NULL;
}

char *
prof_resolve(const char *arg)
{
    char err[512], *path, *real;

    if (strchr(arg, '/') == NULL) {
        path = find_named(arg);
        if (path == NULL)
            return NULL;
    } else {
        path = strdup(arg);
    }
    real = path != NULL ? realpath(path, NULL) : NULL;
    if (real == NULL) {
        fprintf(stderr, PROG ": profile %s: %s\n", arg,
                path != NULL ? strerror(errno) : "out of memory");
        free(path);
        return NULL;
    }
    free(path);
    if (base_cfg_profile_check(real, err, sizeof(err)) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        free(real);
        return NULL;
    }
    return real;
}

/* The text of the first "# ..." line of path, into buf ("" if none). */
static void
first_comment(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    char line[512];

    buf[0] = '\0';
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        char *s = line + strspn(line, " \t");

        if (*s != '#')
            continue;
        s += strspn(s, "# \t");
        s[strcspn(s, "\r\n")] = '\0';
        snprintf(buf, size, "%s", s);
        break;
    }
    if (f != NULL)
        fclose(f);
}

void
prof_list(FILE *f)
{
    char *dirs[NDIRS], known[512], *save = NULL, *name;
    int ndirs = profile_dirs(dirs);

    known_names(dirs, ndirs, known, sizeof(known));
    for (name = strtok_r(known, " ", &save); name != NULL;
         name = strtok_r(NULL, " ", &save)) {
        char path[PATH_MAX], doc[256] = "";

        for (int i = 0; i < ndirs; i++) {
            snprintf(path, sizeof(path), "%s/%s.conf", dirs[i], name);
            if (access(path, F_OK) == 0)
                break;
        }
        first_comment(path, doc, sizeof(doc));
        fprintf(f, "%-12s %s\n    %s\n", name, doc, path);
    }
    free_dirs(dirs, ndirs);
}
