/* Checked VMCS accessors and names for error messages. */
#include "vmcs_ops.h"
#include "event.h"
#include "../lib/printk.h"

static const struct { uint32_t f; const char *n; } names[] = {
#define N(x) { VMCS_##x, #x }
	N(VPID), N(POSTED_INTR_NV), N(LAST_PID_POINTER_INDEX), N(VIRTUAL_TIMER_VECTOR), N(GUEST_ES_SEL), N(GUEST_CS_SEL),
	N(GUEST_SS_SEL), N(GUEST_DS_SEL), N(GUEST_FS_SEL), N(GUEST_GS_SEL), N(GUEST_LDTR_SEL),
	N(GUEST_TR_SEL), N(GUEST_INTR_STATUS), N(PREEMPTION_TIMER_VALUE), N(HOST_ES_SEL), N(HOST_CS_SEL), N(HOST_SS_SEL),
	N(HOST_DS_SEL), N(HOST_FS_SEL), N(HOST_GS_SEL), N(HOST_TR_SEL), N(IO_BITMAP_A), N(IO_BITMAP_B),
	N(MSR_BITMAP), N(TSC_OFFSET), N(VIRTUAL_APIC_PAGE_ADDR), N(APIC_ACCESS_ADDR),
	N(POSTED_INTR_DESC_ADDR), N(EPT_POINTER), N(EOI_EXIT_BITMAP0), N(EOI_EXIT_BITMAP1),
	N(EOI_EXIT_BITMAP2), N(EOI_EXIT_BITMAP3), N(XSS_EXIT_BITMAP), N(TERTIARY_CONTROLS),
	N(PID_POINTER_TABLE), N(GUEST_DEADLINE_SHADOW), N(GUEST_DEADLINE), N(GUEST_PHYSICAL_ADDRESS), N(LINK_POINTER), N(GUEST_DEBUGCTL),
	N(GUEST_PAT), N(GUEST_EFER), N(HOST_PAT), N(HOST_EFER), N(PIN_CONTROLS), N(PROC_CONTROLS),
	N(EXCEPTION_BITMAP), N(PF_ERROR_MASK), N(PF_ERROR_MATCH), N(CR3_TARGET_COUNT), N(EXIT_CONTROLS),
	N(EXIT_MSR_STORE_COUNT), N(EXIT_MSR_LOAD_COUNT), N(ENTRY_CONTROLS), N(ENTRY_MSR_LOAD_COUNT),
	N(ENTRY_INTR_INFO), N(ENTRY_EXCEPTION_ERROR), N(ENTRY_INSTRUCTION_LEN), N(TPR_THRESHOLD),
	N(PROC2_CONTROLS), N(VM_INSTRUCTION_ERROR), N(EXIT_REASON), N(EXIT_INTR_INFO),
	N(EXIT_INTR_ERROR), N(IDT_VECTORING_INFO), N(IDT_VECTORING_ERROR), N(EXIT_INSTRUCTION_LEN),
	N(EXIT_INSTRUCTION_INFO), N(GUEST_ES_LIMIT), N(GUEST_CS_LIMIT), N(GUEST_SS_LIMIT),
	N(GUEST_DS_LIMIT), N(GUEST_FS_LIMIT), N(GUEST_GS_LIMIT), N(GUEST_LDTR_LIMIT), N(GUEST_TR_LIMIT),
	N(GUEST_GDTR_LIMIT), N(GUEST_IDTR_LIMIT), N(GUEST_ES_AR), N(GUEST_CS_AR), N(GUEST_SS_AR),
	N(GUEST_DS_AR), N(GUEST_FS_AR), N(GUEST_GS_AR), N(GUEST_LDTR_AR), N(GUEST_TR_AR),
	N(GUEST_INTERRUPTIBILITY), N(GUEST_ACTIVITY_STATE), N(GUEST_SYSENTER_CS), N(HOST_SYSENTER_CS),
	N(CR0_MASK), N(CR4_MASK), N(CR0_SHADOW), N(CR4_SHADOW), N(EXIT_QUALIFICATION),
	N(GUEST_LINEAR_ADDRESS), N(GUEST_CR0), N(GUEST_CR3), N(GUEST_CR4), N(GUEST_ES_BASE),
	N(GUEST_CS_BASE), N(GUEST_SS_BASE), N(GUEST_DS_BASE), N(GUEST_FS_BASE), N(GUEST_GS_BASE),
	N(GUEST_LDTR_BASE), N(GUEST_TR_BASE), N(GUEST_GDTR_BASE), N(GUEST_IDTR_BASE), N(GUEST_DR7),
	N(GUEST_RSP), N(GUEST_RIP), N(GUEST_RFLAGS), N(GUEST_PENDING_DBG), N(GUEST_SYSENTER_ESP),
	N(GUEST_SYSENTER_EIP), N(HOST_CR0), N(HOST_CR3), N(HOST_CR4), N(HOST_FS_BASE), N(HOST_GS_BASE),
	N(HOST_TR_BASE), N(HOST_GDTR_BASE), N(HOST_IDTR_BASE), N(HOST_SYSENTER_ESP),
	N(HOST_SYSENTER_EIP), N(HOST_RSP), N(HOST_RIP),
#undef N
};

const char *vmcs_field_name(uint32_t field)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].f == field)
			return names[i].n;
	return "unnamed field";
}

/* SDM Vol. 3C, "VM Instruction Error Numbers". */
const char *vmx_insn_error_name(uint32_t err)
{
	static const char *const e[] = {
		[1] = "VMCALL in VMX root", [2] = "VMCLEAR with invalid address",
		[3] = "VMCLEAR with VMXON pointer", [4] = "VMLAUNCH with non-clear VMCS",
		[5] = "VMRESUME with non-launched VMCS", [6] = "VMRESUME after VMXOFF",
		[7] = "entry with invalid control fields", [8] = "entry with invalid host-state fields",
		[9] = "VMPTRLD with invalid address", [10] = "VMPTRLD with VMXON pointer",
		[11] = "VMPTRLD with wrong revision", [12] = "VMREAD/VMWRITE unsupported field",
		[13] = "VMWRITE to read-only field", [15] = "VMXON in VMX root",
		[16] = "entry with invalid executive-VMCS pointer", [17] = "entry with non-launched executive VMCS",
		[26] = "entry with events blocked by MOV SS", [28] = "invalid operand to INVEPT/INVVPID",
	};
	return err < ARRAY_SIZE(e) && e[err] ? e[err] : "unknown VM-instruction error";
}

/* Guest RFLAGS.TF = 1 where an instruction retires in the hypervisor's hands
 * (emulated, or the HLT state entered): BS pending, as the CPU would have
 * left it (vmx/event.c, event_pending_dbg_bs). */
void vmcs_sync_pending_bs(void)
{
	uint64_t dbg = vmcs_read(VMCS_GUEST_PENDING_DBG);
	uint64_t bs = event_pending_dbg_bs(dbg, vmcs_read(VMCS_GUEST_RFLAGS), vmcs_read(VMCS_GUEST_DEBUGCTL));
	if (bs != dbg)
		vmcs_write(VMCS_GUEST_PENDING_DBG, bs);
}

#ifndef HV_HOST_TEST
void vmcs_write(uint32_t field, uint64_t value)
{
	uint8_t cf, zf;
	__asm__ volatile("vmwrite %2, %3; setc %0; setz %1"
			 : "=r"(cf), "=r"(zf) : "r"(value), "r"((uint64_t)field) : "cc", "memory");
	if (cf || zf) {
		uint32_t err = zf ? (uint32_t)vmcs_read(VMCS_VM_INSTRUCTION_ERROR) : 0;
		panic("VMWRITE %s (0x%04x) = 0x%llx failed: %s (error %u)\n", vmcs_field_name(field), field,
		      (unsigned long long)value, cf ? "no current VMCS" : vmx_insn_error_name(err), err);
	}
}

uint64_t vmcs_read(uint32_t field)
{
	uint64_t v;
	uint8_t cf, zf;
	__asm__ volatile("vmread %3, %0; setc %1; setz %2"
			 : "=r"(v), "=r"(cf), "=r"(zf) : "r"((uint64_t)field) : "cc", "memory");
	if (cf || zf)
		panic("VMREAD %s (0x%04x) failed\n", vmcs_field_name(field), field);
	return v;
}

static int vm_insn_status(uint8_t cf, uint8_t zf)
{
	if (cf)
		return -1;
	if (zf)
		return (int)vmcs_read(VMCS_VM_INSTRUCTION_ERROR);
	return 0;
}

int vmclear(paddr_t pa)
{
	uint8_t cf, zf;
	__asm__ volatile("vmclear %2; setc %0; setz %1" : "=r"(cf), "=r"(zf) : "m"(pa) : "cc", "memory");
	return cf ? -1 : zf ? 1 : 0;
}

int vmptrld(paddr_t pa)
{
	uint8_t cf, zf;
	__asm__ volatile("vmptrld %2; setc %0; setz %1" : "=r"(cf), "=r"(zf) : "m"(pa) : "cc", "memory");
	return vm_insn_status(cf, zf);
}
#endif
