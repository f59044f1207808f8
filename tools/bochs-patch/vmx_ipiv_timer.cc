/////////////////////////////////////////////////////////////////////////
//
//   IPI virtualization and APIC-timer virtualization for Bochs's VMX.
//   Written for the hv project's tests (not part of upstream Bochs), from
//   Intel's SDM Vol. 3C ("IPI Virtualization", "Virtualizing Writes to the
//   ICR", "Checks on VMX Controls") and Intel's ISE ("APIC-Timer
//   Virtualization"). Licensed like Bochs (LGPL 2.1 or later).
//
/////////////////////////////////////////////////////////////////////////

#define NEED_CPU_REG_SHORTCUTS 1
#include "bochs.h"
#include "cpu.h"
#include "msr.h"
#include "pc_system.h"
#include "memory/memory-bochs.h"
#include "apic.h"
#define LOG_THIS BX_CPU_THIS_PTR

#if BX_SUPPORT_VMX >= 2 && BX_SUPPORT_X86_64

#include <stdio.h>
#include <stdlib.h>

// Per-CPU counters, printed to stderr when Bochs exits so that a test can
// check them: every arming ends replaced, fired, or still pending. The
// guest arms and replaces by WRMSR; the VMM by what the next VM entry finds
// in the guest-deadline field (written in root mode, or the control turned
// off or on), counted apart as well (vmm_*).
static struct {
  Bit64u ipi_virtualized, ipi_apic_write_exits;
  Bit64u timer_armed, timer_replaced, timer_fired, timer_delivered;
  Bit64u timer_vmm_armed, timer_vmm_replaced;
  Bit64u timer_counted;   // the deadline the counts hold armed (0: none)
  bool used;
} hv_stats[BX_MAX_SMP_THREADS_SUPPORTED];
static bool hv_stats_hooked;

static void hv_stats_print(void)
{
  for (unsigned i = 0; i < BX_MAX_SMP_THREADS_SUPPORTED; i++) {
    if (! hv_stats[i].used) continue;
    Bit64u pending = hv_stats[i].timer_counted != 0;
    fprintf(stderr, "bochs-hv: cpu=%u ipiv_virtualized=%llu ipiv_apic_write_exits=%llu "
            "vtimer_armed=%llu vtimer_replaced=%llu vtimer_fired=%llu vtimer_delivered=%llu vtimer_pending=%llu\n",
            i, (unsigned long long) hv_stats[i].ipi_virtualized, (unsigned long long) hv_stats[i].ipi_apic_write_exits,
            (unsigned long long) hv_stats[i].timer_armed, (unsigned long long) hv_stats[i].timer_replaced,
            (unsigned long long) hv_stats[i].timer_fired, (unsigned long long) hv_stats[i].timer_delivered,
            (unsigned long long) pending);
    fprintf(stderr, "bochs-hv: cpu=%u vtimer_vmm_armed=%llu vtimer_vmm_replaced=%llu\n", i,
            (unsigned long long) hv_stats[i].timer_vmm_armed, (unsigned long long) hv_stats[i].timer_vmm_replaced);
  }
}

static void hv_stats_use(unsigned cpu)
{
  hv_stats[cpu].used = true;
  if (! hv_stats_hooked) { hv_stats_hooked = true; atexit(hv_stats_print); }
}

// The timer's counts follow a new deadline (0: disarmed).
static void hv_timer_count(unsigned cpu, Bit64u deadline, bool by_vmm)
{
  hv_stats_use(cpu);
  Bit64u old = hv_stats[cpu].timer_counted;
  hv_stats[cpu].timer_replaced += old != 0;
  hv_stats[cpu].timer_armed += deadline != 0;
  if (by_vmm) {
    hv_stats[cpu].timer_vmm_replaced += old != 0;
    hv_stats[cpu].timer_vmm_armed += deadline != 0;
  }
  hv_stats[cpu].timer_counted = deadline;
}

// ---------------------------------------------------------------------------
// VM-entry checks (SDM "Checks on VMX Controls"), run after the tertiary
// controls are read. Returns 0 or a VM-entry failure error code.
// ---------------------------------------------------------------------------
Bit32u BX_CPU_C::VMenterCheckIpivApicTimer(void)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;

  if (vm->vmexec_ctrls3.IPI_VIRTUALIZATION()) {
    // "IPI virtualization" needs "use TPR shadow" (as every APIC
    // virtualization control does); the PID-pointer table address has
    // bits 2:0 clear and no bit beyond the physical-address width.
    if (! vm->vmexec_ctrls1.TPR_SHADOW()) {
      BX_ERROR(("VMFAIL: VMCS EXEC CTRL: IPI virtualization without TPR shadow"));
      return VMXERR_VMENTRY_INVALID_VM_CONTROL_FIELD;
    }
    vm->pid_pointer_table = VMread64(VMCS_64BIT_CONTROL_PID_POINTER_TABLE_ADDRESS);
    if ((vm->pid_pointer_table & 7) || ! IsValidPhyAddr(vm->pid_pointer_table)) {
      BX_ERROR(("VMFAIL: VMCS EXEC CTRL: PID-pointer table address malformed"));
      return VMXERR_VMENTRY_INVALID_VM_CONTROL_FIELD;
    }
    vm->last_pid_pointer_index = VMread16(VMCS_16BIT_CONTROL_LAST_PID_POINTER_INDEX);
  }

  if (vm->vmexec_ctrls3.APIC_TIMER_VIRTUALIZATION()) {
    // Intel's ISE, "APIC-Timer Virtualization", checks on VMX controls (as
    // Intel's KVM series applies them to a nested guest's VMCS): the
    // virtual timer interrupt is delivered through virtual-interrupt
    // delivery, so the control needs it; "RDTSC exiting" must be 0; the
    // 16-bit virtual timer vector field must hold a vector (at most 255).
    if (! vm->vmexec_ctrls2.VIRTUAL_INT_DELIVERY()) {
      BX_ERROR(("VMFAIL: VMCS EXEC CTRL: APIC-timer virtualization without virtual-interrupt delivery"));
      return VMXERR_VMENTRY_INVALID_VM_CONTROL_FIELD;
    }
    if (vm->vmexec_ctrls1.RDTSC_VMEXIT()) {
      BX_ERROR(("VMFAIL: VMCS EXEC CTRL: APIC-timer virtualization with RDTSC exiting"));
      return VMXERR_VMENTRY_INVALID_VM_CONTROL_FIELD;
    }
    Bit16u vector = VMread16(VMCS_16BIT_CONTROL_VIRTUAL_TIMER_VECTOR);
    if (vector > 0xff) {
      BX_ERROR(("VMFAIL: VMCS EXEC CTRL: virtual timer vector 0x%x above 255", vector));
      return VMXERR_VMENTRY_INVALID_VM_CONTROL_FIELD;
    }
    vm->guest_timer_vector = (Bit8u) vector;
  }

  return 0;
}

// ---------------------------------------------------------------------------
// IPI virtualization (SDM Vol. 3C, "IPI Virtualization").
// ---------------------------------------------------------------------------

// The ICR (low dword) of a virtualizable IPI: fixed delivery (10:8 = 000b),
// physical destination (bit 11 = 0), bit 12 and the reserved bits 31:20,
// 17:16, 13 clear, edge-triggered (bit 15 = 0), no shorthand (19:18 = 00b).
// Bit 14 (level) does not matter.
static bool ipiv_icr_virtualizable(Bit32u icr_lo)
{
  return (icr_lo & 0xffffbf00) == 0;   // bits 31:16, 15, 13:8
}

// Sends the IPI of vector V to the vCPU whose PID-pointer-table index is
// DEST. Returns false when the CPU must fall back to an APIC-write VM exit.
bool BX_CPU_C::VMX_IPI_Virtualization(Bit8u vector, Bit32u dest)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;

  if (vector < 16) return false;
  if (dest > vm->last_pid_pointer_index) return false;

  bx_phy_address entry_addr = vm->pid_pointer_table + ((bx_phy_address) dest << 3);
  Bit64u entry = read_physical_qword(entry_addr, BX_MEMTYPE_WB, BX_VMX_PID);
  // bit 0 valid, bits 5:1 reserved (the descriptor is 64-byte aligned)
  if ((entry & 0x3f) != 1 || ! IsValidPhyAddr(entry)) return false;
  bx_phy_address pid = entry & ~(Bit64u) 0x3f;

  // PIR[V] <- 1 (a locked OR in hardware; Bochs runs one CPU at a time)
  bx_phy_address pir_byte = pid + (vector >> 3);
  Bit8u b = read_physical_byte(pir_byte, BX_MEMTYPE_WB, BX_VMX_PID);
  write_physical_byte(pir_byte, b | (1 << (vector & 7)), BX_MEMTYPE_WB, BX_VMX_PID);

  // Control byte 32: bit 0 ON, bit 1 SN. Notify only if ON was 0 and SN is 0.
  Bit8u ctl = read_physical_byte(pid + 32, BX_MEMTYPE_WB, BX_VMX_PID);
  if ((ctl & 3) == 0) {
    write_physical_byte(pid + 32, ctl | 1, BX_MEMTYPE_WB, BX_VMX_PID);
    Bit8u nv = read_physical_byte(pid + 34, BX_MEMTYPE_WB, BX_VMX_PID);
    Bit32u ndst = read_physical_dword(pid + 36, BX_MEMTYPE_WB, BX_VMX_PID);
    if (! x2apic_mode()) ndst = (ndst >> 8) & 0xff;
    apic_bus_deliver_interrupt(nv, ndst, APIC_DM_FIXED, false, false, false);
  }
  hv_stats_use(BX_CPU_THIS_PTR bx_cpuid);
  hv_stats[BX_CPU_THIS_PTR bx_cpuid].ipi_virtualized++;
  return true;
}

// WRMSR 0x830 with "IPI virtualization" on. Reserved bits #GP; the 64-bit
// value is written to offset 300H of the virtual-APIC page (the x2APIC ICR
// is one 64-bit register there); a virtualizable IPI is posted,
// anything else is a trap-like APIC-write VM exit with qualification 300H.
void BX_CPU_C::VMX_IPIv_X2APIC_ICR_Write(Bit64u val_64)
{
  Bit32u lo = GET32L(val_64), hi = GET32H(val_64);
  if (lo & 0xfff32000)   // reserved bits 31:20, 17:16, 13
    exception(BX_GP_EXCEPTION, 0);

  VMX_Write_Virtual_X2APIC(BX_LAPIC_ICR_LO, val_64);

  if (ipiv_icr_virtualizable(lo) && VMX_IPI_Virtualization(lo & 0xff, hi))
    return;
  hv_stats_use(BX_CPU_THIS_PTR bx_cpuid);
  hv_stats[BX_CPU_THIS_PTR bx_cpuid].ipi_apic_write_exits++;
  VMexit(VMX_VMEXIT_APIC_WRITE, BX_LAPIC_ICR_LO); // trap-like vmexit
}

// A virtualized write to the xAPIC page's ICR (low dword): the destination is
// VICR_HI[31:24]. Returns true when the IPI was virtualized.
bool BX_CPU_C::VMX_IPIv_XAPIC_ICR_Write(Bit32u icr_lo)
{
  if (! ipiv_icr_virtualizable(icr_lo)) return false;
  Bit32u dest = VMX_Read_Virtual_APIC(BX_LAPIC_ICR_HI) >> 24;
  return VMX_IPI_Virtualization(icr_lo & 0xff, dest);
}

// ---------------------------------------------------------------------------
// APIC-timer virtualization (Intel ISE, "APIC-Timer Virtualization"): the
// guest deadline (0x2830, host TSC) and its shadow (0x204E, the value the
// guest wrote, guest TSC) arm a virtual timer that counts only in VMX
// non-root operation; at the deadline both are cleared and the guest timer
// vector (0x000A) is recorded in VIRR/RVI for virtual-interrupt delivery.
// ---------------------------------------------------------------------------

static int vtimer_handle[BX_MAX_SMP_THREADS_SUPPORTED];
static bool vtimer_registered[BX_MAX_SMP_THREADS_SUPPORTED];

static void vtimer_expired(void *this_ptr)
{
  BX_CPU_C *cpu = (BX_CPU_C *) this_ptr;
  bx_pc_system.deactivate_timer(vtimer_handle[cpu->bx_cpuid]);
  cpu->signal_event(BX_EVENT_VMX_VIRTUAL_TIMER);
}

// (Re)arms the emulator timer from the guest deadline (host TSC).
void BX_CPU_C::VMX_Virtual_Timer_Arm(void)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;
  unsigned id = BX_CPU_THIS_PTR bx_cpuid;

  if (! vtimer_registered[id]) {
    vtimer_handle[id] = bx_pc_system.register_timer_ticks(BX_CPU_THIS, vtimer_expired, 0, 0, 0, "vmx_apic_timer");
    vtimer_registered[id] = true;
  }
  bx_pc_system.deactivate_timer(vtimer_handle[id]);
  clear_event(BX_EVENT_VMX_VIRTUAL_TIMER);
  if (vm->guest_deadline == 0) return;

  Bit64u now = get_TSC();
  if (vm->guest_deadline <= now)
    signal_event(BX_EVENT_VMX_VIRTUAL_TIMER);
  else
    bx_pc_system.activate_timer_ticks(vtimer_handle[id], vm->guest_deadline - now, 0);
}

// VM entry: load the fields and start counting. With the control 0 the
// fields are ignored: no virtual timer runs. A deadline other than the one
// the counts hold was set by the VMM (a VMWRITE in root mode, or the
// control turned on or off).
void BX_CPU_C::VMX_Virtual_Timer_Entry(void)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;
  unsigned id = BX_CPU_THIS_PTR bx_cpuid;
  bool on = vm->vmexec_ctrls3.APIC_TIMER_VIRTUALIZATION();
  vm->guest_deadline = on ? VMread64(VMCS_64BIT_GUEST_DEADLINE) : 0;
  vm->guest_deadline_shadow = on ? VMread64(VMCS_64BIT_CONTROL_GUEST_DEADLINE_SHADOW) : 0;
  if (vm->guest_deadline != hv_stats[id].timer_counted)
    hv_timer_count(id, vm->guest_deadline, true);
  if (on) VMX_Virtual_Timer_Arm();
}

// VM exit: stop counting and store the fields (a deadline that passed but
// was not yet acted on stays armed and fires right after the next entry).
void BX_CPU_C::VMX_Virtual_Timer_Exit(void)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;
  unsigned id = BX_CPU_THIS_PTR bx_cpuid;
  if (vtimer_registered[id]) bx_pc_system.deactivate_timer(vtimer_handle[id]);
  clear_event(BX_EVENT_VMX_VIRTUAL_TIMER);
  if (! vm->vmexec_ctrls3.APIC_TIMER_VIRTUALIZATION()) return;
  VMwrite64(VMCS_64BIT_GUEST_DEADLINE, vm->guest_deadline);
  VMwrite64(VMCS_64BIT_CONTROL_GUEST_DEADLINE_SHADOW, vm->guest_deadline_shadow);
}

// Guest TSC -> host TSC: undo the TSC offset (and the multiplier, if any).
Bit64u BX_CPU_C::VMX_Guest_TSC_To_Host(Bit64u guest_tsc)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;
  Bit64u t = guest_tsc;
  if (vm->vmexec_ctrls1.TSC_OFFSET()) {
    t -= BX_CPU_THIS_PTR tsc_offset;
    if (vm->vmexec_ctrls2.TSC_SCALING())
      t = (Bit64u) (((unsigned __int128) t << 48) / vm->tsc_multiplier);
  }
  return t;
}

// WRMSR IA32_TSC_DEADLINE in VMX non-root operation with the control on
// (and the MSR bitmap letting it through): no VM exit.
void BX_CPU_C::VMX_Virtual_Timer_Write_Deadline(Bit64u val)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;
  vm->guest_deadline_shadow = val;
  if (val == 0)
    vm->guest_deadline = 0;
  else {
    Bit64u host = VMX_Guest_TSC_To_Host(val);
    vm->guest_deadline = host ? host : 1;
  }
  hv_timer_count(BX_CPU_THIS_PTR bx_cpuid, vm->guest_deadline, false);
  VMX_Virtual_Timer_Arm();
}

Bit64u BX_CPU_C::VMX_Virtual_Timer_Read_Deadline(void)
{
  return BX_CPU_THIS_PTR vmcs.guest_deadline_shadow;
}

// The deadline passed: clear both fields, record the guest timer vector in
// VIRR and RVI and evaluate pending virtual interrupts (which wakes a HLT).
void BX_CPU_C::VMX_Virtual_Timer_Fire(void)
{
  VMCS_CACHE *vm = &BX_CPU_THIS_PTR vmcs;
  clear_event(BX_EVENT_VMX_VIRTUAL_TIMER);
  if (! BX_CPU_THIS_PTR in_vmx_guest || ! vm->vmexec_ctrls3.APIC_TIMER_VIRTUALIZATION()) return;
  if (vm->guest_deadline == 0 || get_TSC() < vm->guest_deadline) {
    VMX_Virtual_Timer_Arm();   // moved or disarmed meanwhile
    return;
  }
  vm->guest_deadline = 0;
  vm->guest_deadline_shadow = 0;
  hv_stats[BX_CPU_THIS_PTR bx_cpuid].timer_fired++;
  hv_stats[BX_CPU_THIS_PTR bx_cpuid].timer_counted = 0;
  Bit8u vector = vm->guest_timer_vector;
  if (vector < 16) return;     // no vector programmed: nothing to deliver
  unsigned virr = BX_LAPIC_IRR1 + 16 * (vector / 32);   // VIRR[vector] <- 1
  VMX_Write_Virtual_APIC(virr, VMX_Read_Virtual_APIC(virr) | (1u << (vector & 31)));
  if (vector >= vm->rvi) vm->rvi = vector;
  VMX_Evaluate_Pending_Virtual_Interrupts();
  hv_stats[BX_CPU_THIS_PTR bx_cpuid].timer_delivered++;
}

#endif
