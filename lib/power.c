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

void power_init(int exit_mode, const struct acpi_info *a)
{
	mode = exit_mode;
	acpi = a;
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
