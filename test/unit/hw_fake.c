/* See hw_fake.h. */
#include "hw_fake.h"
#include "test.h"
#include "vmcs_record.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"
#include "../../vmx/vmx_defs.h"
#include "../../vmx/vmcs_ops.h"
#include "../../lib/percpu.h"
#include "../../lib/memmap.h"
#include "../../apic/pi.h"
#include "../../guest/msr.h"
#include "../../vmx/tsc.h"
#include "../../vmx/ept.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vmx_env vmx_env;
struct vcpu *vcpus[MAX_CPUS];
struct percpu *cpus[MAX_CPUS];
uint32_t ncpus;
uint64_t tsc_khz = 1000000;
uint64_t tsc_ceil_khz = 1000000;
bool tsc_emulator;
volatile bool hv_panicking;
uint64_t hw_tsc;

static struct percpu cur;
static __thread struct percpu *thread_cpu;   /* a two-thread test's second CPU */
static uint8_t isr[256], tmr[256], irr[256];
static unsigned eois, bcast[256];
static struct { uint32_t dest, icr; } sent[4096];
static unsigned nsent;
static struct { uint32_t msr; uint64_t v; } msrs[64];
static unsigned nmsrs;

uint64_t rdtsc(void) { return hw_tsc; }
int hw_root_fire_after = -1;
static void root_timer(void);
static void msr_accessed(void)
{
	static bool in;
	if (in || hw_root_fire_after < 0 || hw_root_fire_after-- > 0)
		return;
	in = true;
	root_timer();
	in = false;
}
static uint64_t msr_get(uint32_t msr)
{
	for (unsigned i = 0; i < nmsrs; i++)
		if (msrs[i].msr == msr)
			return msrs[i].v;
	return msr == 0x803 ? 0x01050014 : 0;   /* the version register: an x2APIC, EOI-broadcast suppression */
}
static void msr_set(uint32_t msr, uint64_t v)
{
	for (unsigned i = 0; i < nmsrs; i++)
		if (msrs[i].msr == msr) {
			msrs[i].v = v;
			return;
		}
	if (nmsrs < 64)
		msrs[nmsrs++] = (typeof(msrs[0])){ msr, v };
}
uint64_t rdmsr(uint32_t msr)
{
	uint64_t v = msr_get(msr);
	msr_accessed();
	return v;
}
void wrmsr(uint32_t msr, uint64_t v)
{
	msr_set(msr, v);
	msr_accessed();
}
uint64_t hw_msr(uint32_t msr) { return rdmsr(msr); }
struct percpu *this_cpu(void) { return thread_cpu ? thread_cpu : &cur; }
void hw_thread_cpu(struct percpu *p) { thread_cpu = p; }
__noreturn void cpu_halt_forever(void) { abort(); }
__noreturn void cpu_stop(void) { abort(); }
/* lib/trap.c's hook (not in the unit build). */
void (*host_irq_hook)(uint8_t vector);
void (*hw_wait_hook)(void);
unsigned hw_wait_turns;
void cpu_wait_turn(void)
{
	unsigned n = __atomic_add_fetch(&hw_wait_turns, 1, __ATOMIC_RELAXED);
	if (!hw_wait_hook)
		test_bail(__FILE__, __LINE__, "hw_fake: a root-mode wait with nothing to end it: the CPU would wait for good");
	if (n > HW_WAIT_TURNS_MAX) {
		char m[160];
		snprintf(m, sizeof m, "hw_fake: a root-mode wait still going after %u turns: it would never end", n - 1);
		test_bail(__FILE__, __LINE__, m);
	}
	hw_wait_hook();
}

void hw_set_cpu(unsigned index, bool launched)
{
	cur.index = index;
	cur.apic_id = index < ncpus ? vcpus[index]->apic_id : 0x80 + index;
	cur.launched = launched;
}

/* --- the physical local APIC, by the rules in hw_fake.h --- */
static int top(void)
{
	for (int v = 255; v >= 0; v--)
		if (isr[v])
			return v;
	return -1;
}
bool hw_lapic_isr(uint8_t vec) { return isr[vec]; }
bool hw_lapic_accept(uint8_t vec, bool level)
{
	int t = top();
	if (t >= 0 && (vec >> 4) <= ((unsigned)t >> 4))
		return false;
	isr[vec] = 1;
	tmr[vec] = level;
	return true;
}
void lapic_eoi(void)
{
	eois++;
	int t = top();
	if (t < 0)
		return;
	isr[t] = 0;
	if (tmr[t])
		bcast[t]++;
}
bool lapic_in_service(uint8_t vec) { return isr[vec]; }
bool lapic_requested(uint8_t vec)   /* the IRR, read through MSR 0x820 + vec / 32 in x2APIC mode */
{
	bool r = irr[vec];
	msr_accessed();
	return r;
}
bool lapic_level(uint8_t vec) { return tmr[vec]; }
/* The physical LVTPC of each CPU (by hw_set_cpu's index); ~0 never written. */
static uint32_t lvtpc[64];
void lapic_write_lvtpc(uint32_t v) { lvtpc[cur.index % 64] = v; }
uint32_t hw_lvtpc(unsigned index) { return lvtpc[index % 64]; }
void hw_lvtpc_clear(void) { memset(lvtpc, 0xff, sizeof lvtpc); }
/* The physical LVT CMCI [0] and thermal [1] of each CPU (~0 never
 * written), and the version register's Max LVT Entry (6 unless set). */
static uint32_t lvt_fixed[64][2], max_lvt = 6;
uint32_t lapic_max_lvt(void) { return max_lvt; }
void lapic_write_lvt(uint32_t off, uint32_t v) { lvt_fixed[cur.index % 64][off == 0x2f0 ? 0 : 1] = v; }
uint32_t hw_lvt_fixed(unsigned index, unsigned k) { return lvt_fixed[index % 64][k & 1]; }
void hw_lvt_fixed_clear(uint32_t max) { memset(lvt_fixed, 0xff, sizeof lvt_fixed); max_lvt = max; }
void lapic_send(uint32_t apic_id, uint32_t icr_low)
{
	unsigned n = __atomic_fetch_add(&nsent, 1, __ATOMIC_SEQ_CST);   /* two-thread tests send from both */
	if (n < 4096)
		sent[n] = (typeof(sent[0])){ apic_id, icr_low };
}
/* INVEPT (vmx/ept.c's, left out of host tests): counted per CPU. */
static unsigned invepts[64];
void (*hw_invept_hook)(void);
void ept_invalidate(uint64_t eptp, const struct vmx_caps *c)
{
	(void)eptp, (void)c;
	invepts[this_cpu()->index % 64]++;
	if (hw_invept_hook)
		hw_invept_hook();
}
unsigned hw_invepts(unsigned cpu) { return invepts[cpu % 64]; }
unsigned hw_lapic_eois(void) { return eois; }
unsigned hw_eoi_broadcasts(uint8_t vec) { return bcast[vec]; }
unsigned hw_sent(void) { return nsent; }
uint32_t hw_sent_dest(unsigned n) { return sent[n].dest; }
uint32_t hw_sent_icr(unsigned n) { return sent[n].icr; }

/* --- what vmx/exit.c has --- */
void vcpu_skip_insn(struct vcpu *v)
{
	(void)v;
	vmcs_write(VMCS_GUEST_RIP, vmcs_read(VMCS_GUEST_RIP) + vmcs_read(VMCS_EXIT_INSTRUCTION_LEN));
	vmcs_sync_pending_bs();   /* as vmx/exit.c does */
}
void vcpu_dump(struct vcpu *v) { (void)v; }

static void *page(void) { void *p = aligned_alloc(4096, 4096); memset(p, 0, 4096); return p; }

static uint64_t *pid_table;
static uint8_t *shared_bitmap;
static unsigned msr_exits, host_msr_writes, vtimer_fires[256];
static uint8_t heap[1 << 20] __attribute__((aligned(4096)));
void hw_reset(unsigned n)
{
	free(shared_bitmap);
	shared_bitmap = NULL;
	msr_exits = host_msr_writes = 0;
	memset(vtimer_fires, 0, sizeof vtimer_fires);
	for (unsigned i = 0; i < ncpus; i++) {
		free(vcpus[i]->vapic);
		free(vcpus[i]->pid);
		free(vcpus[i]);
		vcpus[i] = NULL;
	}
	free(pid_table);
	memset(isr, 0, sizeof isr);
	memset(tmr, 0, sizeof tmr);
	memset(irr, 0, sizeof irr);
	memset(bcast, 0, sizeof bcast);
	eois = nsent = nmsrs = 0;
	hw_wait_hook = NULL;
	hw_invept_hook = NULL;
	hw_wait_turns = 0;
	hw_root_fire_after = -1;
	hw_tsc = 1000000;
	vmcs_record_clear();
	memset(&vmx_env, 0, sizeof vmx_env);
	vmx_env.cfg.irq_model = IRQ_VIRTUAL;
	vmx_env.cfg.timer = TIMER_POSTED;
	vmx_env.cfg.posted_intr_nv = 0xf2;
	vmx_env.cfg.pin = VMX_PIN_VIRTUAL_NMIS;
	vmx_env.cfg.proc = VMX_PROC_TSC_OFFSETTING;
	vmcs_write(VMCS_PROC_CONTROLS, vmx_env.cfg.proc);
	ncpus = n;
	page_alloc_init((uintptr_t)heap, sizeof heap);   /* the run time's own allocations */
	pid_table = page();
	for (unsigned i = 0; i < n; i++) {
		struct vcpu *v = aligned_alloc(4096, (sizeof *v + 4095) & ~4095ul);
		memset(v, 0, sizeof *v);
		v->index = i;
		v->apic_id = i;
		v->tsc_adjust_exists = true;   /* IA32_TSC_ADJUST 0, offset 0, as vcpu_tsc_init finds a fresh CPU */
		v->vapic = page();
		v->pid = page();
		pi_desc_init(v->pid, 0xf2, i);
		pid_table[i] = (uint64_t)(uintptr_t)v->pid | 1;
		vcpus[i] = v;
	}
	virq_init(pid_table, n - 1);
	hw_set_cpu(0, true);
	for (unsigned i = 0; i < n; i++)
		virq_vcpu_start(vcpus[i]);
}
struct vcpu *hw_vcpu(unsigned i) { return vcpus[i]; }

void hw_exit_external(struct vcpu *v, uint8_t vec)
{
	v->reason = EXIT_REASON_EXTERNAL_INTR;
	vmcs_write(VMCS_EXIT_INTR_INFO, INTR_INFO_VALID | INTR_TYPE_EXT_INTR | vec);
	exit_external_intr(v);
	virq_before_entry(v);
}

/* --- timer=apicv and timer=deadline: the CPU of hw_fake.h --- */
static void reset_handed(unsigned n, bool apicv)
{
	hw_reset(n);
	hw_tsc = 1000;
	struct vmcs_config *c = &vmx_env.cfg;
	c->timer = apicv ? TIMER_APICV : TIMER_DEADLINE;
	c->proc = VMX_PROC_USE_MSR_BITMAPS | VMX_PROC_ACTIVATE_SECONDARY | VMX_PROC_ACTIVATE_TERTIARY | VMX_PROC_USE_TPR_SHADOW |
		  VMX_PROC_TSC_OFFSETTING;
	c->proc2 = VMX_PROC2_VIRT_X2APIC_MODE | VMX_PROC2_APIC_REG_VIRT | VMX_PROC2_VIRT_INTR_DELIVERY;
	c->pin |= VMX_PIN_EXT_INT_EXITING | VMX_PIN_POSTED_INTR;
	c->proc3_active = true;
	c->proc3 = apicv ? VMX_PROC3_APIC_TIMER_VIRT : 0;
	c->apic_timer_virt = apicv;
	c->deadline_pass = !apicv;
	shared_bitmap = page();
	msr_bitmap_build(shared_bitmap, true, false);
	c->msr_bitmap = (paddr_t)(uintptr_t)shared_bitmap;
	vmcs_record_clear();
	for (unsigned i = 0; i < n; i++) {
		struct vcpu *v = vcpus[i];
		virq_timer_msr_bitmap(v, shared_bitmap);   /* as vmx/setup.c */
		struct vmcs_vcpu vv = { .vpid = (uint16_t)(i + 1), .pid = (paddr_t)(uintptr_t)v->pid,
					.virtual_apic = (paddr_t)(uintptr_t)v->vapic,
					.msr_bitmap = (paddr_t)(uintptr_t)v->msr_bitmap };
		hw_set_cpu(i, true);
		vmcs_write_controls(c, &vv);
		virq_vcpu_start(v);
	}
}
void hw_reset_apicv(unsigned n) { reset_handed(n, true); }
void hw_reset_deadline(unsigned n) { reset_handed(n, false); }

/* The host's TSC-deadline timer reached in root mode (interrupts off): the
 * MSR clears and the vector waits in the IRR. */
bool hw_irq_late;
static void root_timer(void)
{
	uint64_t h = msr_get(0x6e0);
	if (h && hw_tsc >= h) {
		msr_set(0x6e0, 0);
		irr[HOST_TIMER_VECTOR] = 1;
	}
}

/* The guest's TSC: the host's plus the VMCS TSC offset (SDM Vol. 3C,
 * "Timestamp-Counter Offset and Multiplier"). */
static uint64_t guest_tsc_now(void)
{
	bool on = vmcs_read(VMCS_PROC_CONTROLS) & VMX_PROC_TSC_OFFSETTING;
	return hw_tsc + (on ? vmcs_read(VMCS_TSC_OFFSET) : 0);
}
uint64_t hw_guest_rdtsc(void) { return guest_tsc_now(); }

/* WRMSR and RDMSR exits, handled as vmx/exit.c does. */
static int exit_wrmsr_chain(struct vcpu *v, uint32_t msr, uint64_t val)
{
	int r = vcpu_tsc_wrmsr(v, msr, val);
	if (r > 0)
		r = virq_wrmsr(v, msr, val);
	if (r > 0)
		r = guest_wrmsr(msr, val);
	return r == MSR_WRITE_DROPPED ? 0 : r;
}
static int exit_rdmsr_chain(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	int r = vcpu_tsc_rdmsr(v, msr, val);
	if (r > 0)
		r = virq_rdmsr(v, msr, val);
	if (r > 0)
		r = guest_rdmsr(msr, val);
	return r;
}

static bool bit8(void)
{
	return (vmcs_read(VMCS_PROC_CONTROLS) & VMX_PROC_ACTIVATE_TERTIARY) &&
	       (vmcs_read(VMCS_TERTIARY_CONTROLS) & VMX_PROC3_APIC_TIMER_VIRT);
}

static bool exits(uint32_t msr, bool write)
{
	const uint8_t *bm = (const uint8_t *)(uintptr_t)vmcs_read(VMCS_MSR_BITMAP);
	return !(vmcs_read(VMCS_PROC_CONTROLS) & VMX_PROC_USE_MSR_BITMAPS) || !bm || msr_bitmap_intercepts(bm, msr, write);
}

/* The events due at an instruction boundary of the guest. */
static void boundary(struct vcpu *v)
{
	uint64_t d = vmcs_read(VMCS_GUEST_DEADLINE);
	if (bit8() && d && hw_tsc >= d) {
		uint8_t vec = (uint8_t)vmcs_read(VMCS_VIRTUAL_TIMER_VECTOR);
		vmcs_write(VMCS_GUEST_DEADLINE, 0);
		vmcs_write(VMCS_GUEST_DEADLINE_SHADOW, 0);
		vtimer_fires[vec]++;
		uint32_t w;
		memcpy(&w, v->vapic + 0x200 + 0x10 * (vec / 32), 4);
		w |= 1u << (vec % 32);
		memcpy(v->vapic + 0x200 + 0x10 * (vec / 32), &w, 4);
		uint16_t st = (uint16_t)vmcs_read(VMCS_GUEST_INTR_STATUS);
		if (vec > (st & 0xff))
			vmcs_write(VMCS_GUEST_INTR_STATUS, (st & 0xff00) | vec);
	}
	root_timer();
	/* A requested external interrupt exits at once in non-root operation. */
	if (irr[HOST_TIMER_VECTOR] && !hw_irq_late && hw_lapic_accept(HOST_TIMER_VECTOR, false)) {
		irr[HOST_TIMER_VECTOR] = 0;
		hw_exit_external(v, HOST_TIMER_VECTOR);
	}
}

int hw_guest_wrmsr_root_at(struct vcpu *v, uint32_t msr, uint64_t val, uint64_t tsc)
{
	int fire_after = hw_root_fire_after;   /* counted from the handler's first MSR access */
	hw_root_fire_after = -1;
	boundary(v);
	if (exits(msr, true)) {
		msr_exits++;
		v->exit_tsc = hw_tsc;
		if (tsc > hw_tsc)
			hw_tsc = tsc;
		hw_root_fire_after = fire_after;
		if (fire_after < 0)
			root_timer();   /* else at the handler's chosen MSR access */
		int r = exit_wrmsr_chain(v, msr, val);
		virq_before_entry(v);
		return r ? -1 : 0;
	}
	if (msr == 0x6e0 && bit8()) {
		/* The ISE's guest deadline is in host TSC: the value less the TSC
		 * offset (1 for a result of 0: 0 means none). */
		uint64_t host = val - (guest_tsc_now() - hw_tsc);
		vmcs_write(VMCS_GUEST_DEADLINE_SHADOW, val);
		vmcs_write(VMCS_GUEST_DEADLINE, val ? (host ? host : 1) : 0);
		return 0;
	}
	host_msr_writes++;
	wrmsr(msr, val);
	return 0;
}
int hw_guest_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val) { return hw_guest_wrmsr_root_at(v, msr, val, 0); }

int hw_guest_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	boundary(v);
	if (msr == 0x10) {   /* never intercepted (guest/msr.c): RDMSR IA32_TSC adds the TSC offset, as RDTSC does */
		*val = guest_tsc_now();
		return 0;
	}
	if (exits(msr, false)) {
		msr_exits++;
		v->exit_tsc = hw_tsc;
		int r = exit_rdmsr_chain(v, msr, val);
		virq_before_entry(v);
		return r ? -1 : 0;
	}

	if (msr >= 0x800 && msr <= 0x8ff && (vmcs_read(VMCS_PROC2_CONTROLS) & VMX_PROC2_APIC_REG_VIRT)) {
		uint32_t w;   /* APIC-register virtualization: the virtual-APIC page */
		memcpy(&w, v->vapic + ((msr - 0x800) << 4), 4);
		*val = w;
		return 0;
	}
	*val = msr == 0x6e0 && bit8() ? vmcs_read(VMCS_GUEST_DEADLINE_SHADOW) : rdmsr(msr);
	return 0;
}

void hw_run_to(struct vcpu *v, uint64_t tsc)
{
	hw_tsc = tsc;
	boundary(v);
}

unsigned hw_msr_exits(void) { return msr_exits; }
unsigned hw_guest_host_msr_writes(void) { return host_msr_writes; }
unsigned hw_vtimer_fires(uint8_t vec) { return vtimer_fires[vec]; }

