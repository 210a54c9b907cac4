/*
 * The interface lock (ifacelock_file.c): one accel process starts the
 * port of an interface (ifacelock.c explains why); `accel-run --prepare`
 * takes the same lock while it attaches the program.
 */
#ifndef ACCEL_RT_IFACELOCK_H
#define ACCEL_RT_IFACELOCK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Take the lock of iface in this network namespace without waiting.
 *  0 with *fd holding it (closing the last copy releases it); -EBUSY with
 *  the holder's pid in owner ("?" when unknown); -errno when the file
 *  cannot be opened or locked. path receives the file's name. */
int rt__iface_lock_try(const char *iface, int *fd, char *owner, size_t on,
                       char *path, size_t pn);

#ifdef __cplusplus
}
#endif

#endif
