/* The guest's side of its start (see setup.h). */
#include "setup.h"
#include "acpi.h"
#include "../lib/memmap.h"
#include "../lib/options.h"
#include "../lib/percpu.h"
#include "../lib/power.h"
#include "../lib/printk.h"
#include "../apic/lapic.h"

int guest_setup(struct boot_info *bi, const struct acpi_info *acpi, struct guest_boot *gb, char *err, size_t errlen)
{
	paddr_t rsdp = acpi->rsdp ? acpi->rsdp : bi->rsdp;
	if (acpi->madt) {
		/* The guest's MADT lists only its vCPUs: a copy, in its start-up area. */
		static uint32_t ids[MAX_CPUS];
		uint32_t disabled;
		for (paddr_t pa = GUEST_ACPI; pa < GUEST_ACPI + GUEST_ACPI_SIZE; pa += PAGE_SIZE)
			if (memmap_type_at(&bi->mem, pa) != MEM_USABLE) {
				snprintf(err, errlen, "guest: the page for the guest's ACPI copies is not usable RAM");
				return -1;
			}
		for (uint32_t i = 0; i < ncpus; i++)
			ids[i] = cpus[i]->apic_id;
		if (acpi_guest_copy(acpi, ids, ncpus, (uint8_t *)(uintptr_t)GUEST_ACPI, GUEST_ACPI_SIZE, GUEST_ACPI,
				    &rsdp, &disabled, err, errlen))
			return -1;
		pr_info("acpi: the guest's RSDP, root tables and MADT are copies at 0x%llx: %u vCPUs, %u processor entries disabled\n",
			(unsigned long long)rsdp, ncpus, disabled);
	}
	pr_info("acpi: sleep states S1-S4 hidden from the guest (%u DSDT objects renamed); only S5 ends the machine\n",
		acpi_hide_sleep_states(acpi->dsdt));
	/* The probe address for the test guest: the hypervisor image, which lies
	 * below the top of guest RAM, so Linux's /dev/mem lets the read reach EPT
	 * (the heap at the top of RAM is refused by Linux itself, past high_memory). */
	return guest_prepare(bi, rsdp, bi->image_start, gb, err, errlen);
}

/* HLT: the guest's (no exit) is the design. Bochs 3.0 does not wake a
 * halted CPU for a virtual interrupt that became pending while the guest had
 * interrupts off (before its STI; HLT): there the HLT exits and is completed
 * by the hypervisor (exit_hlt, vmx/virq*.c). auto takes the calibration's
 * emulator (an instruction-counting TSC, lib/tsc_choose.c) for Bochs: not a
 * slow rate alone, which a hypervisor's guest on an emulator has too.
 * auto takes KVM too (the hypervisor is KVM's guest, lib/tsc.h): the SDM
 * makes a posted, notified interrupt a wake event ("Virtual-interrupt
 * delivery wakes a logical processor from the same inactive activity states
 * as would an external interrupt", Vol. 3C, "Virtual-Interrupt Delivery"),
 * but KVM's nested VMX before Linux 6.10 (commit 27c4fa42b11a, "Check for
 * pending posted interrupts when looking for nested events") does not wake
 * a halted L2 for one. Under Debian 6.1's KVM (issue 49's nested level) the
 * guest's ipitest timed out with HLT its own (173 of 2000 rounds) and
 * passed with HLT exiting (docs/testing.md). */
bool guest_hlt_exits(int hlt_opt, bool virt, bool emulated, bool under_kvm)
{
	bool hlt_exit = virt && (hlt_opt == HLT_OPT_EXIT || (hlt_opt == HLT_OPT_AUTO && (emulated || under_kvm)));
	pr_info("idle: hlt=%s (%s)\n", hlt_exit ? "exit" : "guest",
		!virt ? "partition model: the guest owns the APIC" :
		hlt_opt != HLT_OPT_AUTO ? "asked for" :
		emulated ? "auto: an emulator's instruction-counting TSC; Bochs 3.0 does not wake HLT for a pending virtual interrupt" :
		under_kvm ? "auto: KVM's guest; its nested VMX before Linux 6.10 does not wake a halted L2 for a posted interrupt" :
		"auto: HLT never exits");
	return hlt_exit;
}

/* Loads the GDT and page tables the Linux 64-bit boot protocol asks for
 * (guest/boot.c built them: __BOOT_CS 0x10, __BOOT_DS 0x18, 0-4 GiB identity
 * mapped) and enters the kernel with RSI = boot_params, interrupts off. The
 * caller's stack and code lie below 4 GiB, so they stay mapped meanwhile. */
static __noreturn void native_jump(uint64_t entry, uint64_t zero_page, uint64_t cr3, uint64_t gdt, uint16_t limit)
{
	struct __attribute__((packed)) { uint16_t limit; uint64_t base; } gdtr = { limit, gdt };
	__asm__ volatile("cli\n\t"
			 "lgdt %0\n\t"
			 "mov %1, %%cr3\n\t"
			 "mov $0x18, %%eax\n\t"
			 "mov %%eax, %%ds\n\t"
			 "mov %%eax, %%es\n\t"
			 "mov %%eax, %%ss\n\t"
			 "mov %%eax, %%fs\n\t"
			 "mov %%eax, %%gs\n\t"
			 "pushq $0x10\n\t"
			 "pushq %2\n\t"
			 "mov %3, %%rsi\n\t"
			 "lretq"
			 : : "m"(gdtr), "r"(cr3), "r"(entry), "r"(zero_page) : "rax", "memory");
	__builtin_unreachable();
}

__noreturn void guest_start_native(struct boot_info *bi, const struct acpi_info *acpi, const char *why)
{
	static struct guest_boot gb;
	char err[256];
	paddr_t rsdp = acpi->rsdp ? acpi->rsdp : bi->rsdp;
	pr_info("vmx: %s: handing the machine to Linux natively (novmx=linux; novmx=stop stops instead)\n", why);
	if (guest_prepare(bi, rsdp, bi->image_start, &gb, err, sizeof err))
		hv_fail(err);
	uintptr_t sp = (uintptr_t)&gb;
	if ((uintptr_t)native_jump >= GIB(4) || (uintptr_t)__builtin_frame_address(0) >= GIB(4) || sp >= GIB(4))
		hv_fail("native boot: the hypervisor lies above 4 GiB, outside the boot page tables");
	pr_info("hv: native boot: entering the kernel at 0x%llx, boot_params at 0x%llx, %s mode APIC; the hypervisor ends here\n",
		(unsigned long long)gb.entry, (unsigned long long)gb.zero_page, lapic_x2apic ? "x2APIC" : "xAPIC");
	native_jump(gb.entry, gb.zero_page, gb.cr3, gb.gdt, GUEST_GDT_LIMIT);
}
