/* vsnprintf, leveled printk to the serial console, and panic. */
#include "printk.h"
#include "serial.h"
#include "spinlock.h"
#include "string.h"

int log_level = LOG_INFO;
static spinlock_t printk_lock;

struct outbuf { char *buf; size_t size, len; };

static void out_c(struct outbuf *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_num(struct outbuf *o, uint64_t v, unsigned base, bool neg, int width, bool zero, bool left, bool upper)
{
	char tmp[24];
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int n = 0;
	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	int pad = width > n + neg ? width - n - neg : 0;
	if (neg && zero)
		out_c(o, '-');
	if (!left)
		while (pad-- > 0)
			out_c(o, zero ? '0' : ' ');
	if (neg && !zero)
		out_c(o, '-');
	while (n)
		out_c(o, tmp[--n]);
	if (left)
		while (pad-- > 0)
			out_c(o, ' ');
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct outbuf o = { buf, size, 0 };
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			out_c(&o, *fmt);
			continue;
		}
		bool zero = false, left = false;
		int width = 0, lng = 0, prec = -1;
		fmt++;
		for (;; fmt++) {
			if (*fmt == '0') zero = true;
			else if (*fmt == '-') left = true;
			else break;
		}
		if (*fmt == '*') { width = va_arg(ap, int); fmt++; }
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		if (*fmt == '.') {
			fmt++;
			prec = 0;
			if (*fmt == '*') { prec = va_arg(ap, int); fmt++; }
			while (*fmt >= '0' && *fmt <= '9')
				prec = prec * 10 + (*fmt++ - '0');
		}
		while (*fmt == 'l') { lng++; fmt++; }
		if (*fmt == 'z') { lng = 2; fmt++; }
		switch (*fmt) {
		case 'd': case 'i': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
			out_num(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0, width, zero, left, false);
			break;
		}
		case 'u': case 'x': case 'X': {
			uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int);
			out_num(&o, v, *fmt == 'u' ? 10 : 16, false, width, zero, left, *fmt == 'X');
			break;
		}
		case 'p':
			out_c(&o, '0'); out_c(&o, 'x');
			out_num(&o, (uintptr_t)va_arg(ap, void *), 16, false, 16, true, false, false);
			break;
		case 'c':
			out_c(&o, (char)va_arg(ap, int));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s) s = "(null)";
			int n = 0;
			while (s[n] && (prec < 0 || n < prec)) n++;
			int pad = width > n ? width - n : 0;
			if (!left) while (pad-- > 0) out_c(&o, ' ');
			for (int i = 0; i < n; i++) out_c(&o, s[i]);
			if (left) while (pad-- > 0) out_c(&o, ' ');
			break;
		}
		case '%':
			out_c(&o, '%');
			break;
		default:
			out_c(&o, '%');
			if (*fmt) out_c(&o, *fmt); else fmt--;
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* The guest's row on the wire is open (its last byte out was not a line's
 * end: a prompt, an echo): a hypervisor line starts on a row of its own. */
static bool guest_row_open;

void printk_write(const char *s, size_t n)
{
	if (guest_row_open)
		serial_write_raw("\r\n", 2);
	guest_row_open = false;
	serial_write(s, n);
}

void printk_guest_line(const char *s, size_t n, bool end_line)
{
	spin_lock(&printk_lock);
	serial_write_raw(s, n);
	if (n)
		guest_row_open = s[n - 1] != '\n';
	if (end_line && guest_row_open) {
		serial_write_raw("\r\n", 2);
		guest_row_open = false;
	}
	spin_unlock(&printk_lock);
}

void printk_serial_config(uint8_t *lcr, uint8_t *ier, uint8_t *mcr, uint16_t *divisor)
{
	spin_lock(&printk_lock);
	serial_config(lcr, ier, mcr, divisor);
	spin_unlock(&printk_lock);
}

void printk_level(int level, const char *fmt, ...)
{
	char buf[512];
	if (level > log_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof buf) {
		/* Cut, the line still ends: the next one never splices into it. */
		n = sizeof buf - 1;
		memcpy(buf + n - 5, " ...\n", 6);   /* its NUL at buf[n], the last byte */
	}
	/* While panicking, a CPU the panic stopped may hold the lock forever:
	 * wait a bounded while, then print anyway, so that the verdict and the
	 * exit port are always reached. */
	bool locked = true;
	if (hv_panicking) {
		uint64_t tries = 0;
		while (!(locked = spin_trylock(&printk_lock)) && ++tries < 20000000ull)
			__asm__ volatile("pause");
	} else {
		spin_lock(&printk_lock);
	}
	printk_write(buf, n);
	if (locked)
		spin_unlock(&printk_lock);
}
