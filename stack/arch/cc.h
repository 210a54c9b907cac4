/*
 * lwIP port: compiler and platform glue for Linux/glibc (gcc). Included by
 * lwip/arch.h; never included directly. Diagnostics go to our log (never
 * stdout); assertions log through BASE_ERR and count, and abort only in
 * debug builds (NDEBUG unset).
 */
#ifndef ACCEL_ARCH_CC_H
#define ACCEL_ARCH_CC_H

/* lwip/arch.h defines LITTLE_ENDIAN/BIG_ENDIAN as plain numbers just
 * before including us; glibc's <endian.h> defines them differently. Let
 * glibc's definitions win so the two never clash in one translation unit. */
#ifndef _ENDIAN_H
#undef LITTLE_ENDIAN
#undef BIG_ENDIAN
#endif
#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define BYTE_ORDER __BYTE_ORDER

/* Byte swapping through the compiler builtins (lwIP derives ntoh*). */
#define lwip_htons(x) ((uint16_t)htobe16((uint16_t)(x)))
#define lwip_htonl(x) ((uint32_t)htobe32((uint32_t)(x)))

#define LWIP_ERRNO_STDINCLUDE 1 /* lwIP's errno values = <errno.h> */

#define PACK_STRUCT_STRUCT __attribute__((packed))
#define PACK_STRUCT_BEGIN
#define PACK_STRUCT_END
#define PACK_STRUCT_FIELD(x) x

#ifdef __cplusplus
extern "C" {
#endif
void stk_lwip_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void stk_lwip_assert(const char *msg, const char *file, int line);
uint32_t stk_rand(void);
void *stk_mem_malloc(size_t size);
void *stk_mem_calloc(size_t n, size_t size);
void stk_mem_free(void *p);
#ifdef __cplusplus
}
#endif

#define LWIP_PLATFORM_DIAG(x)                                                  \
    do {                                                                       \
        stk_lwip_diag x;                                                       \
    } while (0)
#define LWIP_PLATFORM_ASSERT(x) stk_lwip_assert((x), __FILE__, __LINE__)

#endif /* ACCEL_ARCH_CC_H */
