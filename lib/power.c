/* The end of a run. */
#include "power.h"
#include "options.h"
#include "printk.h"
#include "cpu.h"
#include "serial.h"

#define QEMU_DEBUG_EXIT_PORT 0xf4   /* -device isa-debug-exit,iobase=0xf4: exit code (v << 1) | 1 */
#define BOCHS_SHUTDOWN_PORT 0x8900  /* "Shutdown" written here ends Bochs */
#define ACPI_SLP_EN BIT(13)

static int mode = EXIT_NONE;
static const struct acpi_info *acpi;
static int on_reboot = REBOOT_RESET, on_poweroff = POWEROFF_OFF;

void power_init(int exit_mode, const struct acpi_info *a)
{
	mode = exit_mode;
	acpi = a;
}

void power_policy(int reboot, int poweroff)
{
	/* auto: a run that ends itself (exit=, the tests) calls a reboot a
	 * death, as before; on a machine (exit=none) it resets. */
	on_reboot = reboot != REBOOT_AUTO ? reboot : mode != EXIT_NONE ? REBOOT_REPORT : REBOOT_RESET;
	on_poweroff = poweroff;
}

int power_on_reboot(void) { return on_reboot; }
int power_on_poweroff(void) { return on_poweroff; }

/* The PC's reset controls, each a byte: the guest's own write first (what
 * it asked for), then the FADT's reset register (ACPI, "Reset Register",
 * where it is a port), the reset control register at 0xCF9 (ICH/PCH data
 * sheets: SYS_RST then RST_CPU with it, a hard reset) and the keyboard
 * controller's pulse of the reset line (command 0xFE at 0x64). */
__noreturn void power_reset(uint16_t port, uint8_t val)
{
	serial_flush();
	if (port)
		outb(port, val);
	if (acpi && acpi->reset_valid && acpi->reset_space == ACPI_SPACE_IO)
		outb((uint16_t)acpi->reset_addr, acpi->reset_value);
	outb(0xcf9, 0x02);
	outb(0xcf9, 0x06);
	outb(0x64, 0xfe);
	pr_err("hv: the machine did not reset\n");
	cpu_halt_forever();
}

__noreturn void power_halt(const char *why)
{
	pr_info("hv: halted: %s\n", why);
	serial_flush();
	cpu_halt_forever();
}

static void acpi_s5(void)
{
	if (!acpi || !acpi->s5_valid || !acpi->pm1a_cnt) {
		pr_err("hv: exit=s5 but the FADT/DSDT gave no S5 sleep type\n");
		return;
	}
	outw(acpi->pm1a_cnt, (uint16_t)((acpi->slp_typa << 10) | ACPI_SLP_EN));
	if (acpi->pm1b_cnt)
		outw(acpi->pm1b_cnt, (uint16_t)((acpi->slp_typb << 10) | ACPI_SLP_EN));
}

static void bochs_shutdown(void)
{
	for (const char *s = "Shutdown"; *s; s++)
		outb(BOCHS_SHUTDOWN_PORT, (uint8_t)*s);
}

__noreturn void hv_exit(bool success)
{
	pr_info("hv: result=%s\n", success ? "pass" : "fail");
	serial_flush();                 /* the emulators stop at once */
	switch (mode) {
	case EXIT_QEMU:
		outl(QEMU_DEBUG_EXIT_PORT, success ? 0x10 : 0x11);   /* QEMU exits 33 or 35 */
		break;
	case EXIT_BOCHS:
		bochs_shutdown();
		break;
	case EXIT_S5:
		acpi_s5();
		break;
	case EXIT_AUTO:
		acpi_s5();
		bochs_shutdown();
		break;
	default:
		break;
	}
	pr_info("hv: halted\n");
	cpu_halt_forever();
}

__noreturn void hv_fail(const char *why)
{
	pr_err("hv: %s\n", why);
	hv_exit(false);
}
