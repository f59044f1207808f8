/* The VT-d register model (see vtd_regs_model.h). Offsets and bits from the
 * specification's "Register Descriptions": VER 0x00, CAP 0x08, ECAP 0x10,
 * GCMD 0x18, GSTS 0x1c, RTADDR 0x20, CCMD 0x28, FSTS 0x34, FECTL 0x38,
 * PMEN 0x64, IQH 0x80, IQT 0x88, IQA 0x90, IRTA 0xb8; the IOTLB register at
 * ECAP.IRO (17:8) * 16 + 8; the fault recording registers at CAP.FRO
 * (33:24) * 16. GCMD/GSTS: TE 31, SRTP 30, SFL 29, EAFL 28, WBF 27, QIE 26,
 * IRE 25, SIRTP 24, CFI 23. Each unit's registers in one 4 KiB page
 * (a DRHD's "Size" field 0: 2^0 pages), unit k's at VRM_BASE + k * 0x1000. */
#include <stdio.h>
#include <string.h>
#include "vtd_regs_model.h"
#include "hw_fake.h"

#define G_TE    (1u << 31)
#define G_SRTP  (1u << 30)
#define G_SFL   (1u << 29)
#define G_WBF   (1u << 27)
#define G_QIE   (1u << 26)
#define G_IRE   (1u << 25)
#define G_SIRTP (1u << 24)
#define G_CFI   (1u << 23)
#define G_PERSISTENT (G_TE | G_QIE | G_IRE | G_CFI)
#define G_ONESHOT    (G_SRTP | G_SFL | G_WBF | G_SIRTP)
#define PMEN_EPM (1u << 31)
#define PMEN_PRS 1u
#define CCMD_ICC  (1ull << 63)
#define IOTLB_IVT (1ull << 63)

static struct vtd_regs_model *units;   /* NULL: plain memory */
static unsigned nunits;

void vrm_attach_units(struct vtd_regs_model *m, unsigned n)
{
	units = n ? m : NULL;
	nunits = m ? n : 0;
}
void vrm_attach(struct vtd_regs_model *m) { vrm_attach_units(m, 1); }

static void violation(struct vtd_regs_model *m, const char *what)
{
	if (!m->violations++)
		snprintf(m->violation, sizeof m->violation, "step %u: %s (GSTS 0x%08x)", m->step, what, m->gsts);
}

/* The unit whose register page holds addr, and the offset in it; NULL
 * outside every attached unit (a violation recorded on unit 0). */
static struct vtd_regs_model *unit_at(uint64_t addr, uint64_t *off, const char *access)
{
	uint64_t k = (addr - VRM_BASE) / VRM_UNIT_SIZE;
	if (addr >= VRM_BASE && k < nunits) {
		*off = addr - VRM_BASE - k * VRM_UNIT_SIZE;
		return &units[k];
	}
	char msg[160];
	snprintf(msg, sizeof msg, "%s at 0x%llx, outside every unit's registers (%u unit%s of 0x%llx bytes from 0x%llx)", access,
		 (unsigned long long)addr, nunits, nunits == 1 ? "" : "s", VRM_UNIT_SIZE, VRM_BASE);
	violation(&units[0], msg);
	return NULL;
}

void vrm_reset(struct vtd_regs_model *m, uint64_t cap, uint64_t ecap, bool te, bool ir, bool qi, bool pmr,
	       uint64_t fw_root)
{
	memset(m, 0, sizeof *m);
	m->ver = 0x10;
	m->cap = cap;
	m->ecap = ecap;
	if (te) {
		m->rtaddr = m->root = fw_root;
		m->gsts |= G_TE | G_SRTP;
	}
	if (qi) {
		m->iqa = 0x7f000000;         /* the firmware's queue, fully read */
		m->iqh = m->iqt = 0x40;
		m->gsts |= G_QIE;
	}
	if (ir) {
		m->irta = m->irt = 0x7e000000 | 7;
		m->gsts |= G_IRE | G_SIRTP;
	}
	if (pmr)
		m->pmen = PMEN_EPM | PMEN_PRS;
	m->te_at_start = te;
}

static unsigned bits(uint32_t v)
{
	unsigned n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

static void gcmd(struct vtd_regs_model *m, uint32_t v)
{
	uint32_t change = (v ^ m->gsts) & G_PERSISTENT, once = v & G_ONESHOT;
	char msg[160];
	m->gcmd_writes++;
	if (bits(change) + bits(once) > 1) {
		snprintf(msg, sizeof msg, "GCMD 0x%08x asks for several commands at once", v);
		violation(m, msg);
	}
	if (once & G_SRTP) {
		m->root = m->rtaddr;
		m->gsts |= G_SRTP;
		m->srtp_step = m->step;
	}
	if (once & G_SIRTP) {
		m->irt = m->irta;
		m->gsts |= G_SIRTP;
		m->sirtp_step = m->step;
	}
	if (once & G_WBF)
		m->gsts &= ~G_WBF;               /* the flush is done at once */
	if (change & G_TE) {
		if (v & G_TE) {
			if (!(m->gsts & G_SRTP))
				violation(m, "TE set with no root table latched");
			m->gsts |= G_TE;
			m->te_set_step = m->step;
		} else {
			m->gsts &= ~G_TE;
		}
	}
	if (change & G_QIE) {
		if (v & G_QIE) {
			m->iqh = 0;
			m->gsts |= G_QIE;
		} else {
			if (m->gsts & G_IRE)
				violation(m, "QIE cleared while IRES is 1 (the interrupt entry cache is invalidated only through the queue)");
			if (m->iqh != m->iqt)
				violation(m, "QIE cleared with descriptors not yet read (IQH != IQT)");
			m->gsts &= ~G_QIE;
			m->qie_off_step = m->step;
		}
	}
	if (change & G_IRE) {
		if (v & G_IRE) {
			if (!(m->gsts & G_SIRTP))
				violation(m, "IRE set with no interrupt-remapping table latched (SIRTP)");
			m->gsts |= G_IRE;
		} else {
			m->gsts &= ~G_IRE;
			m->ire_off_step = m->step;
		}
	}
	if (change & G_CFI)
		m->gsts ^= G_CFI;
	if (m->te_at_start && !(m->gsts & G_TE))
		violation(m, "TES reads 0 after the firmware left translation on: a window with no DMA protection");
}

/* The descriptors from IQH to IQT ("Invalidation Descriptors": type 3:0;
 * wait: SW 5, status data 63:32, status address in the high quadword). */
static void run_queue(struct vtd_regs_model *m)
{
	uint64_t entries = 256ull << (m->iqa & 7);
	uint64_t *q = (uint64_t *)(uintptr_t)(m->iqa & ~0xfffull);
	while (m->iqh != m->iqt) {
		uint64_t i = (m->iqh >> 4) % entries;
		uint64_t lo = q[2 * i], hi = q[2 * i + 1];
		if (m->refuse_types >> (lo & 0xf) & 1) {
			/* "Invalidation Queue Error": the unit stops with IQH on the
			 * descriptor it refused, FSTS.IQE set, until IQE is cleared. */
			m->fsts |= 1u << 4;
			m->iqe_seen++;
			return;
		}
		m->step++;                       /* in queue order, one at a time */
		switch (lo & 0xf) {
		case 1: m->cc_step = m->step; break;
		case 2:
			if (m->cc_step < m->srtp_step)
				violation(m, "IOTLB invalidated before the context cache after SRTP");
			m->iotlb_step = m->step;
			break;
		case 4: if (lo & (1u << 4)) m->iec_index_last = (uint32_t)(lo >> 32) & 0xffff, m->iec_index++; else m->iec_global++; break;
		case 5:
			if (lo & (1u << 5))
				*(volatile uint32_t *)(uintptr_t)(hi & ~3ull) = (uint32_t)(lo >> 32);
			break;
		default: violation(m, "unknown invalidation descriptor"); break;
		}
		m->iqh = ((i + 1) % entries) << 4;
	}
}

uint64_t vtd_mmio_read(uint64_t addr, unsigned size)
{
	if (!units)   /* no model: plain memory stands for the registers (test_dmar_servers.c) */
		return size == 4 ? *(volatile uint32_t *)(uintptr_t)addr : *(volatile uint64_t *)(uintptr_t)addr;
	uint64_t off;
	struct vtd_regs_model *m = unit_at(addr, &off, "read");
	hw_tsc += 1000;                          /* time passes: the callers' time-outs end */
	if (!m)
		return 0;
	uint64_t iotlb = ((m->ecap >> 8) & 0x3ff) * 16 + 8, fro = ((m->cap >> 24) & 0x3ff) * 16;
	if (off >= fro && off < fro + sizeof m->frcd) {
		uint64_t r = (off - fro) / 16, q = ((off - fro) % 16) / 8;
		uint64_t v = m->frcd[r][q];
		return size == 4 ? (off & 4 ? v >> 32 : (uint32_t)v) : v;
	}
	if (off == iotlb)
		return m->iotlb;
	switch (off) {
	case 0x00: return m->ver;
	case 0x08: return m->cap;
	case 0x10: return m->ecap;
	case 0x1c: return m->gsts;
	case 0x20: return m->rtaddr;
	case 0x28: return m->ccmd;
	case 0x34: return m->fsts;
	case 0x38: return m->fectl;
	case 0x64: return m->pmen;
	case 0x80:
		if (m->fw_queue_draining && (m->gsts & G_QIE) && m->iqh != m->iqt)
			m->iqh += 0x10;
		return m->iqh;
	case 0x88: return m->iqt;
	case 0x90: return m->iqa;
	case 0xb8: return m->irta;
	}
	char msg[80];
	snprintf(msg, sizeof msg, "read of an unmodelled register at offset 0x%llx", (unsigned long long)off);
	violation(m, msg);
	return 0;
}

void vtd_mmio_write(uint64_t addr, unsigned size, uint64_t v)
{
	if (!units) {
		if (size == 4)
			*(volatile uint32_t *)(uintptr_t)addr = (uint32_t)v;
		else
			*(volatile uint64_t *)(uintptr_t)addr = v;
		return;
	}
	uint64_t off;
	struct vtd_regs_model *m = unit_at(addr, &off, "write");
	if (!m)
		return;
	uint64_t iotlb = ((m->ecap >> 8) & 0x3ff) * 16 + 8, fro = ((m->cap >> 24) & 0x3ff) * 16;
	char msg[96];
	m->step++;
	if (off >= fro && off < fro + sizeof m->frcd) {
		uint64_t r = (off - fro) / 16;
		if ((off - fro) % 16 >= 8 && (size == 8 ? v >> 63 : (off & 4) && (v >> 31)))
			m->frcd[r][1] &= ~(1ull << 63);   /* F: write 1 to clear */
		return;
	}
	if (off == iotlb) {
		if (m->gsts & G_QIE)
			violation(m, "IOTLB register written while queued invalidation is on");
		if (v & IOTLB_IVT) {
			if (m->cc_step < m->srtp_step)
				violation(m, "IOTLB invalidated before the context cache after SRTP");
			m->iotlb_step = m->step;
		}
		m->iotlb = v & ~IOTLB_IVT;
		return;
	}
	switch (off) {
	case 0x18: gcmd(m, (uint32_t)v); return;
	case 0x20: m->rtaddr = v; return;
	case 0x28:
		if (m->gsts & G_QIE)
			violation(m, "CCMD written while queued invalidation is on");
		if (v & CCMD_ICC)
			m->cc_step = m->step;
		m->ccmd = v & ~CCMD_ICC;
		return;
	case 0x34: {
		bool iqe = m->fsts & (1u << 4);
		m->fsts &= ~(uint32_t)(v & 0x7f);
		if (iqe && !(m->fsts & (1u << 4)) && (m->gsts & G_QIE))
			run_queue(m);                /* the unit fetches again from IQH */
		return;
	}
	case 0x38:
		m->fectl = (uint32_t)v & 0xc0000000u;
		if ((v & (1u << 31)) && !m->fectl_mask_step)
			m->fectl_mask_step = m->step;
		return;
	case 0x64:
		if ((m->pmen & PMEN_EPM) && !(v & PMEN_EPM)) {
			if (!(m->gsts & G_TE))
				violation(m, "PMRs turned off while TES is 0");
			m->pmr_off_step = m->step;
			m->pmen = 0;
		} else if (v & PMEN_EPM) {
			m->pmen = PMEN_EPM | PMEN_PRS;
		}
		return;
	case 0x88:
		m->iqt = v & 0x7fff0;
		if ((m->gsts & G_QIE) && !(m->fsts & (1u << 4)))
			run_queue(m);
		return;
	case 0x90: m->iqa = v; return;
	case 0xb8: m->irta = v; return;
	}
	snprintf(msg, sizeof msg, "write of an unmodelled register at offset 0x%llx", (unsigned long long)off);
	violation(m, msg);
}
