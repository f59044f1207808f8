/* The IPI model (see ipi_model.h): guarded raw memory, recording callbacks,
 * predictions from the documents, and checked runs of ipi/ipi.c. */
#include "test.h"
#include "ipi_model.h"
#include "sdm_pid.h"
#include <stdarg.h>

#define GUARD 64                      /* canary bytes around every descriptor */
#define SLOT (SDM_PID_BYTES + GUARD)  /* descriptor k at arena + GUARD + k * SLOT */

static uint8_t canary(size_t i) { return (uint8_t)(0xa5 ^ (i / 64) ^ (i * 7)); }

uint8_t *mi_desc(struct mi_dom *m, unsigned k) { return m->arena + GUARD + (size_t)k * SLOT; }
uint8_t *mi_shadow_desc(struct mi_dom *m, unsigned k) { return m->shadow + GUARD + (size_t)k * SLOT; }

int mi_vcpu_of(const struct mi_dom *m, uint64_t apic_id)
{
	for (unsigned k = 0; k < m->n; k++)
		if (m->id[k] == apic_id)
			return (int)k;
	return -1;
}

static void record(struct mi_dom *m, uint32_t kind, uint32_t a, uint32_t b)
{
	if (m->nev == MI_MAXEV) {
		m->ev_overflow = true;
		return;
	}
	m->ev[m->nev++] = (struct mi_ev){ kind, a, b };
}

static void cb_notify(void *ctx, uint32_t ndst, uint8_t nv) { record(ctx, MI_EV_NOTIFY, ndst, nv); }
static void cb_nmi(void *ctx, uint32_t vcpu) { record(ctx, MI_EV_NMI, vcpu, 0); }
static void cb_init(void *ctx, uint32_t vcpu) { record(ctx, MI_EV_INIT, vcpu, 0); }
static void cb_sipi(void *ctx, uint32_t vcpu, uint8_t vector) { record(ctx, MI_EV_SIPI, vcpu, vector); }

void mi_dom_init(struct mi_dom *m, const uint32_t *ids, unsigned n, uint32_t last)
{
	memset(m, 0, sizeof *m);
	m->n = n;
	m->last = last;
	memcpy(m->id, ids, n * sizeof *ids);

	/* Descriptors 0..n-1 for the vCPUs, n for the decoy, canaries between. */
	m->arena_bytes = GUARD + (size_t)(n + 1) * SLOT;
	m->arena = aligned_alloc(SDM_PID_ALIGN, m->arena_bytes);
	m->shadow = malloc(m->arena_bytes);
	for (size_t i = 0; i < m->arena_bytes; i++)
		m->arena[i] = canary(i);
	for (unsigned k = 0; k <= n; k++)
		sdm_pid_init(mi_desc(m, k), (uint8_t)(0xe0 + k), 0x100 + 7 * k);

	/* The PID-pointer table: 64 canary bytes, entries 0..last+1, 64 canary bytes. */
	size_t entries = (size_t)last + 2;
	m->table_bytes = 2 * GUARD + ((entries * SDM_PIDPT_ENTRY_BYTES + 63) & ~(size_t)63);
	m->table_buf = aligned_alloc(64, m->table_bytes);
	m->table_shadow = malloc(m->table_bytes);
	for (size_t i = 0; i < m->table_bytes; i++)
		m->table_buf[i] = canary(i) ^ 0x3c;
	m->table = m->table_buf + GUARD;
	memset(m->table, 0, entries * SDM_PIDPT_ENTRY_BYTES);
	for (unsigned k = 0; k < n; k++)
		sdm_pidpt_set(m->table, ids[k], mi_desc(m, k));
	sdm_pidpt_set(m->table, (uint64_t)last + 1, mi_desc(m, n));   /* valid, but past the last index */

	m->vcpu_of_apic = malloc(((size_t)last + 1) * sizeof *m->vcpu_of_apic);
	for (uint32_t i = 0; i <= last; i++)
		m->vcpu_of_apic[i] = IPI_NO_VCPU;
	m->apic_id = malloc(n * sizeof *m->apic_id);
	for (unsigned k = 0; k < n; k++) {
		m->vcpu_of_apic[ids[k]] = (uint16_t)k;
		m->apic_id[k] = ids[k];
	}
	m->tstats = calloc(n, sizeof *m->tstats);
	m->tstats_exp = calloc(n, sizeof *m->tstats_exp);
	m->d = (struct ipi_domain){
		.pid_table = (const uint64_t *)(void *)m->table, .last_index = last, .vcpu_of_apic = m->vcpu_of_apic,
		.nvcpus = n, .apic_id = m->apic_id, .tstats = m->tstats,
		.ops = { .notify = cb_notify, .nmi = cb_nmi, .init = cb_init, .sipi = cb_sipi, .ctx = m },
	};
	memcpy(m->shadow, m->arena, m->arena_bytes);
	memcpy(m->table_shadow, m->table_buf, m->table_bytes);
}

void mi_dom_free(struct mi_dom *m)
{
	free(m->arena); free(m->shadow); free(m->table_buf); free(m->table_shadow);
	free(m->vcpu_of_apic); free(m->apic_id); free(m->tstats); free(m->tstats_exp);
}

void mi_set_ctrl(struct mi_dom *m, unsigned k, uint8_t ctrl)
{
	mi_desc(m, k)[SDM_PID_CTRL_BYTE] = ctrl;
	mi_shadow_desc(m, k)[SDM_PID_CTRL_BYTE] = ctrl;
}

void mi_drain(struct mi_dom *m, unsigned k)
{
	sdm_pid_drain(mi_desc(m, k));
	sdm_pid_drain(mi_shadow_desc(m, k));
}

void mi_drain_all(struct mi_dom *m)
{
	for (unsigned k = 0; k < m->n; k++)
		mi_drain(m, k);
}

/* ---- predictions ---- */

/* The fast path of ipi.h, a software IPI virtualization (SDM Vol. 3C, "IPI
 * Virtualization"): fixed mode, physical destination, no shorthand, vector
 * >= 16, no reserved bit; the destination indexes the PID-pointer table,
 * bounded by LAST_PID_POINTER_INDEX, and its entry must be valid. The
 * hardware model (ipiv_model.c) also wants trigger mode edge, as self-IPI
 * virtualization does ("APIC-Write Emulation"); ipi.h does not list it, and
 * the trigger mode is "ignored for all other delivery modes" than INIT
 * de-assert, so either path delivers the same: this model follows ipi.h. */
bool mi_fast_qualifies(const struct mi_dom *m, uint64_t icr, unsigned *k)
{
	if ((icr & MI_RESERVED) || MI_GET_MODE(icr) != MI_FIXED || (icr & MI_LOGICAL) || MI_GET_SH(icr) != MI_SH_NONE ||
	    MI_GET_VEC(icr) < 16)
		return false;
	uint32_t dest = MI_GET_DEST(icr);
	if (dest > m->last)
		return false;
	uint64_t e = sdm_pidpt_entry(m->table_shadow + GUARD, dest);
	if (!(e & SDM_PIDPT_VALID))
		return false;
	uintptr_t desc = (uintptr_t)(e & ~SDM_PIDPT_LOW_BITS), base = (uintptr_t)m->arena + GUARD;
	if (desc < base || (desc - base) % SLOT || (desc - base) / SLOT >= m->n)
		return false;   /* not a vCPU's descriptor: never built so */
	*k = (unsigned)((desc - base) / SLOT);
	return true;
}

/* The slow path: SDM Vol. 3A "Determining IPI Destination" in x2APIC mode,
 * with ipi.h's choices: reserved bits -> #GP; SMI, modes 011b and 111b and a
 * fixed or lowest-priority vector < 16 refused; INIT level de-assert (level
 * 0, trigger level) ignored; a destination set with no vCPU dropped. */
struct mi_pred mi_predict_icr(const struct mi_dom *m, uint32_t self, uint64_t icr)
{
	unsigned mode = MI_GET_MODE(icr), sh = MI_GET_SH(icr), vec = MI_GET_VEC(icr);
	uint32_t dest = MI_GET_DEST(icr);
	struct mi_pred p = { .mode = mode };
	if (icr & MI_RESERVED) {
		p.cls = MI_GP;
		return p;
	}
	if (mode == MI_SMI || mode == MI_MODE3 || mode == MI_MODE7 ||
	    ((mode == MI_FIXED || mode == MI_LOWEST) && vec < 16)) {
		p.cls = MI_REFUSED;
		return p;
	}
	if (mode == MI_INIT && !(icr & MI_ASSERT) && (icr & MI_TRIG_LEVEL)) {
		p.cls = MI_DEASSERT;
		return p;
	}
	for (unsigned k = 0; k < m->n; k++) {
		bool in;
		switch (sh) {
		case MI_SH_SELF: in = k == self; break;
		case MI_SH_ALL: in = true; break;
		case MI_SH_OTHERS: in = k != self; break;
		default:
			if (icr & MI_LOGICAL)
				in = mi_logical_match(mi_ldr(m->id[k]), dest);
			else
				in = dest == MI_BROADCAST || m->id[k] == dest;
		}
		if (in)
			p.set |= 1u << k;
	}
	p.cls = p.set ? MI_DELIVER : MI_DROPPED;
	return p;
}

/* KVM_HC_SEND_IPI: a0 bit b -> APIC ID min + b, a1 bit b -> min + 64 + b
 * (IDs computed without wrapping: an ID above 0xffffffff names nothing);
 * errors as ipi.h documents them. A fixed or lowest-priority vector < 16 is
 * not documented either way (MI_PV_UNDOC). */
struct mi_pv_pred mi_predict_pv(const struct mi_dom *m, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr)
{
	unsigned mode = MI_GET_MODE(icr);
	struct mi_pv_pred p = { .cls = MI_PV_OK };
	if ((icr & MI_LOGICAL) || MI_GET_SH(icr) != MI_SH_NONE || (mode != MI_FIXED && mode != MI_LOWEST && mode != MI_NMI)) {
		p.cls = MI_PV_ERR;
		return p;
	}
	if (mode != MI_NMI && MI_GET_VEC(icr) < 16)
		p.cls = MI_PV_UNDOC;
	uint64_t map[2] = { lo, hi };
	for (unsigned w = 0; w < 2; w++)
		for (unsigned b = 0; b < 64; b++) {
			if (!((map[w] >> b) & 1))
				continue;
			unsigned __int128 id = (unsigned __int128)min + 64 * w + b;
			int k = id > 0xffffffffu ? -1 : mi_vcpu_of(m, (uint64_t)id);
			if (k < 0)
				p.skipped++;
			else
				p.set |= 1u << k;
		}
	return p;
}

/* ---- checking ---- */

__attribute__((format(printf, 4, 5)))
static void fail(struct mi_dom *m, const char *what, uint64_t icr, const char *fmt, ...)
{
	char msg[512], detail[400];
	va_list ap;
	if (m->failures++ >= 8)
		return;   /* the case has failed already; keep the log readable */
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof msg, "%s, ICR 0x%016llx: %s", what, (unsigned long long)icr, detail);
	test_fail(__FILE__, __LINE__, msg);
}

/* The model's post into its shadow descriptor k (SDM "Posted-Interrupt
 * Processing", as IPI virtualization does it): PIR bit; if ON and SN are
 * both 0, ON is set and NV goes to NDST, the sender's own NDST included
 * (ipi.h: "also when the target is the sender"). */
static void model_post(struct mi_dom *m, unsigned k, unsigned vec)
{
	uint8_t *s = mi_shadow_desc(m, k);
	bool notified = false;
	sdm_pid_set_pir(s, vec);
	if (!(s[SDM_PID_CTRL_BYTE] & (SDM_PID_ON | SDM_PID_SN))) {
		s[SDM_PID_CTRL_BYTE] |= SDM_PID_ON;
		notified = true;
		if (m->nexp < MI_MAXEV)
			m->exp[m->nexp++] = (struct mi_ev){ MI_EV_NOTIFY, sdm_pid_ndst(s), sdm_pid_nv(s) };
	}
	m->tstats_exp[k].posts++;
	m->tstats_exp[k].vec_posts[vec]++;
	m->tstats_exp[k].notifies += notified;
}

static void expect_ev(struct mi_dom *m, uint32_t kind, uint32_t a, uint32_t b)
{
	if (m->nexp < MI_MAXEV)
		m->exp[m->nexp++] = (struct mi_ev){ kind, a, b };
}

static int ev_cmp(const void *x, const void *y)
{
	const struct mi_ev *a = x, *b = y;
	if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
	if (a->a != b->a) return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static const char *region(const struct mi_dom *m, size_t off, char *buf, size_t n)
{
	if (off < GUARD || (off - GUARD) % SLOT >= SDM_PID_BYTES)
		return "a canary between descriptors";
	unsigned k = (unsigned)((off - GUARD) / SLOT);
	if (k == m->n)
		snprintf(buf, n, "byte %zu of the decoy descriptor (past the last index)", (off - GUARD) % SLOT);
	else
		snprintf(buf, n, "byte %zu of descriptor %u", (off - GUARD) % SLOT, k);
	return buf;
}

static int compare_memory(struct mi_dom *m, const char *what, uint64_t icr)
{
	int bad = 0;
	char buf[64];
	for (size_t i = 0; i < m->arena_bytes; i++)
		if (m->arena[i] != m->shadow[i]) {
			fail(m, what, icr, "%s is 0x%02x, the model expects 0x%02x", region(m, i, buf, sizeof buf),
			     m->arena[i], m->shadow[i]);
			bad++;
			break;
		}
	if (memcmp(m->table_buf, m->table_shadow, m->table_bytes)) {
		fail(m, what, icr, "the PID-pointer table or its canaries changed");
		bad++;
	}
	for (uint32_t i = 0; i <= m->last; i++) {
		int k = mi_vcpu_of(m, i);
		if (m->vcpu_of_apic[i] != (k < 0 ? IPI_NO_VCPU : (uint16_t)k)) {
			fail(m, what, icr, "vcpu_of_apic[%u] changed", i);
			bad++;
		}
	}
	for (unsigned k = 0; k < m->n; k++)
		if (m->apic_id[k] != m->id[k]) {
			fail(m, what, icr, "apic_id[%u] changed", k);
			bad++;
		}
	return bad;
}

int mi_compare_memory(struct mi_dom *m, const char *what) { return compare_memory(m, what, 0); }

/* Memory, callbacks and per-target counters after one call. */
static void check_after(struct mi_dom *m, const char *what, uint64_t icr)
{
	compare_memory(m, what, icr);
	if (m->ev_overflow)
		fail(m, what, icr, "more than %d callbacks", MI_MAXEV);
	qsort(m->ev, m->nev, sizeof m->ev[0], ev_cmp);
	qsort(m->exp, m->nexp, sizeof m->exp[0], ev_cmp);
	if (m->nev != m->nexp || memcmp(m->ev, m->exp, m->nev * sizeof m->ev[0])) {
		char got[160] = "", want[160] = "";
		for (unsigned i = 0; i < m->nev && i < 6; i++)
			snprintf(got + strlen(got), sizeof got - strlen(got), " %u(0x%x,0x%x)", m->ev[i].kind, m->ev[i].a, m->ev[i].b);
		for (unsigned i = 0; i < m->nexp && i < 6; i++)
			snprintf(want + strlen(want), sizeof want - strlen(want), " %u(0x%x,0x%x)", m->exp[i].kind, m->exp[i].a,
				 m->exp[i].b);
		fail(m, what, icr, "callbacks (1 notify(ndst,nv) 2 nmi 3 init 4 sipi(vcpu,vec)): got %u:%s, model %u:%s",
		     m->nev, got, m->nexp, want);
	}
	for (unsigned k = 0; k < m->n; k++) {
		const struct ipi_target_stats *t = &m->tstats[k], *e = &m->tstats_exp[k];
		if (t->posts != e->posts || t->notifies != e->notifies || memcmp(t->vec_posts, e->vec_posts, sizeof t->vec_posts))
			fail(m, what, icr, "vCPU %u target stats: posts %llu notifies %llu, model %llu %llu", k,
			     (unsigned long long)t->posts, (unsigned long long)t->notifies, (unsigned long long)e->posts,
			     (unsigned long long)e->notifies);
	}
}

static void check_src(struct mi_dom *m, const char *what, uint64_t icr, const struct ipi_src_stats *got,
		      const struct ipi_src_stats *want)
{
#define F(x) { #x, offsetof(struct ipi_src_stats, x) }
	static const struct { const char *name; size_t off; } f[] = {
		F(fast), F(slow_mode[0]), F(slow_mode[1]), F(slow_mode[2]), F(slow_mode[3]), F(slow_mode[4]),
		F(slow_mode[5]), F(slow_mode[6]), F(slow_mode[7]), F(slow_shorthand[0]), F(slow_shorthand[1]),
		F(slow_shorthand[2]), F(slow_shorthand[3]), F(slow_logical), F(dropped), F(refused), F(init_deassert),
		F(pv_calls), F(pv_targets), F(pv_errors),
	};
#undef F
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		uint64_t g, w;
		memcpy(&g, (const char *)got + f[i].off, 8);
		memcpy(&w, (const char *)want + f[i].off, 8);
		if (g != w)
			fail(m, what, icr, "source stats %s is %llu, the model expects %llu", f[i].name, (unsigned long long)g,
			     (unsigned long long)w);
	}
}

static void begin(struct mi_dom *m)
{
	m->nev = m->nexp = 0;
	m->ev_overflow = false;
}

static uint32_t posted_mask(const struct mi_dom *m, const uint64_t *before)
{
	uint32_t mask = 0;
	for (unsigned k = 0; k < m->n; k++)
		if (m->tstats[k].posts != before[k])
			mask |= 1u << k;
	return mask;
}

enum ipi_result mi_run_fast(struct mi_dom *m, uint32_t self, uint64_t icr, struct ipi_src_stats *st, const char *what)
{
	struct ipi_src_stats want = *st;
	unsigned k;
	bool q = mi_fast_qualifies(m, icr, &k);
	begin(m);
	enum ipi_result r = ipi_fast(&m->d, self, icr, st);
	if (r != (q ? IPI_DONE : IPI_SLOW))
		fail(m, what, icr, "ipi_fast returned %d, the model expects %s", r, q ? "IPI_DONE" : "IPI_SLOW");
	if (q) {
		model_post(m, k, MI_GET_VEC(icr));
		want.fast++;
	}
	check_after(m, what, icr);
	check_src(m, what, icr, st, &want);
	return r;
}

enum ipi_result mi_run_icr(struct mi_dom *m, uint32_t self, uint64_t icr, struct ipi_src_stats *st, const char *what,
			   uint32_t *posted)
{
	struct mi_pred p = mi_predict_icr(m, self, icr);
	struct ipi_src_stats want = *st;
	uint64_t before[MI_MAXV];
	for (unsigned k = 0; k < m->n; k++)
		before[k] = m->tstats[k].posts;
	begin(m);
	enum ipi_result r = ipi_icr_write(&m->d, self, icr, st);
	if (r != (p.cls == MI_GP ? IPI_GP : IPI_DONE))
		fail(m, what, icr, "ipi_icr_write returned %d, the model expects %s", r, p.cls == MI_GP ? "IPI_GP" : "IPI_DONE");
	uint32_t got = posted_mask(m, before);
	if (p.cls == MI_DELIVER) {
		unsigned vec = MI_GET_VEC(icr);
		if (p.mode == MI_LOWEST) {
			/* Exactly one of the set; which one is the code's choice. */
			if (__builtin_popcount(got) != 1 || (got & ~p.set))
				fail(m, what, icr, "lowest priority posted to vCPUs 0x%x, the model wants one of 0x%x", got, p.set);
			else
				model_post(m, (unsigned)__builtin_ctz(got), vec);
		}
		for (unsigned k = 0; k < m->n; k++) {
			if (!(p.set >> k & 1))
				continue;
			if (p.mode == MI_FIXED)
				model_post(m, k, vec);
			else if (p.mode == MI_NMI)
				expect_ev(m, MI_EV_NMI, k, 0);
			else if (p.mode == MI_INIT)
				expect_ev(m, MI_EV_INIT, k, 0);
			else if (p.mode == MI_SIPI)
				expect_ev(m, MI_EV_SIPI, k, vec);
		}
	}
	/* Counters: every write is one of #GP, refused, de-assert, dropped or delivered. */
	unsigned mode = MI_GET_MODE(icr), sh = MI_GET_SH(icr);
	bool counted = p.cls != MI_GP || st->slow_mode[mode] != want.slow_mode[mode];   /* #GP: not documented */
	if (counted) {
		want.slow_mode[mode]++;
		want.slow_shorthand[sh]++;
		want.slow_logical += !!(icr & MI_LOGICAL);
	}
	want.refused += p.cls == MI_GP || p.cls == MI_REFUSED;
	want.init_deassert += p.cls == MI_DEASSERT;
	want.dropped += p.cls == MI_DROPPED;
	check_after(m, what, icr);
	check_src(m, what, icr, st, &want);
	if (posted)
		*posted = got;
	return r;
}

int64_t mi_run_pv(struct mi_dom *m, uint32_t self, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr,
		  struct ipi_src_stats *st, const char *what, uint32_t *posted)
{
	struct mi_pv_pred p = mi_predict_pv(m, lo, hi, min, icr);
	struct ipi_src_stats want = *st;
	uint64_t before[MI_MAXV];
	for (unsigned k = 0; k < m->n; k++)
		before[k] = m->tstats[k].posts;
	begin(m);
	int64_t r = ipi_pv_send(&m->d, self, lo, hi, min, icr, st);
	want.pv_calls++;
	if (p.cls == MI_PV_ERR || (p.cls == MI_PV_UNDOC && r == -MI_KVM_EINVAL)) {
		if (r != -MI_KVM_EINVAL)
			fail(m, what, icr, "PV send-IPI returned %lld, the model expects -%d", (long long)r, MI_KVM_EINVAL);
		want.pv_errors++;
	} else {
		int64_t n = __builtin_popcount(p.set);
		if (r != n)
			fail(m, what, icr, "PV send-IPI (min 0x%llx, a0 0x%llx, a1 0x%llx) returned %lld, the model expects %lld",
			     (unsigned long long)min, (unsigned long long)lo, (unsigned long long)hi, (long long)r, (long long)n);
		for (unsigned k = 0; k < m->n; k++)
			if (p.set >> k & 1) {
				if (MI_GET_MODE(icr) == MI_NMI)
					expect_ev(m, MI_EV_NMI, k, 0);
				else
					model_post(m, k, MI_GET_VEC(icr));
			}
		want.pv_targets += (uint64_t)n;
		want.dropped += p.skipped;
	}
	check_after(m, what, icr);
	check_src(m, what, icr, st, &want);
	if (posted)
		*posted = posted_mask(m, before);
	return r;
}

unsigned mi_count_ev(const struct mi_dom *m, uint32_t kind)
{
	unsigned n = 0;
	for (unsigned i = 0; i < m->nev; i++)
		n += m->ev[i].kind == kind;
	return n;
}

bool mi_has_ev(const struct mi_dom *m, uint32_t kind, uint32_t a, uint32_t b)
{
	for (unsigned i = 0; i < m->nev; i++)
		if (m->ev[i].kind == kind && m->ev[i].a == a && m->ev[i].b == b)
			return true;
	return false;
}
