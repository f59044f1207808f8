/* Kernel-style logging to the serial console.  Every line has a level; lines
 * below the current level are dropped.  Host tests capture output instead. */
#ifndef LIB_PRINTK_H
#define LIB_PRINTK_H
#include "types.h"

enum log_level { LOG_ERR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };
extern int log_level;

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
void printk_level(int level, const char *fmt, ...) __printf(2, 3);
#define pr_err(...)   printk_level(LOG_ERR, __VA_ARGS__)
#define pr_warn(...)  printk_level(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  printk_level(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) printk_level(LOG_DEBUG, __VA_ARGS__)
/* Output sink; serial in the hypervisor, a buffer in host tests. */
void printk_write(const char *s, size_t n);
/* Output of the guest's console under the console lock, as it is: a whole
 * line, or a part of one (a prompt, an echo), which leaves the row open: a
 * hypervisor line then starts on a row of its own ("\r\n" first), never
 * spliced into it. 'end_line' ends an open row at once. */
void printk_guest_line(const char *s, size_t n, bool end_line);
/* The console UART's settings, read under the console lock. */
void printk_serial_config(uint8_t *lcr, uint8_t *ier, uint8_t *mcr, uint16_t *divisor);

__noreturn void panic(const char *fmt, ...) __printf(1, 2);
extern volatile bool hv_panicking;
/* Set by the platform once the local APIC is up: stops every other CPU
 * (an NMI to all but self, which trap_handler halts on). */
extern void (*panic_stop_others)(void);
/* A CPU stopped by another (hv_panicking, an NMI): stop_hook first (the
 * VMX layer leaves VMX operation on it when the machine is to be reset),
 * then it halts for good. */
extern void (*stop_hook)(void);
__noreturn void cpu_stop(void);
/* Stops every other CPU as panic() does (hv_panicking set: their NMI halts
 * them, printk no longer waits on a lock they may hold), without its PANIC
 * line: for an end said already (a guest that died, vmx/exit_io.c). */
void stop_other_cpus(void);
#endif
