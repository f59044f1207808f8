/* The TSC against a reference counter (see tsc_ref.h). An SMI, or an
 * emulator's thread preempted, between a TSC read and the reference read
 * it is paired with would move the pairing: each reference read is
 * bracketed by two TSC reads, and a window whose brackets are too wide is
 * not believed but measured again. One in the middle of a window does no
 * harm: both clocks run on through it. */
#include "tsc_ref.h"

#define BP 10000

struct end { uint64_t mid, half, val; };

static uint64_t mask_of(unsigned bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

/* The tightest of TSC_REF_READS bracketed reads. */
static struct end read_end(const struct tsc_ref_ops *o, uint64_t mask, uint64_t *tightest)
{
	struct end e = { 0, ~0ull, 0 };
	for (int i = 0; i < TSC_REF_READS; i++) {
		uint64_t t0 = o->tsc(o->ctx);
		uint64_t v = o->read(o->ctx) & mask;
		uint64_t t1 = o->tsc(o->ctx);
		uint64_t br = t1 - t0;
		if (br / 2 < e.half) {
			e = (struct end){ t0 + br / 2, br / 2 + br % 2, v };
			if (br < *tightest)
				*tightest = br;
		}
	}
	return e;
}

/* slack/ticks of a window, in basis points (a large number when it is no window). */
static uint64_t slack_bp(const struct tsc_ref_window *w)
{
	if (!w->ticks || w->slack > ~0ull / BP)
		return ~0ull;
	return w->slack * BP / w->ticks;
}

void tsc_ref_measure(const struct tsc_ref_ops *o, enum tsc_ref_kind kind, uint64_t hz, unsigned bits,
		     struct tsc_ref_meas *m)
{
	const uint64_t mask = mask_of(bits);
	uint64_t ms = TSC_REF_WINDOW_MS;
	struct tsc_ref_window best = { 0, ~0ull, 0 };

	*m = (struct tsc_ref_meas){ .kind = kind, .hz = hz, .bits = bits, .read_ticks = ~0ull };
	if (kind == TSC_REF_NONE || !hz || hz > TSC_REF_MAX_HZ)
		return;
	while (m->tries < TSC_REF_TRIES && m->windows < TSC_REF_WINDOWS) {
		const uint64_t want = hz * ms / 1000;
		/* No TSC is faster than TSC_MAX_KHZ: a window not done by then
		 * is a counter that does not count (or counts far slower than
		 * its rate says). */
		const uint64_t limit = TSC_MAX_KHZ * ms;
		struct end a = read_end(o, mask, &m->read_ticks);
		uint64_t start = o->tsc(o->ctx);
		while (((o->read(o->ctx) - a.val) & mask) < want) {
			/* Past the deadline, the verdict needs a read taken after it:
			 * the reader may have been held between the read above and
			 * this TSC read (a preempted vCPU thread), the counter running. */
			if (o->tsc(o->ctx) - start > limit && ((o->read(o->ctx) - a.val) & mask) < want) {
				m->stuck = true;
				return;
			}
		}
		struct end b = read_end(o, mask, &m->read_ticks);
		struct tsc_ref_window w = { b.mid - a.mid, a.half + b.half, (b.val - a.val) & mask };
		m->tries++;
		if (slack_bp(&w) <= TSC_REF_SLACK_BP) {
			m->w[m->windows++] = w;
			continue;
		}
		/* Disturbed: kept only as the fallback, and the next window longer. */
		if (slack_bp(&w) < slack_bp(&best))
			best = w;
		if (ms < TSC_REF_WINDOW_MAX_MS)
			ms *= 2;
	}
	if (!m->windows)
		m->w[0] = best;
}

uint64_t tsc_ref_khz(const struct tsc_ref_meas *m, const struct tsc_ref_window *w)
{
	if (!w->counts || !m->hz || w->ticks > ~0ull / m->hz)
		return 0;
	return w->ticks * m->hz / w->counts / 1000;
}

uint64_t tsc_ref_khz_max(const struct tsc_ref_meas *m, const struct tsc_ref_window *w)
{
	struct tsc_ref_window hi = { w->ticks + w->slack, 0, w->counts };
	if (hi.ticks < w->ticks)
		return 0;
	/* Rounded up: the bound must not fall below the truth. */
	if (!hi.counts || !m->hz || hi.ticks > ~0ull / m->hz)
		return 0;
	return (hi.ticks * m->hz + hi.counts * 1000 - 1) / hi.counts / 1000;
}

const char *tsc_ref_name(enum tsc_ref_kind k)
{
	return k == TSC_REF_HPET ? "the HPET" : k == TSC_REF_PMTMR ? "the PM timer" : "no reference";
}
