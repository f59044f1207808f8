/* INIT and SIPI at run time: the guest's own (sent through ipi/, recorded
 * in guest/startup.c) and the physical ones VMX turns into exits. */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "../guest/startup.h"
#include "../lib/cpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/cpusum.h"
#include "../lib/percpu.h"

/* The vCPU as after INIT: wait-for-SIPI, registers and interrupt state reset. */
static void park(struct vcpu *v, bool say)
{
	struct vmcs_guest g;
	/* Said, not silent: an INIT parks this vCPU until a SIPI, the boot
	 * vCPU included (a guest resetting its boot CPU has stopped it). Safe
	 * to print: a SIPI that comes meanwhile is recorded, not lost. Not
	 * said when its SIPI is taken with it. */
	if ((v->inits_taken++ < 4 && say) || v->index == 0)
		pr_warn("vmx: cpu%u: INIT from the guest: the vCPU waits for a SIPI%s\n", v->index,
			v->index == 0 ? " (the guest's boot CPU: it stays stopped unless another vCPU sends one)" : "");
	guest_state_wait_sipi(&g);
	vmcs_write_guest(&vmx_env.cfg, &g);
	v->parked = true;
	memset(&v->regs, 0, sizeof v->regs);
	virq_vcpu_reset(v);
}

static uint32_t aps_started;   /* vCPUs the guest has started at least once */

/* A SIPI: the vCPU starts in real mode at vector << 12 (SDM Vol. 3A, "MP
 * Initialization Protocol"). */
static void start(struct vcpu *v, uint8_t vector)
{
	struct vmcs_guest g;
	uint32_t a, b, c, d;
	guest_state_wait_sipi(&g);
	guest_state_sipi(&g, vector);
	vmcs_write_guest(&vmx_env.cfg, &g);
	v->parked = false;
	memset(&v->regs, 0, sizeof v->regs);
	cpuid_count(1, 0, &a, &b, &c, &d);
	v->regs.rdx = a;          /* the processor signature, as after RESET/INIT */
	v->sipi_base = g.cs.base;
	/* On a large machine the first AP the guest starts and the last
	 * (lib/cpusum.h); every one is in the end report. */
	if (cpusum_detailed(ncpus)) {
		if (v->sipis_taken < 2)
			pr_info("vmx: cpu%u started by the guest's SIPI, vector 0x%02x\n", v->index, vector);
	} else if (!v->sipis_taken) {
		uint32_t n = __atomic_add_fetch(&aps_started, 1, __ATOMIC_RELAXED);
		if (n == 1 || n == ncpus - 1)
			pr_info("vmx: cpu%u started by the guest's SIPI, vector 0x%02x (%s AP of %u: the others are counted, not said)\n",
				v->index, vector, n == 1 ? "the first" : "the last", ncpus - 1);
	}
	v->sipis_taken++;
}

static bool waiting(void)
{
	return vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_WAIT_SIPI;
}

/* What the guest's INITs and SIPIs (recorded by their senders) ask of this
 * vCPU, done before its entry: the INIT, then a SIPI sent after it. */
static void take(struct vcpu *v, int sipi_exit_vector)
{
	struct startup_step st = startup_take(&v->startup, waiting());
	if (st.stale)
		v->sipis_stale++;
	if (st.init)
		park(v, sipi_exit_vector < 0 && st.sipi < 0);
	if (sipi_exit_vector >= 0)
		start(v, (uint8_t)sipi_exit_vector);
	else if (st.sipi >= 0)
		start(v, (uint8_t)st.sipi);
}

bool virq_startup_due(struct vcpu *v)
{
	return __atomic_load_n(&v->startup.sipi, __ATOMIC_SEQ_CST) || startup_init_pending(&v->startup);
}

void virq_startup_step(struct vcpu *v)
{
	take(v, -1);
}

/* The last step before every VM entry of the virtual model: a vCPU that
 * waits for SIPI waits here, in root mode, never in the wait-for-SIPI
 * activity state. There a SIPI recorded after the vCPU's last look would
 * be lost for good: its physical SIPI finds the CPU in root mode and is
 * discarded, and nothing else makes a CPU in wait-for-SIPI exit (neither
 * interrupts nor the VMX-preemption timer: SDM Vol. 3C, "Activity State"
 * and "VMX-Preemption Timer"). Here the record itself ends the wait, so a
 * single SIPI starts the vCPU whenever it comes. INITs that come
 * meanwhile are taken (a SIPI sent before them is stale). */
void virq_startup_wait(struct vcpu *v)
{
	if (!v->parked || vmx_env.cfg.irq_model != IRQ_VIRTUAL || !waiting())
		return;   /* the flag first: no VMREAD on every exit */
	v->sipi_waits++;
	/* Halted in root mode between looks, woken by the kick its sender
	 * sends after the record (op_sipi). Spinning instead starved the guest's
	 * boot CPU under Bochs, whose CPUs share one host thread: with 3 APs
	 * spinning, 4-vCPU Linux was still in its decompressor after 30 s. */
	while (waiting()) {
		if (virq_startup_due(v))
			take(v, -1);
		else
			cpu_wait_turn();
	}
	/* What was sent to it while it waited is dropped, as in wait-for-SIPI:
	 * NMIs, and posted vectors (their notification, if any, was taken by
	 * the root-mode handler, so ON would stay set and hold back the next). */
	if (__atomic_exchange_n(&v->nmi_pending, 0, __ATOMIC_SEQ_CST))
		v->nmis_dropped++;
	virq_posted_drop(v);
}

/* A physical INIT exit. The guest's INITs are recorded by their senders
 * (virq_ipi.c) and sent as well, so that a vCPU running or halted exits
 * at once. "If a logical processor is in the wait-for-SIPI state, INIT
 * signals are blocked" (SDM Vol. 3C, "INIT Signals"): an INIT sent while
 * the vCPU waits stays held and exits right after the SIPI that started
 * it, before its first instruction; that one was taken already (its
 * record went with the SIPI) and is dropped. In the partition model the
 * guest's INITs reach the CPU directly: held ones are recognized by RIP 0
 * at the SIPI's CS base. */
void exit_init(struct vcpu *v)
{
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL) {
		if (!startup_init_pending(&v->startup)) {
			v->inits_held++;
			take(v, -1);     /* a SIPI recorded meanwhile, if any */
			return;
		}
		take(v, -1);
		return;
	}
	if (v->sipi_base && vmcs_read(VMCS_GUEST_RIP) == 0 && vmcs_read(VMCS_GUEST_CS_BASE) == v->sipi_base) {
		v->sipi_base = 0;
		return;
	}
	v->sipi_base = 0;
	park(v, false);   /* silent: the guest's SIPI comes straight to the CPU, lost if it is still here */
}

/* A physical SIPI exit (the vCPU waited for it in VMX non-root operation):
 * the INIT before it, if not taken yet, then the start at its vector. */
void exit_sipi(struct vcpu *v)
{
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL) {
		take(v, (int)(v->qual & 0xff));
		return;
	}
	start(v, (uint8_t)v->qual);
}
