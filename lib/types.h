/* Basic freestanding types shared by every module (and by host unit tests). */
#ifndef LIB_TYPES_H
#define LIB_TYPES_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdarg.h>

typedef uint64_t paddr_t;

#define KIB(x) ((uint64_t)(x) << 10)
#define MIB(x) ((uint64_t)(x) << 20)
#define GIB(x) ((uint64_t)(x) << 30)
#define PAGE_SIZE 4096ull
#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BIT(n) (1ull << (n))
#define __packed __attribute__((packed))
#define __aligned(n) __attribute__((aligned(n)))
#define __noreturn __attribute__((noreturn))
#define __printf(a, b) __attribute__((format(printf, a, b)))

#endif
