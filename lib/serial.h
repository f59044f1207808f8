/* 16550 UART console. */
#ifndef LIB_SERIAL_H
#define LIB_SERIAL_H
#include "types.h"
#define COM1_PORT 0x3f8
void serial_init(uint16_t port);
void serial_write(const char *s, size_t n);
/* Waits (bounded) until the UART has sent everything. */
void serial_flush(void);
#endif
