/* What ends the HLT state (SDM Vol. 2A, "HLT": "An enabled interrupt
 * (including NMI and SMI), a debug exception, the BINIT#, INIT# or RESET#
 * signal"; Vol. 3C, "Virtual-Interrupt Delivery": a virtual interrupt is
 * delivered, the HLT state included, only with RFLAGS.IF = 1 and no
 * blocking by STI or MOV SS). Decides whether a vCPU whose HLT exited
 * halts or resumes past its HLT; INIT is handled before this is asked. */
#ifndef APIC_WAKE_H
#define APIC_WAKE_H
#include "../lib/types.h"

struct hlt_view {
	bool if_set;           /* guest RFLAGS.IF */
	bool nmi_pending;      /* a virtual NMI to inject */
	bool nmi_blocked;      /* blocking by NMI (interruptibility bit 3) */
	bool vector_pending;   /* a deliverable virtual interrupt, an 8259 vector, or a notification (ON) */
};

static inline bool hlt_ends(const struct hlt_view *h)
{
	return (h->nmi_pending && !h->nmi_blocked) || (h->if_set && h->vector_pending);
}
#endif
