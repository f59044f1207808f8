/* The event a VM entry delivers, and how a new exception meets one already
 * queued (SDM Vol. 3A, 6.15 "Exception and Interrupt Reference", Interrupt 8,
 * Table "Conditions for Generating a Double Fault"; Vol. 3C, "Event Injection"
 * and "Information for VM Exits During Event Delivery"). Pure logic: the
 * exit handler (vmx/exit.c) fills the queue and commits it to the VMCS. */
#ifndef VMX_EVENT_H
#define VMX_EVENT_H
#include "../lib/types.h"

/* In the VM-entry interruption-information format: bit 31 valid, bits 10:8
 * type, bits 7:0 vector, bit 11 deliver error code. */
struct vmx_event {
	uint32_t info;
	uint32_t error;
	uint32_t insn_len;               /* software interrupts and exceptions */
};

struct event_queue {
	struct vmx_event now;            /* delivered by the next VM entry */
	struct vmx_event deferred;       /* an interrupt or NMI whose delivery an exception interrupted */
};

enum event_result {
	EVENT_QUEUED,                    /* 'now' holds the exception (or the #DF it became) */
	EVENT_SHUTDOWN,                  /* a fault while delivering #DF: triple fault */
};

/* Whether the vector's exception pushes an error code in protected mode. */
bool event_has_error_code(uint8_t vector);

/* Queues hardware exception 'vector' (error code 'error' where the vector
 * has one) over whatever q->now holds: nothing, or the event whose delivery
 * the VM exit interrupted.
 *  - exception over exception: contributory+contributory and #PF+(#PF or
 *    contributory) become #DF; #DF+(contributory or #PF) is a shutdown; any
 *    other pair is handled serially: the new one is delivered and the first,
 *    a fault of the same instruction, comes again when it re-executes;
 *  - exception over an external interrupt or NMI: the exception goes first,
 *    the interrupt or NMI waits in q->deferred (it was already taken from
 *    its source and must not be lost);
 *  - exception over a software interrupt or exception: replaced (the INT n,
 *    INT3 or INTO executes again). */
enum event_result event_queue_exception(struct event_queue *q, uint8_t vector, uint32_t error);

/* The interruption information to write for an entry: in real mode (CR0.PE
 * clear) no error code is delivered (a VM-entry check). */
uint32_t event_entry_info(const struct vmx_event *e, bool protected_mode);

/* The guest RFLAGS to enter with when the entry delivers e. The processor
 * sets RF in the RFLAGS image it pushes for every fault-class exception
 * except a #DB from an instruction breakpoint (SDM Vol. 3A, "EFLAGS
 * Register", RF; Vol. 3A, "Exception and Interrupt Reference": the class of
 * each vector), so that the IRET of the handler re-executes the faulting
 * instruction without a second instruction-breakpoint #DB; an injection
 * pushes the guest-state RFLAGS as it is (Vol. 3C, "Event Injection"), so
 * the hypervisor sets RF itself for a hardware exception that is a fault.
 * Traps (#BP, #OF, #DB, which the VMM cannot tell from the instruction
 * breakpoint), aborts (#DF, #MC), interrupts and NMIs leave RFLAGS as is. */
uint64_t event_entry_rflags(const struct vmx_event *e, uint64_t rflags);

/* The guest interruptibility state to resume with after an EPT violation
 * (SDM Vol. 3C, "Exit Qualification for EPT Violations", bit 12 "NMI
 * unblocking due to IRET"; "Handling of NMI Unblocking"): an IRET that
 * unblocked NMIs faulted and will execute again, so NMIs are blocked again,
 * unless the exit came during event delivery (the IDT-vectoring information
 * is valid: that bit is then undefined). 'nmi_control': NMI exiting or
 * virtual NMIs on. */
uint32_t event_ept_interruptibility(uint64_t qual, uint32_t idt_info, uint32_t interruptibility, bool nmi_control);

/* The pending debug exceptions to enter with (SDM Vol. 3C, "Checks on Guest
 * Non-Register State": with RFLAGS.TF = 1 and IA32_DEBUGCTL.BTF = 0, bit 14
 * BS must be 1 when the activity state is HLT or STI/MOV SS blocks; an
 * instruction the hypervisor emulated with TF = 1 also ends in a single-step
 * trap, which BS delivers after the entry). */
uint64_t event_pending_dbg_bs(uint64_t pending_dbg, uint64_t rflags, uint64_t debugctl);
#endif
