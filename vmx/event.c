/* See event.h. */
#include "event.h"

#define VALID        (1u << 31)
#define DELIVER_CODE (1u << 11)
#define TYPE(i)      (((i) >> 8) & 7)
enum { T_EXT = 0, T_NMI = 2, T_HW = 3, T_SOFT_INT = 4, T_PRIV_SOFT = 5, T_SOFT_EXC = 6, T_OTHER = 7 };
enum { BENIGN, CONTRIBUTORY, PAGE_FAULT, DOUBLE_FAULT };

bool event_has_error_code(uint8_t v)
{
	return v == 8 || (v >= 10 && v <= 14) || v == 17 || v == 21;
}

/* SDM Vol. 3A, Table "Interrupt and Exception Classes". */
static int class_of(uint8_t v)
{
	switch (v) {
	case 0: case 10: case 11: case 12: case 13: return CONTRIBUTORY;
	case 14: return PAGE_FAULT;
	case 8: return DOUBLE_FAULT;
	default: return BENIGN;
	}
}

static struct vmx_event hw_exception(uint8_t vector, uint32_t error)
{
	struct vmx_event e = { VALID | (T_HW << 8) | vector, 0, 0 };
	if (event_has_error_code(vector)) {
		e.info |= DELIVER_CODE;
		e.error = error;
	}
	return e;
}

enum event_result event_queue_exception(struct event_queue *q, uint8_t vector, uint32_t error)
{
	struct vmx_event *now = &q->now;
	if (!(now->info & VALID)) {
		*now = hw_exception(vector, error);
		return EVENT_QUEUED;
	}
	switch (TYPE(now->info)) {
	case T_HW: {
		int first = class_of((uint8_t)now->info), second = class_of(vector);
		bool bad = second == CONTRIBUTORY || second == PAGE_FAULT;
		if (first == DOUBLE_FAULT && bad) {
			now->info = 0;
			return EVENT_SHUTDOWN;
		}
		if ((first == CONTRIBUTORY && second == CONTRIBUTORY) || (first == PAGE_FAULT && bad))
			*now = hw_exception(8, 0);
		else
			*now = hw_exception(vector, error);
		return EVENT_QUEUED;
	}
	case T_EXT:
	case T_NMI:
		q->deferred = *now;
		*now = hw_exception(vector, error);
		return EVENT_QUEUED;
	default:                             /* software interrupts and exceptions, other events */
		*now = hw_exception(vector, error);
		return EVENT_QUEUED;
	}
}

uint32_t event_entry_info(const struct vmx_event *e, bool protected_mode)
{
	return protected_mode ? e->info : e->info & ~DELIVER_CODE;
}

#define RFLAGS_RF BIT(16)
/* The fault-class exceptions (SDM Vol. 3A, Table "Protected-Mode Exceptions
 * and Interrupts"): #DE, #BR, #UD, #NM, coprocessor segment overrun, #TS,
 * #NP, #SS, #GP, #PF, #MF, #AC, #XM, #VE, #CP. */
#define FAULT_VECTORS (BIT(0) | BIT(5) | BIT(6) | BIT(7) | BIT(9) | BIT(10) | BIT(11) | BIT(12) | BIT(13) | \
		       BIT(14) | BIT(16) | BIT(17) | BIT(19) | BIT(20) | BIT(21))

uint64_t event_entry_rflags(const struct vmx_event *e, uint64_t rflags)
{
	uint8_t vector = (uint8_t)e->info;
	if ((e->info & VALID) && TYPE(e->info) == T_HW && vector < 32 && (FAULT_VECTORS & BIT(vector)))
		return rflags | RFLAGS_RF;
	return rflags;
}

uint32_t event_ept_interruptibility(uint64_t qual, uint32_t idt_info, uint32_t interruptibility, bool nmi_control)
{
	if (nmi_control && (qual & BIT(12)) && !(idt_info & VALID))
		return interruptibility | BIT(3);
	return interruptibility;
}

uint64_t event_pending_dbg_bs(uint64_t pending_dbg, uint64_t rflags, uint64_t debugctl)
{
	if ((rflags & BIT(8)) && !(debugctl & BIT(1)))
		return pending_dbg | BIT(14);
	return pending_dbg;
}
