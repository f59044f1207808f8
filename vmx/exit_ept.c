/* EPT violations and misconfigurations (exit_ept.h). */
#include "vcpu.h"
#include "vmcs_ops.h"
#include "ept.h"
#include "ept_live.h"
#include "event.h"
#include "vioapic_trap.h"
#include "msi_trap.h"
#include "hpet_trap.h"
#include "vmx_defs.h"
#include "../guest/mmio_width.h"
#include "../lib/memmap.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "exit_ept.h"

/* Only the hypervisor's own ranges are missing from the EPT. A guest access
 * to one maps that page to the sink, a page of the hypervisor's that holds
 * no data of it (all-ones until the guest writes it): the access completes
 * with a defined result, as on a machine where the memory does not exist,
 * it never livelocks on a retried fault, and each page is reported once. */

/* The sink pages, called under ept_live_lock: all ones for reads (mapped
 * read-only, so it stays so), and one that takes writes, whose contents
 * are nobody's (the GiBs beyond the late map's budget have their own:
 * ept_live.h). */
static uint8_t *sink_alloc(uint8_t **page)
{
	if (!*page) {
		*page = page_alloc(1);
		memset(*page, 0xff, PAGE_SIZE);
	}
	return *page;
}

static uint8_t *sink_page(void)
{
	static uint8_t *sink;
	return sink_alloc(&sink);
}

static uint8_t *wsink_page(void)
{
	static uint8_t *wsink;
	return sink_alloc(&wsink);
}

/* A store to absent memory: the instruction completes and its store goes
 * nowhere (what a read of the page then gives stays all ones). Only a
 * plain 64-bit-mode store the MMIO decoder knows; false otherwise. */
static bool drop_write(struct vcpu *v)
{
	uint8_t b[MMIO_INSN_MAX];
	struct mmio_access a;
	const char *why;
	if (!(vmcs_read(VMCS_GUEST_CS_AR) & BIT(13)) || mmio_decode_width(b, vcpu_fetch_insn(b, MMIO_INSN_MAX), &a, &why) ||
	    !a.in.write)
		return false;
	vcpu_skip_insn_len(v, a.in.len);
	return true;
}

static int map_sink(uint64_t gpa, bool write)
{
	ept_live_lock();
	int sunk = ept_map_sink(vmx_env.cfg.eptp, gpa, (paddr_t)(uintptr_t)sink_page(), (paddr_t)(uintptr_t)wsink_page(), write);
	ept_live_unlock();
	return sunk;
}

void exit_ept_violation(struct vcpu *v)
{
	uint64_t gpa = vmcs_read(VMCS_GUEST_PHYSICAL_ADDRESS);
	bool gla_valid = v->qual & BIT(7);
	/* An IRET that unblocked NMIs faulted here and runs again: blocked again. */
	uint32_t intr = (uint32_t)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY);
	uint32_t fixed = event_ept_interruptibility(v->qual, (uint32_t)vmcs_read(VMCS_IDT_VECTORING_INFO), intr,
						    vmx_env.cfg.pin & (VMX_PIN_NMI_EXITING | VMX_PIN_VIRTUAL_NMIS));
	if (fixed != intr)
		vmcs_write(VMCS_GUEST_INTERRUPTIBILITY, fixed);
	/* A fetch from a large page (nx_huge: never executable, ept.h): split
	 * into executable 4 KiB pages, and the fetch runs again. */
	if ((v->qual & BIT(2)) && ept_nx_huge() && ept_live_exec(vmx_env.cfg.eptp, gpa) >= 0)
		return;
	if (vioapic_trap_exit(v, gpa))
		return;                  /* the virtual IOAPIC's page (ioapic=virtual) */
	if (msi_trap_exit(v, gpa))
		return;                  /* an MSI-X table's page (msi=trap) */
	if (hpet_trap_exit(v, gpa))
		return;                  /* the HPET's page (hpet=auto|trap) */
	uint64_t gla = gla_valid ? vmcs_read(VMCS_GUEST_LINEAR_ADDRESS) : gpa;
	uint32_t type = memmap_type_at(vmx_env.mem, gpa);
	if (type != MEM_HV && gpa >= vmx_env.ept_end && gpa < vmx_env.gpa_limit) {
		/* Beyond the identity map (a 64-bit BAR high above RAM): map its
		 * GiB now, with the memory map's and the MTRRs' types, within a
		 * budget of tables; past it the GiB reads as absent memory. */
		bool absent;
		bool mapped = ept_live_late(vmx_env.cfg.eptp, vmx_env.mem, vmx_env.mtrr, vmx_env.caps, gpa, &absent);
		if (mapped) {
			struct ept_stats late;
			ept_live_late_stats(&late);
			v->ept_late_gibs++;       /* not-present to present: no INVEPT (see below) */
			if (v->ept_late_gibs <= 8)
				pr_info("hv: EPT: GPA 0x%llx beyond the identity map: its GiB mapped on cpu%u (%llu x 1G, %llu x 2M pages, %llu GiB as absent memory so far)\n",
					(unsigned long long)gpa, v->index, (unsigned long long)late.pages_1g,
					(unsigned long long)late.pages_2m, (unsigned long long)late.sunk_1g);
		}
		return;          /* mapped now, or by another vCPU meanwhile */
	}
	bool write = v->qual & BIT(1), fetch = v->qual & BIT(2);
	if (type != MEM_HV) {
		/* No trap owns it: a page a trap gave back meanwhile (the access
		 * runs again and finds it mapped), or else one that nothing maps,
		 * which reads as absent memory: the sink, counted, said. Never a
		 * panic: the guest chose the address. */
		int sunk = map_sink(gpa, false);
		if (sunk < 0)
			return;                  /* mapped again meanwhile: the access runs again */
		bool dropped = write && drop_write(v);
		if (write && !dropped)
			sunk = map_sink(gpa, true);
		if (sunk == 0 && !dropped)
			ept_invalidate(vmx_env.cfg.eptp, vmx_env.caps);
		if (v->denied.ept_unowned++ < 8)
			pr_warn("hv: EPT: guest %s at GPA 0x%llx (%s, rip 0x%llx) on cpu%u owned by no trap: %s\n",
				fetch ? "fetch" : write ? "write" : "read", (unsigned long long)gpa, memmap_type_name(type),
				(unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index,
				dropped ? "the store dropped" : "page mapped to the sink");
		return;
	}
	bool user = (vmcs_read(VMCS_GUEST_SS_AR) >> 5 & 3) == 3;
	int sunk = map_sink(gpa, false);
	bool dropped = sunk >= 0 && write && drop_write(v);
	if (dropped) {
		if (v->denied.ept_hv_pages++ < 8)
			pr_warn("hv: EPT: guest write of hypervisor memory at GPA 0x%llx (linear 0x%llx, rip 0x%llx) on cpu%u: denied, the store dropped\n",
				(unsigned long long)gpa, (unsigned long long)gla, (unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index);
		return;
	}
	if (sunk >= 0 && write)
		sunk = map_sink(gpa, true);      /* a store the decoder does not know: the page that takes writes */
	if (sunk >= 0) {
		/* A not-present entry made present needs no INVEPT: EPT
		 * violations are not cached (SDM Vol. 3C, "Caching Translation
		 * Information"); the access walks the tables again. Measured
		 * under Bochs 3.0: an INVEPT here was followed, on another vCPU,
		 * by defect 3 (a guest exception frame at a stale stack). Only
		 * a second violation on a page already mapped (a CPU that did
		 * cache the miss) flushes. */
		if (sunk == 0)
			ept_invalidate(vmx_env.cfg.eptp, vmx_env.caps);
		if (v->denied.ept_hv_pages++ < 8)
			pr_warn("hv: EPT: guest %s of hypervisor memory at GPA 0x%llx (linear 0x%llx, rip 0x%llx) on cpu%u: denied, page mapped to the sink\n",
				fetch ? "fetch" : write ? "write" : "read", (unsigned long long)gpa,
				(unsigned long long)gla, (unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index);
		return;
	}
	if (v->denied.ept_hv_pages++ < 8)
		pr_warn("hv: EPT: guest %s of hypervisor memory at GPA 0x%llx (linear 0x%llx, rip 0x%llx) on cpu%u: denied, #PF injected\n",
			fetch ? "fetch" : write ? "write" : "read", (unsigned long long)gpa, (unsigned long long)gla,
			(unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index);
	__asm__ volatile("mov %0, %%cr2" :: "r"(gla));   /* CR2 is not switched by VMX */
	vcpu_inject_exception(v, 14, true, (write ? BIT(1) : 0) | (user ? BIT(2) : 0) | (fetch ? BIT(4) : 0));
}

void exit_ept_misconfig(struct vcpu *v)
{
	vcpu_dump(v);
	panic("EPT misconfiguration at GPA 0x%llx\n", (unsigned long long)vmcs_read(VMCS_GUEST_PHYSICAL_ADDRESS));
}
