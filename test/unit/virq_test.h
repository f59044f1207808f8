/* What the tests of the interrupt run time (test_virq.c, test_virq_edges.c)
 * share: the SDM's numbers they use (written out in test_virq.c's header
 * comment) and the views of the fake machine's state they check. */
#ifndef TEST_UNIT_VIRQ_TEST_H
#define TEST_UNIT_VIRQ_TEST_H
#include "test.h"
#include "hw_fake.h"
#include "sdm_vmcs.h"
#include "vmcs_record.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"

#define M_ISR 0x100
#define M_TMR 0x180
#define M_IRR 0x200
#define M_ACT_ACTIVE 0
#define M_ACT_HLT 1
#define M_ACT_WAIT_SIPI 3
#define M_INFO_VALID (1u << 31)
#define M_TYPE(info) (((info) >> 8) & 7)
#define M_RFLAGS_IF (1u << 9)
#define M_EXIT_EXTINT 1
#define M_EXIT_INIT 3
#define M_EXIT_SIPI 4
#define M_EXIT_INTR_WINDOW 7
#define M_EXIT_HLT 12
#define M_EXIT_VEOI 45
#define M_ICR(dest, low) (((uint64_t)(dest) << 32) | (low))
#define M_DM_INIT (5u << 8)
#define M_DM_STARTUP (6u << 8)
#define M_LEVEL_ASSERT (1u << 14)

/* Vector vec's bit in the virtual-APIC page's ISR, TMR or IRR at base. */
static inline bool vpage_bit(struct vcpu *v, unsigned base, unsigned vec)
{
	uint32_t w;
	memcpy(&w, v->vapic + base + 0x10 * (vec / 32), 4);
	return (w >> (vec % 32)) & 1;
}
static inline bool pir_bit(struct vcpu *v, unsigned vec)
{
	uint64_t q;
	memcpy(&q, (uint8_t *)v->pid + 8 * (vec / 64), 8);
	return (q >> (vec % 64)) & 1;
}
static inline bool pid_on(struct vcpu *v)
{
	uint8_t b;
	memcpy(&b, (uint8_t *)v->pid + 32, 1);
	return b & 1;
}
static inline uint64_t act(void) { return vmcs_record_get(SDM_GUEST_ACTIVITY_STATE); }
static inline uint32_t injected(void) { return (uint32_t)vmcs_record_get(SDM_ENTRY_INTR_INFO); }
/* The guest on vCPU 'from' writes the x2APIC ICR (MSR 0x830). */
static inline void icr(unsigned from, uint64_t val)
{
	hw_set_cpu(from, true);
	CHECK_EQ(virq_wrmsr(hw_vcpu(from), 0x830, val), 0);
}
#endif
