/* The EPT shootdown (ept_sync.h). Ordering, with sequentially consistent
 * atomics on both sides (a store then a load, each side): a vCPU marks
 * itself in the guest before it reads the generation; the shooter raises
 * the generation before it reads the marks. So either the shooter sees the
 * vCPU in the guest (and waits for it), or the vCPU sees the new
 * generation (and invalidates before it enters). A shooter is in an exit:
 * another shooter does not wait for it, nor does anyone wait for a vCPU
 * spinning on a lock in root mode. */
#include "ept_sync.h"
#include "ept.h"
#include "vcpu.h"
#include "virq.h"
#include "../apic/lapic.h"
#include "../lib/cpu.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/tsc.h"

static bool on;
static uint64_t gen;
static struct ept_sync_stats st;

void ept_sync_enable(void)
{
	__atomic_store_n(&on, true, __ATOMIC_SEQ_CST);
}

void ept_sync_exit(struct vcpu *v)
{
	if (__atomic_load_n(&on, __ATOMIC_RELAXED))
		__atomic_store_n(&v->in_guest, false, __ATOMIC_SEQ_CST);
}

static void catch_up(struct vcpu *v)
{
	uint64_t g = __atomic_load_n(&gen, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&v->ept_seen, __ATOMIC_RELAXED) != g) {
		ept_invalidate(vmx_env.cfg.eptp, vmx_env.caps);
		__atomic_store_n(&v->ept_seen, g, __ATOMIC_SEQ_CST);
	}
}

void ept_sync_entry(struct vcpu *v)
{
	if (!__atomic_load_n(&on, __ATOMIC_RELAXED))
		return;
	/* Parked (its VMCS in wait-for-SIPI) it runs nothing until its SIPI,
	 * which exits: it catches up before the entry after that. Not waited
	 * for meanwhile (a kick does not wake that state). v->parked says so
	 * without a VMREAD on every exit. */
	__atomic_store_n(&v->in_guest, !v->parked, __ATOMIC_SEQ_CST);
	catch_up(v);
}

#ifdef HV_HOST_TEST
#define wait_turn() cpu_wait_turn()      /* the unit test plays the other CPUs */
#else
#define wait_turn() cpu_relax()
#endif

static bool behind(const struct vcpu *w, uint64_t g)
{
	return __atomic_load_n(&w->in_guest, __ATOMIC_SEQ_CST) && __atomic_load_n(&w->ept_seen, __ATOMIC_SEQ_CST) < g;
}

void ept_shootdown(void)
{
	struct vcpu *self = this_cpu()->index < ncpus ? vcpus[this_cpu()->index] : NULL;
	uint64_t g = __atomic_add_fetch(&gen, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&st.shootdowns, 1, __ATOMIC_RELAXED);
	if (self)
		catch_up(self);
	else
		ept_invalidate(vmx_env.cfg.eptp, vmx_env.caps);
	for (uint32_t i = 0; i < ncpus; i++)
		if (vcpus[i] && vcpus[i] != self && behind(vcpus[i], g)) {
			lapic_send(vcpus[i]->apic_id, APIC_DM_FIXED | KICK_VECTOR);
			__atomic_fetch_add(&st.kicks, 1, __ATOMIC_RELAXED);
		}
	uint64_t t0 = rdtsc(), limit = tsc_from_us(100000);
	for (uint32_t i = 0; i < ncpus; i++) {
		while (vcpus[i] && vcpus[i] != self && behind(vcpus[i], g)) {
			if (rdtsc() - t0 > limit) {
				if (__atomic_fetch_add(&st.timeouts, 1, __ATOMIC_RELAXED) == 0)
					pr_warn("hv: EPT shootdown: cpu%u did not answer in 100 ms; its translations stay until its next exit (counted, said once)\n",
						i);
				break;
			}
			wait_turn();
		}
	}
}

struct ept_sync_stats ept_sync_stats(void)
{
	return st;
}
