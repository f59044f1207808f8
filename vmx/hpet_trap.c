/* The HPET's trap (hpet_trap.h). */
#include "hpet_trap.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "ept.h"
#include "../apic/vhpet.h"
#include "../guest/mmio_width.h"
#include "../iommu/iommu.h"
#include "../lib/acpi.h"
#include "../lib/options.h"
#include "../lib/paging.h"
#include "../lib/printk.h"
#include "../lib/spinlock.h"

static struct vhpet vh;
static uint64_t base;                        /* the register block's physical address (ACPI) */
/* Where the block may decode (vhpet_blocks: the four HPTC positions on an
 * Intel PCH, the ACPI one elsewhere), each trapped with the pages it
 * touches; 'at' is the block an access is carried out on (under lock). */
static uint64_t blk[VHPET_HPTC_BLOCKS];
static unsigned nblk;
static uint64_t at;
static bool on;
static spinlock_t lock;                      /* the filter's counters; the HPET itself needs none */
static uint64_t exits, other, bad_insns;

/* The real registers at the guest's width (an 8-byte access stays one, so
 * the HPET's main counter's halves are read at once): the HPET's block and
 * what else shares its trapped pages (firmware may put other registers
 * beside the 1 KiB block). */
static uint64_t raw_read(uint64_t pa, unsigned size)
{
	uintptr_t a = (uintptr_t)pa;
	return size == 1 ? *(volatile uint8_t *)a : size == 2 ? *(volatile uint16_t *)a :
	       size == 4 ? *(volatile uint32_t *)a : *(volatile uint64_t *)a;
}

static void raw_write(uint64_t pa, unsigned size, uint64_t val)
{
	uintptr_t a = (uintptr_t)pa;
	if (size == 1)
		*(volatile uint8_t *)a = (uint8_t)val;
	else if (size == 2)
		*(volatile uint16_t *)a = (uint16_t)val;
	else if (size == 4)
		*(volatile uint32_t *)a = (uint32_t)val;
	else
		*(volatile uint64_t *)a = val;
}

static uint64_t hw_read(void *ctx, uint32_t off, unsigned size)
{
	return raw_read(*(const uint64_t *)ctx + off, size);
}

static void hw_write(void *ctx, uint32_t off, unsigned size, uint64_t val)
{
	raw_write(*(const uint64_t *)ctx + off, size, val);
}

static const struct vhpet_hw hw = { hw_read, hw_write, &at };

void hpet_trap_setup(const struct acpi_info *acpi, uint64_t eptp, int opt)
{
	if (!acpi || !acpi->hpet_base)
		return;
	base = acpi->hpet_base;
	at = base;
	nblk = vhpet_blocks(base, blk);
	bool mapped = true;
	for (unsigned k = 0; k < nblk; k++)
		mapped &= paging_map_mmio(blk[k], VHPET_REGS);
	if (!mapped) {
		pr_warn("hpet: registers at 0x%llx beyond the hypervisor's reach: passed through (FSB delivery the guest's)\n",
			(unsigned long long)base);
		return;
	}
	vhpet_init(&vh, &hw);
	const char *own = iommu_ir_owned() ? "blocked by the owned remapping (no IRTE for the HPET)"
					   : "unchecked (interrupt remapping not owned): any message to any CPU";
	if (vh.fsb_was_on)
		pr_warn("hpet: FSB delivery left on by firmware for timers 0x%x: turned off\n", vh.fsb_was_on);
	bool trap = opt == HPET_OPT_TRAP || (opt == HPET_OPT_AUTO && vh.fsb_capable);
	if (!trap) {
		pr_info("hpet: %u timers at 0x%llx, FSB-capable 0x%x: passed through (%s)%s%s\n", vh.ntimers,
			(unsigned long long)base, vh.fsb_capable, opt == HPET_OPT_PASS ? "hpet=pass" : "no timer can send an MSI",
			vh.fsb_capable ? "; the guest's FSB messages " : "", vh.fsb_capable ? own : "");
		return;
	}
	/* A block may start anywhere 8-aligned: every page one touches goes. */
	struct ept_stats es = { 0 };
	for (unsigned k = 0; k < nblk; k++) {
		ept_unmap_page(eptp, blk[k] & ~0xfffull, &es);
		if (((blk[k] + VHPET_REGS - 1) & ~0xfffull) != (blk[k] & ~0xfffull))
			ept_unmap_page(eptp, (blk[k] + VHPET_REGS - 1) & ~0xfffull, &es);
	}
	on = true;
	pr_info("hpet: %u timers at 0x%llx, FSB-capable 0x%x: trapped (%s), %s out of the EPT; FSB delivery hidden, each register access exits (hvstat: hpet)\n",
		vh.ntimers, (unsigned long long)base, vh.fsb_capable, opt == HPET_OPT_TRAP ? "hpet=trap" : "hpet=auto",
		nblk > 1 ? "the four pages the P2SB's HPTC can put it at" : "its page");
}

/* The block whose trapped pages hold gpa (-1: none). */
static int block_of(uint64_t gpa)
{
	uint64_t pg = gpa & ~0xfffull;
	for (unsigned k = 0; k < nblk; k++)
		if (pg == (blk[k] & ~0xfffull) || pg == ((blk[k] + VHPET_REGS - 1) & ~0xfffull))
			return (int)k;
	return -1;
}

bool hpet_trap_exit(struct vcpu *v, uint64_t gpa)
{
	int k = on ? block_of(gpa) : -1;
	if (k < 0)
		return false;
	__atomic_fetch_add(&exits, 1, __ATOMIC_RELAXED);
	uint8_t b[MMIO_INSN_MAX];
	struct mmio_access a;
	const char *why = "not in 64-bit mode";
	bool long_mode = vmcs_read(VMCS_GUEST_CS_AR) & BIT(13);
	bool block = gpa >= blk[k] && gpa < blk[k] + VHPET_REGS;
	uint32_t off = (uint32_t)(gpa - blk[k]);
	if (!long_mode || mmio_decode_wide(b, vcpu_fetch_insn(b, MMIO_INSN_MAX), &a, &why) ||
	    (block && !vhpet_access_ok(off, a.size) && (why = "HPET register: not a naturally aligned 32- or 64-bit access"))) {
		if (__atomic_fetch_add(&bad_insns, 1, __ATOMIC_RELAXED) == 0)
			pr_warn("hpet: guest access at GPA 0x%llx (rip 0x%llx, cpu%u) not emulated: %s; #GP injected (counted, said once)\n",
				(unsigned long long)gpa, (unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index, why);
		vcpu_inject_exception(v, 13, true, 0);
		return true;
	}
	const struct mmio_insn *in = &a.in;
	uint64_t val = 0;
	if (in->write)
		val = a.size == 8 ? (in->has_imm ? (uint64_t)(int64_t)(int32_t)in->imm : vcpu_reg(v, in->reg))
				  : in->has_imm ? in->imm : mmio_extract(vcpu_reg(v, in->reg), &a);
	spin_lock(&lock);
	if (!block) {
		other++;
		if (in->write)
			raw_write(gpa, a.size, val);
		else
			val = raw_read(gpa, a.size);
	} else if (in->write) {
		at = blk[k];
		vhpet_write(&vh, &hw, off, a.size, val);
	} else {
		at = blk[k];
		val = vhpet_read(&vh, &hw, off, a.size);
	}
	spin_unlock(&lock);
	if (!in->write)
		vcpu_set_reg(v, in->reg, a.size == 8 ? val : mmio_merge(vcpu_reg(v, in->reg), &a, (uint32_t)val));
	vcpu_skip_insn_len(v, in->len);
	return true;
}

void hpet_trap_report(void)
{
	if (!on)
		return;
	spin_lock(&lock);
	pr_info("hvstat: hpet base=0x%llx timers=%u fsb_capable=0x%x exits=%llu reads=%llu writes=%llu cap_hidden=%llu fsb_en_dropped=%llu route_dropped=%llu other=%llu bad_insns=%llu\n",
		(unsigned long long)base, vh.ntimers, vh.fsb_capable, (unsigned long long)exits, (unsigned long long)vh.reads,
		(unsigned long long)vh.writes, (unsigned long long)vh.cap_hidden, (unsigned long long)vh.fsb_en_dropped,
		(unsigned long long)vh.route_dropped, (unsigned long long)other, (unsigned long long)bad_insns);
	spin_unlock(&lock);
}
