/* INIT and SIPI emulation's bookkeeping (startup.h). */
#include "startup.h"

void startup_send_init(struct startup *s)
{
	__atomic_fetch_add(&s->inits_sent, 1, __ATOMIC_SEQ_CST);
}

void startup_send_sipi(struct startup *s, uint8_t vector)
{
	uint32_t gen = __atomic_load_n(&s->inits_sent, __ATOMIC_SEQ_CST) & 0xffff;
	__atomic_store_n(&s->sipi, vector | STARTUP_SIPI_VALID | gen << 16, __ATOMIC_SEQ_CST);
}

bool startup_init_pending(const struct startup *s)
{
	return __atomic_load_n(&s->inits_sent, __ATOMIC_SEQ_CST) != s->inits_done;
}

struct startup_step startup_take(struct startup *s, bool waiting)
{
	struct startup_step st = { .init = false, .sipi = -1, .stale = false };
	/* The SIPI first: its sender counted its INIT before recording it, so
	 * the count read after it covers that INIT (no SIPI taken for stale
	 * because its INIT was counted a moment too late). */
	uint32_t x = __atomic_exchange_n(&s->sipi, 0, __ATOMIC_SEQ_CST);
	uint32_t sent = __atomic_load_n(&s->inits_sent, __ATOMIC_SEQ_CST);
	if (sent != s->inits_done) {
		s->inits_done = sent;
		st.init = true;
		waiting = true;
	}
	if (!(x & STARTUP_SIPI_VALID))
		return st;
	if (waiting && (x >> 16) == (s->inits_done & 0xffff))
		st.sipi = (int)(x & 0xff);
	else
		st.stale = true;
	return st;
}
