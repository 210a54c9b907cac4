/*
 * A main for the fuzz harnesses in builds without libFuzzer (gcc, the
 * normal and sanitizer builds): runs LLVMFuzzerTestOneInput on every file
 * named, and on every file of every directory named (in name order), so
 * the seed corpus and the regression inputs run as ordinary tests.
 * Exit status 0 when all ran; a crash or an abort in a harness fails the
 * test; a directory without files fails too (a corpus that went missing)
 * unless it follows -e (the regression inputs, none until a crash).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long len;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        if (f != NULL)
            fclose(f);
        return -1;
    }
    /* One byte more than needed: a 0-byte input still gets a buffer. */
    buf = malloc((size_t)len + 1);
    if (buf == NULL || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)len);
    free(buf);
    return 0;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int
run_dir(const char *dir, bool may_be_empty)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, by_name), files = 0, rc = 0;

    if (n < 0) {
        fprintf(stderr, "replay: cannot list %s\n", dir);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
        /* not README.md nor .keep (git keeps no empty directory) */
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            ents[i]->d_name[0] != '.' &&
            strcmp(ents[i]->d_name, "README.md") != 0) {
            if (run_file(path) != 0)
                rc = -1;
            files++;
        }
        free(ents[i]);
    }
    free(ents);
    if (files == 0 && !may_be_empty) {
        fprintf(stderr, "replay: no inputs in %s\n", dir);
        return -1;
    }
    fprintf(stderr, "replay: %d inputs from %s\n", files, dir);
    return rc;
}

int
main(int argc, char **argv)
{
    int rc = 0;
    bool may_be_empty = false;

    if (argc < 2) {
        fprintf(stderr, "usage: %s [-e] FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;

        if (strcmp(argv[i], "-e") == 0) {
            may_be_empty = true;
            continue;
        }
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode) ? run_dir(argv[i], may_be_empty) != 0
                                       : run_file(argv[i]) != 0) {
            rc = 1;
        }
        may_be_empty = false;
    }
    return rc;
}
