/*
 * A preload probe for the accel-run test: a shared object that accel-run is
 * pointed at with ACCEL_LIBRARY instead of libaccel.so. Its constructor
 * appends "probe <pid>" to the file named by TOOLS_PROBE_OUT, so the test
 * can check that the command accel-run started really had the library
 * preloaded (and loaded once), without needing the real data path.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void
probe_loaded(void)
{
    const char *path = getenv("TOOLS_PROBE_OUT");
    char line[64];
    int fd, n;

    if (path == NULL || path[0] == '\0')
        return;
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    n = snprintf(line, sizeof(line), "probe %ld\n", (long)getpid());
    if (n > 0 && write(fd, line, (size_t)n) != n)
        n = -1;
    close(fd);
}
