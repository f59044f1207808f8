/* Local APIC access for the hypervisor itself (AP start-up, panic NMIs). */
#include "lapic.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"

bool lapic_x2apic;
static volatile uint32_t *lapic_mmio;

#define XAPIC_ID      0x020
#define XAPIC_SVR     0x0f0
#define XAPIC_ICR_LO  0x300
#define XAPIC_ICR_HI  0x310
#define X2APIC_SVR_MSR 0x80f
#define APIC_SVR_ENABLE BIT(8)
#define APIC_ICR_BUSY   BIT(12)

void lapic_enable(void)
{
	uint32_t a, b, c, d;
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);

	cpuid_count(1, 0, &a, &b, &c, &d);
	lapic_x2apic = c & BIT(21);
	base |= APIC_BASE_ENABLE;
	if (lapic_x2apic)
		base |= APIC_BASE_X2APIC;
	wrmsr(MSR_IA32_APIC_BASE, base);
	if (lapic_x2apic) {
		wrmsr(X2APIC_SVR_MSR, rdmsr(X2APIC_SVR_MSR) | APIC_SVR_ENABLE | 0xff);
	} else {
		lapic_mmio = (volatile uint32_t *)(uintptr_t)(base & ~0xfffull);
		lapic_mmio[XAPIC_SVR / 4] |= APIC_SVR_ENABLE | 0xff;
	}
}

uint32_t lapic_id(void)
{
	if (lapic_x2apic)
		return (uint32_t)rdmsr(MSR_X2APIC_APICID);
	return lapic_mmio[XAPIC_ID / 4] >> 24;
}

void lapic_send(uint32_t apic_id, uint32_t icr_low)
{
	if (lapic_x2apic) {
		/* A WRMSR to an x2APIC register is not serializing and may pass
		 * earlier stores (SDM Vol. 3A, "x2APIC Register Address Space"):
		 * the PIR bits and ON a notification announces, a start flag an
		 * IPI tells of, must be visible first. */
		__asm__ volatile("mfence; lfence" ::: "memory");
		wrmsr(MSR_X2APIC_ICR, ((uint64_t)apic_id << 32) | icr_low);
		return;
	}
	for (int i = 0; i < 1000000 && (lapic_mmio[XAPIC_ICR_LO / 4] & APIC_ICR_BUSY); i++)
		cpu_relax();
	lapic_mmio[XAPIC_ICR_HI / 4] = apic_id << 24;
	lapic_mmio[XAPIC_ICR_LO / 4] = icr_low;
}

void lapic_eoi(void)
{
	if (lapic_x2apic)
		wrmsr(0x80b, 0);
	else
		lapic_mmio[0xb0 / 4] = 0;
}

bool lapic_level(uint8_t vector)
{
	uint32_t tmr = lapic_x2apic ? (uint32_t)rdmsr(0x818 + vector / 32) : lapic_mmio[(0x180 + 0x10 * (vector / 32)) / 4];
	return tmr & (1u << (vector % 32));
}

bool lapic_requested(uint8_t vector)
{
	uint32_t irr = lapic_x2apic ? (uint32_t)rdmsr(0x820 + vector / 32) : lapic_mmio[(0x200 + 0x10 * (vector / 32)) / 4];
	return irr & (1u << (vector % 32));
}

bool lapic_in_service(uint8_t vector)
{
	uint32_t isr = lapic_x2apic ? (uint32_t)rdmsr(0x810 + vector / 32) : lapic_mmio[(0x100 + 0x10 * (vector / 32)) / 4];
	return isr & (1u << (vector % 32));
}

uint32_t lapic_max_lvt(void)
{
	uint32_t ver = lapic_x2apic ? (uint32_t)rdmsr(0x803) : lapic_mmio[0x30 / 4];
	return (ver >> 16) & 0xff;
}

void lapic_write_lvt(uint32_t off, uint32_t v)
{
	if (lapic_x2apic)
		wrmsr(0x800 + off / 16, v);
	else
		lapic_mmio[off / 4] = v;
}

void lapic_write_lvtpc(uint32_t v)
{
	if (lapic_x2apic)
		wrmsr(0x834, v);
	else
		lapic_mmio[0x340 / 4] = v;
}
