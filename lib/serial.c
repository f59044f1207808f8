/* 16550 UART at 115200 8N1, polled; its interrupts stay off. */
#include "serial.h"
#include "cpu.h"

enum { UART_THR = 0, UART_IER = 1, UART_FCR = 2, UART_LCR = 3, UART_MCR = 4, UART_LSR = 5 };
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY 0x20
#define LSR_TX_IDLE   0x40

static uint16_t serial_port;

void serial_init(uint16_t port)
{
	serial_port = port;
	outb(port + UART_IER, 0x00);
	outb(port + UART_LCR, 0x80);     /* DLAB: divisor follows */
	outb(port + 0, 1);               /* 115200 baud */
	outb(port + 1, 0);
	outb(port + UART_LCR, 0x03);     /* 8N1 */
	outb(port + UART_FCR, 0xc7);     /* FIFO on, cleared */
	outb(port + UART_MCR, 0x03);     /* DTR, RTS */
}

static void serial_putc(char c)
{
	/* Bounded wait: a missing UART must not hang the boot. */
	for (int i = 0; i < 100000 && !(inb(serial_port + UART_LSR) & LSR_THR_EMPTY); i++)
		cpu_relax();
	outb(serial_port + UART_THR, (uint8_t)c);
}

void serial_write(const char *s, size_t n)
{
	if (!serial_port)
		return;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			serial_putc('\r');
		serial_putc(s[i]);
	}
}

void serial_write_raw(const char *s, size_t n)
{
	for (size_t i = 0; serial_port && i < n; i++)
		serial_putc(s[i]);
}

int serial_getc(void)
{
	if (!serial_port || !(inb(serial_port + UART_LSR) & LSR_DATA_READY))
		return -1;
	return inb(serial_port + UART_THR);   /* RBR at the same offset */
}

void serial_config(uint8_t *lcr, uint8_t *ier, uint8_t *mcr, uint16_t *divisor)
{
	*lcr = *ier = *mcr = 0;
	*divisor = 0;
	if (!serial_port)
		return;
	*lcr = inb(serial_port + UART_LCR);
	*ier = inb(serial_port + UART_IER);
	*mcr = inb(serial_port + UART_MCR);
	outb(serial_port + UART_LCR, *lcr | 0x80);
	*divisor = (uint16_t)(inb(serial_port) | inb(serial_port + 1) << 8);
	outb(serial_port + UART_LCR, *lcr);
}

uint16_t serial_base(void)
{
	return serial_port;
}

void serial_flush(void)
{
	for (int i = 0; serial_port && i < 1000000 && !(inb(serial_port + UART_LSR) & LSR_TX_IDLE); i++)
		cpu_relax();
}
