/* Port I/O exits (IN/OUT and INS/OUTS to intercepted ports) and the run's
 * verdict, printed when the guest ends the machine through one, or when the
 * guest dies (a reset it asks for, a triple fault, every vCPU halted with
 * interrupts off). */
#include "exit_io.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "report.h"
#include "virq.h"
#include "vconsole.h"
#include "msi_trap.h"
#include "vmxon.h"
#include "../guest/gwalk.h"
#include "../guest/io.h"
#include "../lib/canary.h"
#include "../lib/cpu.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/power.h"
#include "../lib/printk.h"
#include "../lib/serial.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

static volatile bool machine_ending;

/* One byte of guest memory at linear address la, through the guest's paging;
 * hypervisor memory reads as absent (0xff) and takes no writes. -1 when the
 * address is not mapped. */
static int guest_byte(uint64_t la, bool write, uint8_t *b)
{
	struct gwalk_regs r = { vmcs_read(VMCS_GUEST_CR0), vmcs_read(VMCS_GUEST_CR3), vmcs_read(VMCS_GUEST_CR4),
				vmcs_read(VMCS_GUEST_EFER) };
	uint64_t gpa;
	if (gwalk(&r, la, write, &gpa) || !gwalk_readable(gpa, 1))
		return -1;
	bool hv = memmap_type_at(vmx_env.mem, gpa) == MEM_HV;
	if (write) {
		if (!hv)
			*(volatile uint8_t *)(uintptr_t)gpa = *b;
	} else {
		*b = hv ? 0xff : *(volatile uint8_t *)(uintptr_t)gpa;
	}
	return 0;
}

static void io_port_write(struct vcpu *v, uint16_t port, uint32_t val, unsigned size);

static uint32_t io_port_read(struct vcpu *v, uint16_t port, unsigned size)
{
	if (vconsole_owns(port))
		return vconsole_in(v, port, size);
	if (msi_trap_owns(port))
		return msi_trap_in(port, size);      /* PCI configuration (msi=trap) */
	return port_in(port, size);
}

/* INS/OUTS to an intercepted port, emulated (SDM Vol. 3C, "Exit
 * Qualification for I/O Instructions" and the guest-linear-address field,
 * which holds the first element's address): each element goes through the
 * same port policy as a plain IN/OUT; REP runs at most 1024 elements per
 * exit and leaves the rest to the instruction's re-execution. */
static void exit_io_string(struct vcpu *v, uint16_t port, unsigned size, bool in, bool rep)
{
	unsigned asz = (unsigned)(vmcs_read(VMCS_EXIT_INSTRUCTION_INFO) >> 7) & 7;
	uint64_t amask = asz == 0 ? 0xffffull : asz == 1 ? 0xffffffffull : ~0ull;
	bool down = vmcs_read(VMCS_GUEST_RFLAGS) & BIT(10);
	uint64_t la = vmcs_read(VMCS_GUEST_LINEAR_ADDRESS);
	uint64_t count = rep ? (v->regs.rcx & amask) : 1, done = 0;
	uint64_t *idx = in ? &v->regs.rdi : &v->regs.rsi;
	for (; done < count && done < 1024; done++) {
		uint8_t b[4] = { 0 };
		if (in) {
			uint32_t val = io_port_read(v, port, size);
			memcpy(b, &val, size);
		}
		for (unsigned k = 0; k < size; k++)
			if (guest_byte(la + k, in, &b[k])) {
				vcpu_inject_exception(v, 14, true, in ? BIT(1) : 0);   /* not mapped: the guest's #PF */
				__asm__ volatile("mov %0, %%cr2" :: "r"(la + k));
				goto out;
			}
		if (!in) {
			uint32_t val = 0;
			memcpy(&val, b, size);
			io_port_write(v, port, val, size);
		}
		la = down ? la - size : la + size;
		*idx = (*idx & ~amask) | ((down ? *idx - size : *idx + size) & amask);
	}
out:
	if (rep)
		v->regs.rcx = (v->regs.rcx & ~amask) | ((v->regs.rcx - done) & amask);
	if (!rep || (v->regs.rcx & amask) == 0)
		vcpu_skip_insn(v);
}

void exit_io(struct vcpu *v)
{
	unsigned size = (v->qual & 7) + 1;
	bool in = v->qual & BIT(3), string = v->qual & BIT(4);
	uint16_t port = (uint16_t)(v->qual >> 16);
	access_count(&v->io_stats, port, !in);
	if (string) {
		exit_io_string(v, port, size, in, v->qual & BIT(5));
		return;
	}
	if (in) {
		uint32_t val = io_port_read(v, port, size);
		uint64_t mask = size == 4 ? 0xffffffffull : (1ull << (size * 8)) - 1;
		v->regs.rax = size == 4 ? val : (v->regs.rax & ~mask) | (val & mask);
	} else {
		io_port_write(v, port, (uint32_t)v->regs.rax, size);
	}
	vcpu_skip_insn(v);
}

/* The run's verdict (result=pass only when every check it was asked for
 * passed): the guest's own, reported by hypercall, and the hypervisor's. */
static int guest_verdict = -1;          /* -1: none reported */

void hc_verdict(uint32_t cpu, bool pass)
{
	__atomic_store_n(&guest_verdict, pass ? 1 : 0, __ATOMIC_SEQ_CST);
	pr_info("hv: the guest reports its checks %s (cpu%u)\n", pass ? "passed" : "FAILED", cpu);
}

/* Returns true when the run passed; 'why' names the first failed check. */
static bool run_verdict(char *why, size_t n)
{
	if (!canary_check()) {
		snprintf(why, n, "the hypervisor's canary page changed: a guest reached hypervisor memory");
		return false;
	}
	int g = __atomic_load_n(&guest_verdict, __ATOMIC_SEQ_CST);
	if (g < 0) {
		snprintf(why, n, "the guest reported no verdict (its checks did not run to the end)");
		return false;
	}
	if (!g) {
		snprintf(why, n, "the guest's checks failed");
		return false;
	}
	for (uint32_t i = 0; i < ncpus; i++) {
		struct vcpu *v = vcpus[i];
		if (!v || !v->exits_total) {
			snprintf(why, n, "vCPU %u never ran the guest", i);
			return false;
		}
		if (!virq_timer_balanced(v)) {
			snprintf(why, n, "vCPU %u: its timer accounting does not balance (armed != replaced + fired + pending)", i);
			return false;
		}
	}
	snprintf(why, n, "the guest's checks passed, %u of %u vCPUs ran, every timer balanced", ncpus, ncpus);
	return true;
}

/* A write to an intercepted port: an ACPI sleep state other than S5 is
 * dropped; one that ends the machine prints the report first. */
static void io_port_write(struct vcpu *v, uint16_t port, uint32_t val, unsigned size)
{
	const char *why;
	if (vconsole_owns(port)) {
		vconsole_out(v, port, val, size);   /* the real UART stays as the hypervisor set it */
		return;
	}
	if (msi_trap_owns(port) && port != 0xcf9) {
		msi_trap_out(port, size, val);       /* PCI configuration (msi=trap); 0xCF9 is reset control */
		return;
	}
	if (io_write_is_sleep(vmx_env.acpi, port, val, size)) {
		if (v->denied.sleep++ < 4)
			pr_warn("hv: guest asks for an ACPI sleep state other than S5 (port 0x%x value 0x%x): dropped\n",
				port, val);
		return;
	}
	if (io_write_resets(vmx_env.acpi, port, val, size, &why)) {
		char buf[200];
		snprintf(buf, sizeof buf, "it reset the machine through %s (port 0x%x, value 0x%x), as Linux reboots after a panic with panic=N",
			 why, port, val & 0xff);
		vmx_guest_reboots(v, buf, port, (uint8_t)val);
	}
	if (io_write_ends_machine(vmx_env.acpi, port, val, size, &why) &&
	    !__atomic_exchange_n(&machine_ending, true, __ATOMIC_SEQ_CST)) {
		vconsole_flush();
		pr_info("hv: guest ends the machine on cpu%u: %s (port 0x%x value 0x%x)\n", v->index, why, port, val);
		report_print("shutdown");
		char why[160];
		bool pass = run_verdict(why, sizeof why);
		pr_info("hv: result=%s (%s)\n", pass ? "pass" : "fail", why);
		serial_flush();
		if (power_on_poweroff() == POWEROFF_HALT) {
			stop_other_cpus();
			power_halt("the guest powered off (on_poweroff=halt)");
		}
	}
	port_out(port, size, val);
}

/* Every CPU out of VMX operation before a reset (SDM Vol. 3C, "VMXOFF":
 * VMCLEAR each VMCS first so that its data reach memory; INIT, which a
 * reset line may be on a chipset, is blocked in VMX root operation). */
static volatile bool leaving_vmx;
static volatile uint32_t left_vmx;
static void leave_vmx(void)
{
	if (!leaving_vmx)
		return;
	struct percpu *p = this_cpu();
	struct vcpu *me = p && p->index < ncpus ? vcpus[p->index] : NULL;
	if (read_cr4() & X86_CR4_VMXE) {
		if (me && me->vmcs)
			vmclear((paddr_t)(uintptr_t)me->vmcs);
		vmx_off();
	}
	__atomic_fetch_add(&left_vmx, 1, __ATOMIC_SEQ_CST);
}

__noreturn void vmx_guest_reboots(struct vcpu *v, const char *why, uint16_t port, uint8_t val)
{
	int how = power_on_reboot();
	if (how == REBOOT_REPORT)
		vmx_guest_died(v, why);
	if (__atomic_exchange_n(&machine_ending, true, __ATOMIC_SEQ_CST))
		cpu_halt_forever();
	vconsole_flush();
	pr_info("hv: guest reboots the machine: %s (cpu%u)\n", why, v->index);
	report_print("reboot");
	if (how == REBOOT_HALT) {
		stop_other_cpus();
		power_halt("the guest rebooted (on_reboot=halt)");
	}
	leaving_vmx = true;
	stop_hook = leave_vmx;
	stop_other_cpus();
	uint64_t t0 = rdtsc(), wait = tsc_khz ? (uint64_t)tsc_khz * 1000 : 1000000000ull;   /* 1 s */
	while (left_vmx + 1 < ncpus && rdtsc() - t0 < wait)
		cpu_relax();
	leave_vmx();
	vconsole_quiesce();
	pr_info("hv: %u of %u CPUs out of VMX operation; resetting (on_reboot=reset)\n", left_vmx, ncpus);
	power_reset(port, val);
}

/* The guest died: said, the exit report, result=fail, every other CPU
 * stopped, and the run ended as exit= asks (hv_exit: the emulators stop at
 * once; exit=none halts). Nothing restarts a guest here, so a reset it asks
 * for ends the run too. */
__noreturn void vmx_guest_died(struct vcpu *v, const char *why)
{
	if (__atomic_exchange_n(&machine_ending, true, __ATOMIC_SEQ_CST))
		cpu_halt_forever();     /* the run is ending already: another vCPU says why */
	vconsole_flush();
	pr_err("hv: guest died: %s (cpu%u)\n", why, v->index);
	report_print("death");
	stop_other_cpus();
	hv_exit(false);
}
