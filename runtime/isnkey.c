/*
 * The key of the stack's initial sequence numbers (stack/isn.c), shared by
 * the accel processes of the host, as Linux has one per boot.
 *
 * ISN = clock + SipHash(4-tuple, key). With a key per process, a client
 * process that reuses a port pair still in a server's TIME-WAIT (the
 * server closed first: nginx after keepalive_requests, any
 * "Connection: close") sends a SYN whose sequence number is below the old
 * connection's half of the time; the server then answers with an ACK
 * instead of accepting it (RFC 793; Linux and our stack accept a SYN past
 * the old sequence), the client resets and retries, and the connect
 * fails. With one key, a later connection on the same 4-tuple always
 * starts past the earlier one, across processes too.
 *
 * The key lives in /run/accel/isn.key, mode 0600: a process that can read
 * it (root, or a child of a root process that started the data path
 * before dropping privileges, like nginx's workers) uses it; the first
 * one creates it (written to a temporary file and linked into place, so
 * no reader sees half a key). A process that can do neither keeps a key
 * of its own, as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "rt_int.h"
#include "stk.h"

#define KEY_DIR "/run/accel"
#define KEY_PATH KEY_DIR "/isn.key"

static bool
read_key(uint64_t key[2])
{
    long fd = syscall(SYS_openat, AT_FDCWD, KEY_PATH, O_RDONLY | O_CLOEXEC);
    long n;

    if (fd < 0)
        return false;
    n = syscall(SYS_read, (int)fd, key, 2 * sizeof(uint64_t));
    syscall(SYS_close, (int)fd);
    return n == (long)(2 * sizeof(uint64_t));
}

static void
create_key(void)
{
    char tmp[64];
    uint64_t key[2];
    long fd, n;

    if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
        return;
    syscall(SYS_mkdir, KEY_DIR, 0755);
    snprintf(tmp, sizeof(tmp), KEY_DIR "/.isn.key.%d", (int)getpid());
    fd = syscall(SYS_openat, AT_FDCWD, tmp,
                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    n = syscall(SYS_write, (int)fd, key, sizeof(key));
    syscall(SYS_close, (int)fd);
    if (n == (long)sizeof(key))
        syscall(SYS_linkat, AT_FDCWD, tmp, AT_FDCWD, KEY_PATH, 0);
    syscall(SYS_unlinkat, AT_FDCWD, tmp, 0);
}

void
rt__isn_key_load(void)
{
    uint64_t key[2];

    if (!read_key(key)) {
        create_key(); /* another process may win the link: read again */
        if (!read_key(key)) {
            BASE_DBG("start",
                     "%s not readable (%s): this process's initial "
                     "sequence numbers use a key of its own",
                     KEY_PATH, strerror(errno));
            return;
        }
    }
    stk_isn_set_key(key);
}
