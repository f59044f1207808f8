/* The virtual IOAPIC's trap (vioapic_trap.h). */
#include "vioapic_trap.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "vmx_defs.h"
#include "virq.h"
#include "ept.h"
#include "../apic/vioapic.h"
#include "../iommu/iommu.h"
#include "../guest/gwalk.h"
#include "../guest/mmio.h"
#include "../lib/acpi.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/spinlock.h"

/* One per IOAPIC of the MADT (no fixed cap: from the heap at setup). */
static struct vioapic *vio;
static paddr_t *vio_base;
static uint32_t *vio_gsi;
static uint32_t nvio;
static spinlock_t vio_lock;                  /* the virtual state and the physical IOREGSEL */
static uint32_t guest_ids[MAX_CPUS], host_ids[MAX_CPUS];
static uint64_t pids[MAX_CPUS];
static struct vioapic_dom dom;
static struct {
	uint64_t reads, writes, bad_insns, unaligned;
} st;

/* The physical IOAPIC: 82093AA, IOREGSEL +0x00, IOWIN +0x10; EOI +0x40. */
static uint32_t hw_read(void *ctx, uint32_t reg)
{
	volatile uint32_t *b = ctx;
	b[0] = reg;
	return b[4];
}

static void hw_write(void *ctx, uint32_t reg, uint32_t val)
{
	volatile uint32_t *b = ctx;
	b[0] = reg;
	b[4] = val;
}

static void hw_eoi(void *ctx, uint8_t vec)
{
	((volatile uint32_t *)ctx)[VIOAPIC_EOI / 4] = vec;
}

/* Owned remapping: the IRTE written, the interrupt entry cache invalidated. */
static void hw_irte(void *ctx, uint32_t index, const struct vioapic_irte *e)
{
	(void)ctx;
	iommu_irte_write(0, index, e->lo, e->hi);   /* the IOAPICs' entries: segment 0's table */
}

struct vioapic_hw vioapic_hw_at(paddr_t base)
{
	return (struct vioapic_hw){ hw_read, hw_write, hw_eoi, (void *)(uintptr_t)base, hw_irte };
}

static struct vioapic_hw hw_of(uint32_t k)
{
	return vioapic_hw_at(vio_base[k]);
}

void vioapic_dom_fill(struct vioapic_dom *d)
{
	/* vCPU i runs on CPU i and the guest sees the host's APIC IDs (the
	 * MADT passes through): the two lists are the same today, kept apart
	 * so that the router never assumes it. The virtual model's guest
	 * x2APIC is always in x2APIC mode (its xAPIC page is not mapped). */
	for (uint32_t i = 0; i < ncpus; i++)
		guest_ids[i] = host_ids[i] = cpus[i]->apic_id;
	*d = (struct vioapic_dom){ .apic_id = guest_ids, .host_apic_id = host_ids, .n = ncpus, .guest_x2apic = true };
	/* Owned remapping (intremap=auto or on): remappable entries through one IRTE
	 * per pin, and the 15-bit destinations of MSI_EXT_DEST_ID (offered by
	 * CPUID then). */
	d->remap = d->ext_dest = iommu_ir_owned();
	d->eim = iommu_ir_eim();
	/* VT-d posting where every unit has it and the vCPUs process posted
	 * interrupts: each vCPU's own descriptor. */
	d->post = iommu_ir_posting() && (vmx_env.cfg.pin & VMX_PIN_POSTED_INTR);
	for (uint32_t i = 0; d->post && i < ncpus; i++)
		pids[i] = vcpus[i] ? (uint64_t)(uintptr_t)vcpus[i]->pid : 0;
	d->pid = pids;
	const uint8_t own[] = { HOST_TIMER_VECTOR, KICK_VECTOR, CONSOLE_VECTOR, (uint8_t)vmx_env.cfg.posted_intr_nv,
				IOMMU_FAULT_VECTOR };
	for (unsigned i = 0; i < sizeof own; i++)
		d->host_vectors[own[i] / 64] |= 1ull << (own[i] % 64);
}

void vioapic_trap_setup(const struct acpi_info *acpi, uint64_t eptp)
{
	vioapic_dom_fill(&dom);
	struct ept_stats es = { 0 };
	uint32_t n = acpi->nioapics;
	if (n) {
		vio = page_alloc(ALIGN_UP(n * sizeof *vio, PAGE_SIZE) / PAGE_SIZE);
		vio_base = page_alloc(ALIGN_UP(n * sizeof *vio_base, PAGE_SIZE) / PAGE_SIZE);
		vio_gsi = page_alloc(ALIGN_UP(n * sizeof *vio_gsi, PAGE_SIZE) / PAGE_SIZE);
	}
	for (uint32_t k = 0; k < n; k++) {
		vio_base[nvio] = acpi->ioapic[k].addr;
		vio_gsi[nvio] = acpi->ioapic[k].gsi_base;
		struct vioapic_hw hw = hw_of(nvio);
		vioapic_init(&vio[nvio], &hw);
		vio[nvio].irte_base = iommu_ioapic_irte_base(k);
		vio[nvio].sid = dom.remap ? iommu_ioapic_sid(k) : 0;
		bool out = ept_unmap_page(eptp, acpi->ioapic[k].addr, &es);
		pr_info("ioapic: IOAPIC %u at 0x%x (GSI %u-%u, version 0x%x): virtual, its page %s the guest's EPT; pins in %s\n",
			acpi->ioapic[k].id, acpi->ioapic[k].addr, vio_gsi[nvio], vio_gsi[nvio] + vio[nvio].npins - 1,
			vio[nvio].ver & 0xff, out ? "out of" : "was not in",
			dom.remap ? "remappable format (IRTEs from the hypervisor's table)" : "compatibility format");
		nvio++;
	}
}

bool vioapic_trap_on(void)
{
	return nvio != 0;
}

bool vioapic_trap_exit(struct vcpu *v, uint64_t gpa)
{
	uint32_t k = 0;
	while (k < nvio && (vio_base[k] >> 12) != (gpa >> 12))
		k++;
	if (k == nvio)
		return false;
	uint8_t b[MMIO_INSN_MAX];
	struct mmio_insn in;
	const char *why = "not in 64-bit mode";
	bool long_mode = vmcs_read(VMCS_GUEST_CS_AR) & BIT(13);
	if (!long_mode || mmio_decode(b, vcpu_fetch_insn(b, MMIO_INSN_MAX), &in, &why)) {
		/* Refused, the guest gets #GP(0): it is a guest bug or an attack,
		 * never the hypervisor's end. Said once, counted always. */
		if (__atomic_fetch_add(&st.bad_insns, 1, __ATOMIC_RELAXED) == 0)
			pr_warn("ioapic: guest access at GPA 0x%llx (rip 0x%llx, cpu%u) not emulated: %s; #GP injected (counted, said once)\n",
				(unsigned long long)gpa, (unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index, why);
		vcpu_inject_exception(v, 13, true, 0);
		return true;
	}
	uint32_t off = (uint32_t)(gpa & 0xfff);
	struct vioapic_hw hw = hw_of(k);
	spin_lock(&vio_lock);
	if (off & 3) {
		st.unaligned++;                  /* undefined on the 82093AA: dropped, reads 0 */
		if (!in.write)
			vcpu_set_reg(v, in.reg, 0);
	} else if (in.write) {
		st.writes++;
		vioapic_write(&vio[k], &dom, &hw, off, in.has_imm ? in.imm : (uint32_t)vcpu_reg(v, in.reg));
	} else {
		st.reads++;
		vcpu_set_reg(v, in.reg, vioapic_read(&vio[k], &hw, off));   /* a 32-bit MOV zero-extends */
	}
	spin_unlock(&vio_lock);
	vcpu_skip_insn_len(v, in.len);
	return true;
}

int64_t vioapic_trap_gsi_rte(uint32_t gsi)
{
	int64_t r = -1;
	spin_lock(&vio_lock);
	for (uint32_t k = 0; k < nvio; k++)
		if (gsi >= vio_gsi[k] && gsi - vio_gsi[k] < vio[k].npins)
			r = (int64_t)vioapic_rte(&vio[k], gsi - vio_gsi[k]);
	spin_unlock(&vio_lock);
	return r;
}

bool vioapic_trap_own_gsi(uint32_t gsi, uint8_t vector, uint32_t host_apic_id)
{
	bool ok = false;
	spin_lock(&vio_lock);
	for (uint32_t k = 0; k < nvio; k++)
		if (gsi >= vio_gsi[k] && gsi - vio_gsi[k] < vio[k].npins) {
			struct vioapic_hw hw = vioapic_hw_at(vio_base[k]);
			ok = vioapic_host_pin(&vio[k], &dom, &hw, gsi - vio_gsi[k], vector, host_apic_id);
		}
	spin_unlock(&vio_lock);
	return ok;
}

void vioapic_trap_release_gsi(uint32_t gsi)
{
	for (uint32_t k = 0; k < nvio; k++)
		if (gsi >= vio_gsi[k] && gsi - vio_gsi[k] < vio[k].npins) {
			struct vioapic_hw hw = vioapic_hw_at(vio_base[k]);
			vioapic_host_pin_off(&vio[k], &hw, gsi - vio_gsi[k]);   /* no lock: the others are stopped */
		}
}

void vioapic_trap_report(void)
{
	if (!nvio)
		return;
	spin_lock(&vio_lock);
	pr_info("hvstat: ioapic reads=%llu writes=%llu bad_insns=%llu unaligned=%llu\n", (unsigned long long)st.reads,
		(unsigned long long)st.writes, (unsigned long long)st.bad_insns, (unsigned long long)st.unaligned);
	char line[256];
	size_t n = 0;
	for (unsigned r = 1; r < VR_COUNT; r++) {
		uint32_t c = 0;
		for (uint32_t k = 0; k < nvio; k++)
			c += vio[k].refused_by[r];
		if (c && n < sizeof line)
			n += (size_t)snprintf(line + n, sizeof line - n, " %s=%u", vioapic_refusal_names[r], c);
	}
	if (n)
		pr_info("hvstat: ioapic refusals%s\n", line);
	for (uint32_t k = 0; k < nvio; k++)
		for (uint32_t p = 0; p < vio[k].npins; p++) {
			const struct vioapic_pin *q = &vio[k].pin[p];
			if (!q->routes && !q->refusals)
				continue;        /* never routed nor refused: nothing to say */
			/* Interrupts: a direct or remapped route exits with the
			 * vector the pin last had on the vCPU it last reached
			 * (Linux's vectors are per CPU: exact while no other pin
			 * has that vector on that CPU); a posted one never exits. */
			const struct vioapic_reach *w = &q->reach;
			char irqs[24] = "-";
			if (q->routes && w->mode != VMODE_POSTED && w->vcpu >= 0 && (uint32_t)w->vcpu < ncpus &&
			    vcpus[w->vcpu])
				snprintf(irqs, sizeof irqs, "%llu", (unsigned long long)vcpus[w->vcpu]->extint[q->last_vector]);
			char irte[16] = "-";
			if (q->routes && w->mode != VMODE_DIRECT)
				snprintf(irte, sizeof irte, "%u", vio[k].irte_base + p);
			pr_info("hvstat: ioapic=%u pin=%u gsi=%u guest=0x%016llx phys=0x%016llx now=%s vec=0x%02x route=%s irte=%s vcpu=%d host=0x%x routed=%u refused=%u irqs=%s\n",
				k, p, vio_gsi[k] + p, (unsigned long long)q->vrte, (unsigned long long)q->prte,
				(q->vrte & VIOAPIC_MASKED) ? "masked" : vioapic_refusal_names[q->refused], q->last_vector,
				q->routes ? vioapic_mode_names[w->mode] : "none", irte, q->routes ? w->vcpu : -1, w->host_id,
				q->routes, q->refusals, irqs);
		}
	spin_unlock(&vio_lock);
}
