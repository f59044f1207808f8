/* 16550 UART, its output polled; its receive interrupt on once the
 * hypervisor takes it (serial_rx_irq), else off. Registers by number
 * (PC16550D data sheet, "Register Addressing"), reached on an I/O port or
 * in memory at base + (r << shift). */
#include "serial.h"
#include "cpu.h"

enum { UART_THR = 0, UART_IER = 1, UART_FCR = 2, UART_LCR = 3, UART_MCR = 4, UART_LSR = 5 };
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY 0x20
#define LSR_TX_IDLE   0x40

static struct uart_desc uart;

static uint8_t rd(unsigned r)
{
	uint64_t a = uart.base + ((uint64_t)r << uart.shift);
	if (uart.space == UART_IO)
		return inb((uint16_t)a);
	if (uart.width == 4)
		return (uint8_t)*(volatile uint32_t *)(uintptr_t)a;
	return *(volatile uint8_t *)(uintptr_t)a;
}

static void wr(unsigned r, uint8_t v)
{
	uint64_t a = uart.base + ((uint64_t)r << uart.shift);
	if (uart.space == UART_IO)
		outb((uint16_t)a, v);
	else if (uart.width == 4)
		*(volatile uint32_t *)(uintptr_t)a = v;
	else
		*(volatile uint8_t *)(uintptr_t)a = v;
}

void serial_init_desc(const struct uart_desc *d)
{
	uart = *d;
	if (uart.space == UART_NONE)
		return;
	wr(UART_IER, 0x00);
	if (uart.baud) {
		uint32_t clk = uart.clock ? uart.clock : UART_CLOCK_PC;
		uint32_t div = (clk + 8 * uart.baud) / (16 * uart.baud);   /* the nearest divisor */
		if (!div)
			div = 1;
		if (div > 0xffff)
			div = 0xffff;
		wr(UART_LCR, 0x80);      /* DLAB: divisor follows */
		wr(0, (uint8_t)div);
		wr(1, (uint8_t)(div >> 8));
	}
	wr(UART_LCR, 0x03);              /* 8N1, DLAB clear: the divisor stays */
	wr(UART_FCR, 0xc7);              /* FIFO on, cleared */
	wr(UART_MCR, 0x03);              /* DTR, RTS */
}

static void serial_putc(char c)
{
	/* Bounded wait: a missing UART must not hang the boot. */
	for (int i = 0; i < 100000 && !(rd(UART_LSR) & LSR_THR_EMPTY); i++)
		cpu_relax();
	wr(UART_THR, (uint8_t)c);
}

void serial_write(const char *s, size_t n)
{
	if (!uart.space)
		return;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			serial_putc('\r');
		serial_putc(s[i]);
	}
}

void serial_write_raw(const char *s, size_t n)
{
	for (size_t i = 0; uart.space && i < n; i++)
		serial_putc(s[i]);
}

int serial_getc(void)
{
	uint8_t lsr;
	return serial_getc_lsr(&lsr);
}

/* PC16550D, "Line Status Register": the error bits (overrun 1, parity 2,
 * framing 3, break 4) belong to the character at the top of the FIFO and
 * are cleared by reading LSR, so one read per character, before it. */
int serial_getc_lsr(uint8_t *lsr)
{
	*lsr = uart.space ? rd(UART_LSR) : 0;
	if (!(*lsr & LSR_DATA_READY))
		return -1;
	return rd(UART_THR);   /* RBR at the same offset */
}

void serial_rx_irq(bool on)
{
	if (!uart.space)
		return;
	/* IER: received data (0) and line status (2, a break); MCR: DTR, RTS
	 * and OUT2, which gates the UART's interrupt onto the ISA IRQ line on
	 * the PC. */
	wr(UART_IER, on ? 0x05 : 0x00);
	wr(UART_MCR, on ? 0x0b : 0x03);
}

void serial_config(uint8_t *lcr, uint8_t *ier, uint8_t *mcr, uint16_t *divisor)
{
	*lcr = *ier = *mcr = 0;
	*divisor = 0;
	if (!uart.space)
		return;
	*lcr = rd(UART_LCR);
	*ier = rd(UART_IER);
	*mcr = rd(UART_MCR);
	wr(UART_LCR, *lcr | 0x80);
	*divisor = (uint16_t)(rd(0) | rd(1) << 8);
	wr(UART_LCR, *lcr);
}

uint16_t serial_base(void)
{
	return uart.space == UART_IO ? (uint16_t)uart.base : 0;
}

const struct uart_desc *serial_desc(void)
{
	return &uart;
}

void serial_flush(void)
{
	for (int i = 0; uart.space && i < 1000000 && !(rd(UART_LSR) & LSR_TX_IDLE); i++)
		cpu_relax();
}
