/*
 * tpc_server: a thread-per-connection echo server (the classic blocking
 * model: an accept loop spawning one detached pthread per connection,
 * each echoing with blocking recv/send until EOF, then closing).
 *
 *   tpc_server IP PORT CONNS
 *
 * Prints "listening" once the listener is up, serves CONNS connections,
 * waits for their threads, prints "served N bytes=B maxlive=M" (M: the
 * most connection threads alive at once) and exits 0; any socket error
 * prints "FAIL: ..." and exits 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static atomic_int live, maxlive, done, errors;
static atomic_ullong bytes;

static void *
serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[16384];
    int now = atomic_fetch_add(&live, 1) + 1, m = atomic_load(&maxlive);

    while (now > m && !atomic_compare_exchange_weak(&maxlive, &m, now))
        ;
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0), off = 0;

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            printf("FAIL: recv: %s\n", strerror(errno));
            atomic_fetch_add(&errors, 1);
        }
        if (n <= 0)
            break;
        atomic_fetch_add(&bytes, (unsigned long long)n);
        while (off < n) {
            ssize_t w = send(fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);

            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                printf("FAIL: send: %s\n", strerror(errno));
                atomic_fetch_add(&errors, 1);
                goto out;
            }
            off += w;
        }
    }
out:
    close(fd);
    atomic_fetch_sub(&live, 1);
    atomic_fetch_add(&done, 1);
    return NULL;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    int ls, one = 1, conns;
    pthread_attr_t attr;

    if (argc != 4 || inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) {
        fprintf(stderr, "usage: tpc_server IP PORT CONNS\n");
        return 2;
    }
    a.sin_port = htons((uint16_t)atoi(argv[2]));
    conns = atoi(argv[3]);
    ls = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(ls, 128) != 0) {
        printf("FAIL: listener: %s\n", strerror(errno));
        return 1;
    }
    printf("listening\n");
    fflush(stdout);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < conns; i++) {
        int fd = accept(ls, NULL, NULL);
        pthread_t t;

        if (fd < 0 && errno == EINTR) {
            i--;
            continue;
        }
        if (fd < 0) {
            printf("FAIL: accept: %s\n", strerror(errno));
            return 1;
        }
        if (pthread_create(&t, &attr, serve, (void *)(intptr_t)fd) != 0) {
            printf("FAIL: pthread_create\n");
            return 1;
        }
    }
    while (atomic_load(&done) < conns)
        usleep(1000);
    close(ls);
    printf("served %d bytes=%llu maxlive=%d\n", conns,
           (unsigned long long)atomic_load(&bytes), atomic_load(&maxlive));
    return atomic_load(&errors) ? 1 : 0;
}
