/* The MSI trap's report (msi_trap.h): hvstat lines. */
#include "msi_trap.h"
#include "msi_trap_int.h"
#include "ept_live.h"
#include "ept_sync.h"
#include "../pci/alias.h"
#include "../lib/printk.h"

void msi_trap_report(void)
{
	if (!msi_trap_on)
		return;
	spin_lock(&msi_lock);
	char line[256];
	size_t n = 0;
	uint32_t by[VM_COUNT] = { 0 }, nfn = 0, npages = 0, hot = 0, vfs = 0, vfs_gone = 0, given = 0, untrapped = 0, swapped = 0, not_ready = 0;
	uint64_t emu = 0, passed = 0, table = 0, stray = 0;
	for (uint32_t k = 0; k < msi_nsegs; k++) {
		const struct vmsi *s = &msi_segs[k].s;
		for (unsigned r = 1; r < VM_COUNT; r++)
			by[r] += s->refused_by[r];
		nfn += s->nfn, npages += s->npages, hot += s->hot_added, vfs += s->vfs_found, vfs_gone += s->vfs_gone;
		given += msi_segs[k].ecam_given_back;
		untrapped += s->untrapped, swapped += s->swapped, not_ready += s->not_ready_writes;
		emu += s->cfg_emulated, passed += s->cfg_passed, table += s->table_accesses, stray += s->stray;
	}
	for (unsigned r = 1; r < VM_COUNT; r++)
		if (by[r] && n < sizeof line)
			n += (size_t)snprintf(line + n, sizeof line - n, " %s=%u", vmsi_refusal_name(r), by[r]);
	struct ept_sync_stats es = ept_sync_stats();
	pr_info("hvstat: msi functions=%u segments=%u hot_added=%u vfs_found=%u vfs_gone=%u ecam_given_back=%u cfg_emulated=%llu cfg_passed=%llu ecam=%llu table=%llu bad_insns=%llu unaligned=%llu late_pages=%llu pages_now=%u gone_pages=%llu stray=%llu ept_tables=%llu ept_refused=%llu shootdowns=%llu kicks=%llu unanswered=%llu untrapped=%u swapped=%u not_ready_writes=%u\n",
		nfn, msi_nsegs, hot, vfs, vfs_gone, given, (unsigned long long)emu, (unsigned long long)passed, (unsigned long long)msi_counts.ecam_accesses,
		(unsigned long long)table, (unsigned long long)msi_counts.bad_insns, (unsigned long long)msi_counts.unaligned, (unsigned long long)msi_counts.late_pages,
		npages, (unsigned long long)msi_counts.gone_pages, (unsigned long long)stray, (unsigned long long)ept_live_tables(),
		(unsigned long long)ept_live_refused(), (unsigned long long)es.shootdowns, (unsigned long long)es.kicks,
		(unsigned long long)es.timeouts, untrapped, swapped, not_ready);
	if (n)   /* a line of its own: with them the line above outgrew printk's 512 bytes */
		pr_info("hvstat: msi refusals%s\n", line);
	for (uint32_t k = 0; k < msi_nsegs; k++) {
		const struct msi_seg *g = &msi_segs[k];
		if (g->s.moves || g->s.lost || g->s.resizes || g->ecam_unfollowed)
			pr_info("hvstat: msi-moves segment=%u moved=%u lost=%u resized=%u ecam_moved=%u ecam_unfollowed=%u\n", g->s.seg,
				g->s.moves, g->s.lost, g->s.resizes, g->ecam_moved, g->ecam_unfollowed);
	}
	for (uint32_t k = 0; k < msi_nsegs; k++)
		for (uint32_t i = 0; i < msi_segs[k].s.nfn; i++) {
			const struct vmsi_fn *f = &msi_segs[k].s.fn[i];
			if (!f->writes)
				continue;                /* never programmed: nothing to say */
			bool x = f->msix && (f->msix_ctl & BIT(15));
			unsigned vecs = x ? f->nent : 1u << ((f->msi_ctl >> 4) & 7);
			char irte[16] = "-", name[24], sid[24];
			if (f->routes && f->reach.mode != VMODE_DIRECT && f->irte != VMSI_NO_IRTE)
				snprintf(irte, sizeof irte, "%u", f->irte);
			msi_say_fn(name, sizeof name, msi_segs[k].s.seg, f->bdf);
			vmsi_alias_str(f->src, f->bdf, sid, sizeof sid);
			pr_info("hvstat: msi %s cap=%s vectors=%u now=%s guest=0x%llx/0x%04x phys=0x%llx/0x%04x route=%s irte=%s vcpu=%d host=0x%x routed=%u refused=%u parked=%u vector=0x%02x%s%s\n",
				name, x ? "msix" : (f->msi_ctl & 1) ? "msi" : "off", vecs, vmsi_refusal_name(f->last_refusal),
				(unsigned long long)f->vaddr, f->vdata, (unsigned long long)f->paddr, f->pdata,
				f->routes ? vioapic_mode_names[f->reach.mode] : "none", irte, f->routes ? f->reach.vcpu : -1,
				f->reach.host_id, f->routes, f->refusals, f->parks, f->vdata & 0xff, sid[0] ? " " : "", sid);
		}
	spin_unlock(&msi_lock);
}
