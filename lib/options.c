/* Parsing of the hypervisor's command line. */
#include "options.h"
#include "printk.h"
#include "string.h"

const char *const ipi_tier_names[] = { "auto", "ipiv", "fast", "pv", "trap", NULL };
const char *const eoi_tier_names[] = { "auto", "vid", "pv", "trap", NULL };
const char *const timer_tier_names[] = { "auto", "apicv", "deadline", "posted", "preempt", "trap", NULL };
const char *const irq_opt_names[] = { "auto", "virtual", "partition", NULL };
const char *const hlt_opt_names[] = { "auto", "guest", "exit", NULL };
const char *const nxhuge_opt_names[] = { "auto", "on", "off", NULL };
const char *const novmx_opt_names[] = { "linux", "stop", NULL };
const char *const iommu_opt_names[] = { "auto", "require", "off", NULL };
const char *const iommu_qi_names[] = { "auto", "off", NULL };
const char *const ioapic_opt_names[] = { "virtual", "pass", NULL };
const char *const msi_opt_names[] = { "trap", "pass", NULL };
const char *const hpet_opt_names[] = { "auto", "trap", "pass", NULL };
const char *const intremap_opt_names[] = { "auto", "off", "on", NULL };
const char *const exit_mode_names[] = { "none", "auto", "s5", "qemu", "bochs", NULL };
const char *const reboot_opt_names[] = { "auto", "reset", "halt", "report", NULL };
const char *const poweroff_opt_names[] = { "off", "halt", NULL };
static const char *const guest_names[] = { "linux", "none", NULL };
static const uint16_t com_ports[] = { 0x3f8, 0x2f8, 0x3e8, 0x2e8 };

void options_defaults(struct hv_options *o)
{
	memset(o, 0, sizeof *o);
	uart_desc_com(&o->console, com_ports[0]);
	o->loglevel = LOG_INFO;
	o->exit_mode = EXIT_NONE;
	o->ap_timeout_us = 200000;
	o->phantom_cpu = -1;
	o->housekeeping = -1;
	o->hangcheck_s = 10;
	o->vuart = true;
}

static bool word_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && !strncmp(s, lit, n);
}

static int pick(const char *v, size_t n, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (word_eq(v, n, names[i]))
			return i;
	return -1;
}

static void list_names(char *buf, size_t size, const char *const *names)
{
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; names[i] && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
}

/* console=: com1..com4, an I/O port (0x2f8), or "io,PORT", "mmio,ADDR" (1-byte
 * registers 1 apart), "mmio32,ADDR" (4-byte registers 4 apart), each with
 * ",BAUD" (a number, Linux's "115200n8" taken too, or "keep": the divisor
 * the firmware left) and ",stride=1|2|4" after it. Baud 115200 unless said.
 * An MMIO UART must lie below 4 GiB (the hypervisor's map of the machine
 * before it knows the RAM's end). */
static bool parse_console(const char *v, size_t n, struct uart_desc *d)
{
	const char *f[4] = { 0 };
	size_t fl[4] = { 0 }, nf = 0;
	for (size_t i = 0, s = 0; i <= n; i++)
		if (i == n || v[i] == ',') {
			if (nf == 4)
				return false;
			f[nf] = v + s;
			fl[nf++] = i - s;
			s = i + 1;
		}
	uint64_t x;
	struct uart_desc t;
	size_t next = 1;
	if (fl[0] == 4 && !strncmp(f[0], "com", 3) && f[0][3] >= '1' && f[0][3] <= '4') {
		uart_desc_com(&t, com_ports[f[0][3] - '1']);
	} else if (str_to_u64(f[0], fl[0], &x)) {
		if (!x || x > 0xfff8)
			return false;
		uart_desc_com(&t, (uint16_t)x);
	} else if (nf >= 2 && (word_eq(f[0], fl[0], "io") || word_eq(f[0], fl[0], "mmio") || word_eq(f[0], fl[0], "mmio32"))) {
		if (!str_to_u64(f[1], fl[1], &x) || !x)
			return false;
		next = 2;
		if (f[0][0] == 'i') {
			if (x > 0xfff8)
				return false;
			uart_desc_com(&t, (uint16_t)x);
		} else {
			bool w32 = fl[0] == 6;
			if (x >= (1ull << 32) - 0x20 || x & (w32 ? 3 : 0))
				return false;
			t = (struct uart_desc){ .space = UART_MMIO, .width = w32 ? 4 : 1, .shift = w32 ? 2 : 0,
						.base = x, .baud = 115200, .gsi = -1 };
		}
	} else {
		return false;
	}
	for (; next < nf; next++) {
		const char *w = f[next];
		size_t l = fl[next];
		if (l > 7 && !strncmp(w, "stride=", 7)) {
			if (!str_to_u64(w + 7, l - 7, &x) || (x != 1 && x != 2 && x != 4) || t.space != UART_MMIO ||
			    x < t.width)
				return false;
			t.shift = (uint8_t)(x == 4 ? 2 : x == 2 ? 1 : 0);
		} else if (word_eq(w, l, "keep")) {
			t.baud = 0;
		} else {
			if (l > 2 && w[l - 2] == 'n' && w[l - 1] == '8')
				l -= 2;             /* Linux's 115200n8: no parity, 8 bits, what the UART is set to */
			if (!str_to_u64(w, l, &x) || x < 50 || x > 4000000)
				return false;
			t.baud = (uint32_t)x;
		}
	}
	*d = t;
	return true;
}

/* The last valid console= word; false (and *d untouched) when none. */
bool options_console(const char *cmdline, struct uart_desc *d)
{
	bool found = false;
	const char *p = cmdline;
	while (p && *p) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *w = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (p - w > 8 && !strncmp(w, "console=", 8) && parse_console(w + 8, p - w - 8, d))
			found = true;
	}
	return found;
}

static int parse_word(const char *w, size_t wl, struct hv_options *o, char *err, size_t errlen);

/* Parses every word even after an error, so that a later exit= or console=
 * still takes effect; the first error is the one reported. */
int options_parse(const char *cmdline, struct hv_options *o, char *err, size_t errlen)
{
	const char *p = cmdline;
	int rc = 0;
	char tmp[160] = "";

	while (p && *p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *w = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (parse_word(w, p - w, o, rc ? tmp : err, rc ? sizeof tmp : errlen))
			rc = -1;
	}
	return rc;
}

static int parse_word(const char *w, size_t wl, struct hv_options *o, char *err, size_t errlen)
{
	char names[96];

	{
		const char *p = w + wl;
		const char *eq = w;
		while (eq < p && *eq != '=')
			eq++;
		if (eq == p && word_eq(w, wl, "probe")) {   /* the one bare word */
			o->probe = true;
			return 0;
		}
		if (eq == p) {
			snprintf(err, errlen, "option '%.*s': expected key=value (or probe)", (int)wl, w);
			return -1;
		}
		size_t kl = eq - w, vl = p - eq - 1;
		const char *v = eq + 1;
		const char *const *table = NULL;
		int *slot = NULL;
		uint64_t num;

		if (word_eq(w, kl, "ipi")) { table = ipi_tier_names; slot = &o->ipi; }
		else if (word_eq(w, kl, "eoi")) { table = eoi_tier_names; slot = &o->eoi; }
		else if (word_eq(w, kl, "timer")) { table = timer_tier_names; slot = &o->timer; }
		else if (word_eq(w, kl, "irq")) { table = irq_opt_names; slot = &o->irq; }
		else if (word_eq(w, kl, "ioapic")) { table = ioapic_opt_names; slot = &o->ioapic; }
		else if (word_eq(w, kl, "msi")) { table = msi_opt_names; slot = &o->msi; }
		else if (word_eq(w, kl, "hpet")) { table = hpet_opt_names; slot = &o->hpet; }
		else if (word_eq(w, kl, "hlt")) { table = hlt_opt_names; slot = &o->hlt; }
		else if (word_eq(w, kl, "nxhuge")) { table = nxhuge_opt_names; slot = &o->nxhuge; }
		else if (word_eq(w, kl, "novmx")) { table = novmx_opt_names; slot = &o->novmx; }
		else if (word_eq(w, kl, "exit")) { table = exit_mode_names; slot = &o->exit_mode; }
		else if (word_eq(w, kl, "on_reboot")) { table = reboot_opt_names; slot = &o->on_reboot; }
		else if (word_eq(w, kl, "on_poweroff")) { table = poweroff_opt_names; slot = &o->on_poweroff; }
		else if (word_eq(w, kl, "iommu")) { table = iommu_opt_names; slot = &o->iommu; }
		else if (word_eq(w, kl, "iommuqi")) { table = iommu_qi_names; slot = &o->iommu_qi; }
		else if (word_eq(w, kl, "intremap")) { table = intremap_opt_names; slot = &o->intremap; }
		else if (word_eq(w, kl, "guest")) {
			int g = pick(v, vl, guest_names);
			if (g < 0) {
				list_names(names, sizeof names, guest_names);
				snprintf(err, errlen, "option '%.*s': bad value, expected one of %s", (int)wl, w, names);
				return -1;
			}
			o->vmx_smoke_only = g == 1;
			return 0;
		} else if (word_eq(w, kl, "console")) {
			if (!parse_console(v, vl, &o->console)) {
				snprintf(err, errlen, "option '%.*s': expected com1..com4, an I/O port like 0x2f8, or io,PORT / mmio,ADDR / mmio32,ADDR, then ,BAUD (or ,keep) and ,stride=1|2|4",
					 (int)wl, w);
				return -1;
			}
			o->console_set = true;
			return 0;
		} else if (word_eq(w, kl, "loglevel")) {
			if (!str_to_u64(v, vl, &num) || num > LOG_DEBUG) {
				snprintf(err, errlen, "option '%.*s': expected a number 0..3", (int)wl, w);
				return -1;
			}
			o->loglevel = (int)num;
			return 0;
		} else if (word_eq(w, kl, "smp")) {
			if (!str_to_u64(v, vl, &num) || !num || num > 4096) {
				snprintf(err, errlen, "option '%.*s': expected a CPU count 1..4096", (int)wl, w);
				return -1;
			}
			o->max_cpus = (uint32_t)num;
			return 0;
		} else if (word_eq(w, kl, "aptimeout")) {
			if (!str_to_u64(v, vl, &num) || num < 1000 || num > 60000000) {
				snprintf(err, errlen, "option '%.*s': expected microseconds 1000..60000000", (int)wl, w);
				return -1;
			}
			o->ap_timeout_us = num;
			return 0;
		} else if (word_eq(w, kl, "housekeeping")) {
			if (!str_to_u64(v, vl, &num) || num >= 0xffffffffull) {
				snprintf(err, errlen, "option '%.*s': expected the APIC ID of a CPU to keep for the timer service", (int)wl, w);
				return -1;
			}
			o->housekeeping = (int64_t)num;
			return 0;
		} else if (word_eq(w, kl, "phantomcpu")) {
			if (!str_to_u64(v, vl, &num) || num >= 0xffffffffull) {
				snprintf(err, errlen, "option '%.*s': expected an APIC ID below 0xffffffff", (int)wl, w);
				return -1;
			}
			o->phantom_cpu = (int64_t)num;
			return 0;
		} else if (word_eq(w, kl, "report")) {
			if (!str_to_u64(v, vl, &num) || num > 86400) {
				snprintf(err, errlen, "option '%.*s': expected seconds 0..86400 (0: no periodic report)", (int)wl, w);
				return -1;
			}
			o->report_s = (uint32_t)num;
			return 0;
		} else if (word_eq(w, kl, "reportcpus")) {
			if (word_eq(v, vl, "auto")) {
				o->report_cpus = REPORT_CPUS_AUTO;
			} else if (word_eq(v, vl, "all")) {
				o->report_cpus = REPORT_CPUS_ALL;
			} else if (!str_to_u64(v, vl, &num) || num < 1 || num > 4096) {
				snprintf(err, errlen, "option '%.*s': expected auto, all or a count of vCPUs 1..4096", (int)wl, w);
				return -1;
			} else {
				o->report_cpus = (uint32_t)num;
			}
			return 0;
		} else if (word_eq(w, kl, "hangcheck")) {
			if (!str_to_u64(v, vl, &num) || num > 3600) {
				snprintf(err, errlen, "option '%.*s': expected seconds 0..3600 (0: no hang check)", (int)wl, w);
				return -1;
			}
			o->hangcheck_s = (uint32_t)num;
			return 0;
		} else if (word_eq(w, kl, "ipivtest")) {
			if (vl != 1 || (v[0] != '0' && v[0] != '1')) {
				snprintf(err, errlen, "option '%.*s': expected 0 or 1", (int)wl, w);
				return -1;
			}
			o->ipiv_test = v[0] == '1';
			return 0;
		} else if (word_eq(w, kl, "iommutest")) {
			/* preon: the test aid with the units first left on as by
			 * pre-boot DMA protection (testaid/preon.h). */
			bool preon = vl == 5 && !memcmp(v, "preon", 5);
			bool ioapic = vl == 6 && !memcmp(v, "ioapic", 6);
			bool sriov = vl == 5 && !memcmp(v, "sriov", 5);
			if (!preon && !ioapic && !sriov && (vl != 1 || (v[0] != '0' && v[0] != '1'))) {
				snprintf(err, errlen, "option '%.*s': expected 0, 1, preon, ioapic or sriov", (int)wl, w);
				return -1;
			}
			o->iommu_test = preon || (!ioapic && !sriov && v[0] == '1');
			o->iommu_preon = preon;
			o->iommu_ioapic_test = ioapic;
			o->iommu_sriov_test = sriov;
			return 0;
		} else if (word_eq(w, kl, "vuart")) {
			if (vl != 1 || (v[0] != '0' && v[0] != '1')) {
				snprintf(err, errlen, "option '%.*s': expected 0 or 1", (int)wl, w);
				return -1;
			}
			o->vuart = v[0] == '1';
			return 0;
		} else if (word_eq(w, kl, "bochstest")) {
			if (vl != 1 || (v[0] != '0' && v[0] != '1')) {
				snprintf(err, errlen, "option '%.*s': expected 0 or 1", (int)wl, w);
				return -1;
			}
			o->bochs_test = v[0] == '1';
			return 0;
		} else {
			snprintf(err, errlen, "option '%.*s': unknown option (known: console, loglevel, irq, ioapic, msi, hpet, hlt, novmx, ipi, eoi, timer, exit, on_reboot, on_poweroff, smp, housekeeping, guest, aptimeout, phantomcpu, ipivtest, report, reportcpus, hangcheck, iommu, iommuqi, intremap, iommutest, vuart, bochstest)", (int)wl, w);
			return -1;
		}
		int idx = pick(v, vl, table);
		if (idx < 0) {
			list_names(names, sizeof names, table);
			snprintf(err, errlen, "option '%.*s': bad value, expected one of %s", (int)wl, w, names);
			return -1;
		}
		*slot = idx;
	}
	return 0;
}
