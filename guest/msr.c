/* MSR interception. Everything in the bitmap's ranges passes through except
 * the MSRs listed in 'intercepted', each with its reason. In the partition
 * interrupt model the x2APIC MSRs (0x800-0x8ff) belong to the guest; in the
 * virtual model the guest's x2APIC is the virtual-APIC page (vmx/virq.c). */
#include "msr.h"
#include "../lib/msr.h"
#include "../lib/string.h"
#include "../lib/cpu.h"
#include "../lib/printk.h"
#include "../lib/desc.h"
#include "../apic/vapic.h"

#define FC_LOCKED BIT(0)

static const struct {
	uint32_t first, last;
	bool read, write;
	const char *why;
} intercepted[] = {
	{ MSR_IA32_FEATURE_CONTROL, MSR_IA32_FEATURE_CONTROL, true, true,
	  "VMX is the hypervisor's: reads show a locked register with VMX off, writes #GP" },
	{ MSR_IA32_VMX_FIRST, MSR_IA32_VMX_LAST, true, true,
	  "VMX capability MSRs: CPUID hides VMX, so they #GP as on a CPU without it" },
	{ MSR_IA32_APIC_BASE, MSR_IA32_APIC_BASE, true, true,
	  "the APIC belongs to the host: the guest may neither disable it nor move its page" },
	{ MSR_IA32_RTIT_OUTPUT_BASE, MSR_IA32_RTIT_OUTPUT_MASK, true, true,
	  "Intel PT writes its trace to physical addresses, around EPT: hidden (CPUID), MSRs #GP" },
	{ MSR_IA32_RTIT_CTL, MSR_IA32_RTIT_CR3_MATCH, true, true, "Intel PT: hidden" },
	{ MSR_IA32_RTIT_ADDR0_A, MSR_IA32_RTIT_ADDR3_B, true, true, "Intel PT: hidden" },
	{ MSR_IA32_DS_AREA, MSR_IA32_DS_AREA, true, true,
	  "DS (BTS and PEBS) is not switched between guest and host: hidden (CPUID), MSRs #GP" },
	{ MSR_IA32_PEBS_ENABLE, MSR_IA32_PEBS_ENABLE, true, true, "PEBS: hidden" },
	{ MSR_IA32_BIOS_SIGN_ID, MSR_IA32_BIOS_SIGN_ID, true, true,
	  "microcode revision: an emulator's 0 would make Linux turn TSC-deadline mode off (its errata check)" },
	{ MSR_IA32_TSC, MSR_IA32_TSC, false, true,
	  "a write moves the vCPU's TSC (its VMCS TSC offset, vmx/tsc.c); reads pass (the CPU adds the offset)" },
	{ MSR_IA32_TSC_ADJUST, MSR_IA32_TSC_ADJUST, true, true,
	  "the vCPU's own IA32_TSC_ADJUST: a write moves its TSC offset (SDM Vol. 3B, \"Time-Stamp Counter Adjustment\")" },
	{ MSR_IA32_MISC_ENABLE, MSR_IA32_MISC_ENABLE, true, false,
	  "reads say BTS and PEBS are unavailable (bits 11 and 12); writes pass" },
};

static void set_bit(uint8_t *bitmap, uint32_t m, bool read, bool write)
{
	/* read-low at 0, read-high at 1024, write-low at 2048, write-high at 3072 */
	uint32_t base = m >= 0xc0000000 ? 1024 : 0, bit = m & 0x1fff;
	if (read)
		bitmap[base + bit / 8] |= 1 << (bit % 8);
	if (write)
		bitmap[2048 + base + bit / 8] |= 1 << (bit % 8);
}

void msr_bitmap_all_apic(uint8_t *bitmap)
{
	for (uint32_t m = MSR_X2APIC_BASE; m <= MSR_X2APIC_LAST; m++)
		set_bit(bitmap, m, true, true);
}

void msr_bitmap_pass(uint8_t *bitmap, uint32_t msr, bool pass)
{
	if (msr > 0x1fff)
		return;
	uint8_t bit = (uint8_t)(1u << (msr % 8));
	bitmap[msr / 8] = pass ? bitmap[msr / 8] & ~bit : bitmap[msr / 8] | bit;
	bitmap[2048 + msr / 8] = pass ? bitmap[2048 + msr / 8] & ~bit : bitmap[2048 + msr / 8] | bit;
}

void msr_bitmap_build(uint8_t *bitmap, bool virtual_apic, bool icr_virtualized)
{
	memset(bitmap, 0, PAGE_SIZE);
	for (size_t i = 0; i < ARRAY_SIZE(intercepted); i++)
		for (uint32_t m = intercepted[i].first; m <= intercepted[i].last; m++)
			set_bit(bitmap, m, intercepted[i].read, intercepted[i].write);
	if (!virtual_apic)
		return;
	/* Reads of the registers come from the virtual-APIC page (APIC-register
	 * virtualization), except the current count, which is computed. That
	 * virtualization reads the page at (ECX & FFH) << 4 for EVERY MSR in
	 * 800H-8FFH (SDM Vol. 3C, "Virtualizing MSR-Based APIC Accesses"), so
	 * the reserved and write-only ones (EOI, SELF IPI) exit to get the #GP
	 * an x2APIC gives them (Vol. 3A, "x2APIC Register Address Space").
	 * TPR, EOI and SELF_IPI writes are virtualized; the ICR only with IPI
	 * virtualization; every other write is emulated and never reaches the
	 * physical APIC. */
	for (uint32_t m = MSR_X2APIC_BASE; m <= MSR_X2APIC_LAST; m++)
		set_bit(bitmap, m, m == MSR_X2APIC_TMCCT || !vapic_readable(m),
			m != MSR_X2APIC_TPR && m != MSR_X2APIC_EOI && m != MSR_X2APIC_SELF_IPI &&
			!(m == MSR_X2APIC_ICR && icr_virtualized));
	/* The guest's TSC deadline is the hypervisor's to serve; with
	 * timer=apicv a vCPU's own bitmap passes it to the CPU while its LVT
	 * lets the CPU serve it (msr_bitmap_pass). */
	set_bit(bitmap, MSR_IA32_TSC_DEADLINE, true, true);
}

bool msr_bitmap_intercepts(const uint8_t *bitmap, uint32_t msr, bool write)
{
	uint32_t base;
	if (msr <= 0x1fff)
		base = 0;
	else if (msr >= 0xc0000000 && msr <= 0xc0001fff)
		base = 1024;
	else
		return true;
	uint32_t bit = msr & 0x1fff;
	return bitmap[(write ? 2048 : 0) + base + bit / 8] & (1 << (bit % 8));
}

int guest_rdmsr(uint32_t msr, uint64_t *value)
{
	if (msr == MSR_IA32_FEATURE_CONTROL) {
		*value = FC_LOCKED;
		return 0;
	}
	if (msr == MSR_IA32_APIC_BASE) {
		*value = rdmsr(MSR_IA32_APIC_BASE);
		return 0;
	}
	if (msr == MSR_IA32_BIOS_SIGN_ID) {
		/* The revision is in bits 63:32. A real CPU's is shown as it is
		 * (its errata are real). An emulator reports 0, and Linux then
		 * disables the TSC-deadline timer on models with the deadline
		 * erratum (Skylake-X among them), which the virtual timer serves
		 * without that erratum: show a revision above every minimum. */
		uint64_t rev = 0;
		if (!rdmsr_safe(MSR_IA32_BIOS_SIGN_ID, &rev))
			rev = 0;
		*value = (rev >> 32) ? rev : (uint64_t)GUEST_MICROCODE_REVISION << 32;
		return 0;
	}
	if (msr == MSR_IA32_MISC_ENABLE) {
		/* A CPU without the MSR (Bochs has none) answers #GP, as it would. */
		if (!rdmsr_safe(MSR_IA32_MISC_ENABLE, value))
			return -1;
		*value |= MISC_ENABLE_BTS_UNAVAILABLE | MISC_ENABLE_PEBS_UNAVAILABLE;
		return 0;
	}
	return -1;   /* VMX capability MSRs, and anything outside the bitmap ranges */
}

/* IA32_APIC_BASE bits 7:0 and 9 are reserved, as are those from MAXPHYADDR
 * up (SDM Vol. 3A, "Local APIC Status and Location"). */
#define APIC_BASE_RESERVED_LOW 0x2ffull

/* What the SDM faults first: reserved bits, and the transitions "x2APIC
 * State Transitions" does not allow: into the invalid state (EXTD without
 * EN), x2APIC to xAPIC, disabled to x2APIC. Then writing the value it holds
 * is fine; any other change (disable, a mode, another base, the BSP flag)
 * is valid but refused: the host owns the APIC. */
enum apic_base_verdict guest_apic_base_write(uint64_t cur, uint64_t val, unsigned maxphyaddr)
{
	uint64_t reserved = APIC_BASE_RESERVED_LOW | (maxphyaddr < 64 ? ~0ull << maxphyaddr : 0);
	bool en = val & APIC_BASE_ENABLE, x2 = val & APIC_BASE_X2APIC;
	bool was_en = cur & APIC_BASE_ENABLE, was_x2 = cur & APIC_BASE_X2APIC;
	if (val & reserved)
		return APIC_BASE_GP;
	if (x2 && !en)
		return APIC_BASE_GP;
	if (was_x2 && en && !x2)
		return APIC_BASE_GP;
	if (!was_en && x2)
		return APIC_BASE_GP;
	return val == cur ? APIC_BASE_OK : APIC_BASE_REFUSED;
}

/* MAXPHYADDR: CPUID 0x80000008 EAX[7:0], else 36 (SDM Vol. 3A, "Physical
 * Address Space"); the guest's CPUID shows the host's. */
static unsigned phys_addr_bits(void)
{
	uint32_t a, b, c, d;
	cpuid_count(0x80000000, 0, &a, &b, &c, &d);
	if (a < 0x80000008)
		return 36;
	cpuid_count(0x80000008, 0, &a, &b, &c, &d);
	return a & 0xff;
}

/* SDM Vol. 3B, "Time-Stamp Counter Adjustment": "if an execution of WRMSR
 * to the IA32_TIME_STAMP_COUNTER MSR adds (or subtracts) value X from the
 * TSC, the logical processor also adds (or subtracts) value X from the
 * IA32_TSC_ADJUST MSR"; "if an execution of WRMSR to the IA32_TSC_ADJUST MSR
 * adds (or subtracts) value X from that MSR, the logical processor also
 * adds (or subtracts) value X from the TSC". The guest's TSC is the host's
 * plus the offset, so both moves are moves of the offset. */
void guest_tsc_write(struct guest_tsc *t, uint64_t host_now, uint64_t val)
{
	uint64_t moved = val - (host_now + t->offset);
	t->offset += moved;
	t->adjust += moved;
}

void guest_tsc_adjust_write(struct guest_tsc *t, uint64_t val)
{
	t->offset += val - t->adjust;
	t->adjust = val;
}

int guest_wrmsr(uint32_t msr, uint64_t value)
{
	if (msr == MSR_IA32_BIOS_SIGN_ID)
		return 0;     /* "write 0, CPUID, read": the read above answers */
	if (msr == MSR_IA32_APIC_BASE) {
		uint64_t now = rdmsr(MSR_IA32_APIC_BASE);
		enum apic_base_verdict v = guest_apic_base_write(now, value, phys_addr_bits());
		if (v == APIC_BASE_OK)
			return 0;
		if (v == APIC_BASE_GP)
			return -1;    /* as the CPU would: counted as a denied MSR access */
		pr_warn("hv: guest write of IA32_APIC_BASE 0x%llx (holds 0x%llx) dropped\n",
			(unsigned long long)value, (unsigned long long)now);
		return MSR_WRITE_DROPPED;
	}
	return -1;
}
