/*
 * The per-thread "inside the library" mark. While it is non-zero, every
 * interposed function passes straight to libc, so calls made by the stack,
 * the runtime or DPDK never re-enter the library. Set by preload wrappers
 * around calls into the stack/runtime, and permanently (1) in threads the
 * library owns (progress thread).
 */
#ifndef ACCEL_BASE_INLIB_H
#define ACCEL_BASE_INLIB_H

#ifdef __cplusplus
extern "C" {
#endif

extern __thread int base_in_lib;

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_INLIB_H */
