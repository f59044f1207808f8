/* Freestanding string helpers; the compiler may emit calls to the mem* ones. */
#include "string.h"

#ifndef HV_HOST_TEST
/* Weak: GNU-EFI's libefi brings its own memset and memcpy into hv.efi. */
__attribute__((weak)) void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}

__attribute__((weak)) void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	if (dp < sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

int strcmp(const char *a, const char *b)
{
	return strncmp(a, b, (size_t)-1);
}

char *strchr(const char *s, int c)
{
	for (; *s; s++)
		if (*s == (char)c)
			return (char *)s;
	return c ? NULL : (char *)s;
}
#endif

bool str_to_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		len -= 2;
	}
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}
