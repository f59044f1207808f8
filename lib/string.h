/* Freestanding string helpers. Host unit tests use libc's instead. */
#ifndef LIB_STRING_H
#define LIB_STRING_H
#include "types.h"
#ifdef HV_HOST_TEST
#include <string.h>
#else
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
#endif
/* Parses an unsigned number: decimal, or hex with 0x. Returns false on junk. */
bool str_to_u64(const char *s, size_t len, uint64_t *out);
#endif
