/* Helpers shared by the firmware-table parsers (lib/acpi.c, lib/dmar.c):
 * unaligned little-endian reads, and the error message that a parser
 * writes into its caller's buffer. */
#ifndef LIB_TBLREAD_H
#define LIB_TBLREAD_H

#include "types.h"
#include "string.h"
#include "printk.h"

static inline uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, sizeof v); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, sizeof v); return v; }
static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, sizeof v); return v; }

/* The message into err[errlen] (nothing when err is NULL). */
static inline __printf(3, 4) void tbl_say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
}
/* The message, and -1: visibly -1 at every call (an analyzer does not
 * follow a variadic function's return value). */
#define fail(err, errlen, ...) (tbl_say((err), (errlen), __VA_ARGS__), -1)

#endif
