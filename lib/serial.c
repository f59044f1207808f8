/* 16550 UART at 115200 8N1, its output polled; its receive interrupt on
 * once the hypervisor takes it (serial_rx_irq), else off. */
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
	uint8_t lsr;
	return serial_getc_lsr(&lsr);
}

/* PC16550D, "Line Status Register": the error bits (overrun 1, parity 2,
 * framing 3, break 4) belong to the character at the top of the FIFO and
 * are cleared by reading LSR, so one read per character, before it. */
int serial_getc_lsr(uint8_t *lsr)
{
	*lsr = serial_port ? inb(serial_port + UART_LSR) : 0;
	if (!(*lsr & LSR_DATA_READY))
		return -1;
	return inb(serial_port + UART_THR);   /* RBR at the same offset */
}

void serial_rx_irq(bool on)
{
	if (!serial_port)
		return;
	/* IER: received data (0) and line status (2, a break); MCR: DTR, RTS
	 * and OUT2, which gates the UART's interrupt onto the ISA IRQ line on
	 * the PC. */
	outb(serial_port + UART_IER, on ? 0x05 : 0x00);
	outb(serial_port + UART_MCR, on ? 0x0b : 0x03);
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
