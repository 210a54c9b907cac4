/*
 * Behaviour: sendfile from a regular file to a connected TCP socket sends
 * the requested range: with an offset pointer (file position unchanged,
 * offset advanced), without one (file position advanced), past EOF (short
 * count, then 0); the sink's byte count and hash match the file.
 */
#include "scen.h"

#define FSIZE 300000

int
main(void)
{
    char path[] = "/tmp/accel-diff-XXXXXX";
    static char data[FSIZE];
    char reply[64], want[64];
    off_t off;
    uint32_t h = D_FNV_INIT;
    int f, fd, i;
    ssize_t n;

    tr_init();
    for (i = 0; i < FSIZE; i++)
        data[i] = (char)d_pattern((uint64_t)i);
    f = TF(mkstemp(path));
    T(unlink(path));
    T(write(f, data, FSIZE) == FSIZE);
    T(lseek(f, 0, SEEK_SET));
    fd = d_connect(D_SINK);
    off = 1000;
    T(sendfile(fd, f, &off, 100000) == 100000);
    NOTE("offset now %lld", (long long)off);
    T(lseek(f, 0, SEEK_CUR));
    h = d_fnv(h, data + 1000, 100000);
    /* The kernel may send less than asked; loop like an application. */
    T(lseek(f, 200000, SEEK_SET));
    for (long left = 100000; left > 0;) {
        n = sendfile(fd, f, NULL, (size_t)left);
        if (n <= 0)
            break;
        left -= n;
    }
    T(lseek(f, 0, SEEK_CUR));
    h = d_fnv(h, data + 200000, 100000);
    off = FSIZE - 10;
    T(sendfile(fd, f, &off, 1000));
    h = d_fnv(h, data + FSIZE - 10, 10);
    T(sendfile(fd, f, &off, 1000));
    T(shutdown(fd, SHUT_WR));
    n = T(d_read_full(fd, reply, sizeof(reply)));
    snprintf(want, sizeof(want), "bytes=%d fnv=%08x\n", 200010, h);
    NOTE("sink %s, %s", tr_data(reply, n > 0 ? (size_t)n : 0),
         n > 0 && strncmp(reply, want, (size_t)n) == 0 ? "matches"
                                                       : "MISMATCH");
    T(close(fd));
    T(close(f));
    return 0;
}
