/* INIT and SIPI that the guest sends to its own vCPUs, emulated.
 *
 * A CPU recognizes a SIPI only in the wait-for-SIPI state; one that comes
 * at any other time is discarded (SDM Vol. 3C, "Other Causes of VM Exits":
 * "If a logical processor is not in the wait-for-SIPI activity state when a
 * SIPI arrives, no VM exit occurs and the SIPI is discarded"). A vCPU spends
 * time in root mode (its INIT exit among others), where a physical SIPI is
 * lost; Linux sends INIT and its SIPIs microseconds apart. So the sender
 * records each signal here as well as sending it, and the target applies
 * what it finds before its next VM entry, in order: the INITs first (their
 * count is a generation), then the last SIPI, if it was sent after the
 * last INIT taken and the vCPU waits for one. A SIPI recorded while the vCPU
 * runs is discarded, as the CPU would. Pure logic; the fields are atomic. */
#ifndef GUEST_STARTUP_H
#define GUEST_STARTUP_H
#include "../lib/types.h"

struct startup {
	uint32_t inits_sent;   /* INITs sent to this vCPU (any sender) */
	uint32_t inits_done;   /* INITs it has taken (its own CPU only) */
	uint32_t sipi;         /* the last SIPI: vector | STARTUP_SIPI_VALID | generation << 16 */
};
#define STARTUP_SIPI_VALID 0x100u

/* Sender side, any CPU. */
void startup_send_init(struct startup *s);
void startup_send_sipi(struct startup *s, uint8_t vector);

/* Target side, before an entry (or in its INIT or SIPI exit): 'waiting'
 * tells whether the vCPU is in wait-for-SIPI now. */
struct startup_step {
	bool init;     /* an INIT not taken yet: reset the vCPU to wait-for-SIPI */
	int sipi;      /* then start it at this vector, or -1 */
	bool stale;    /* a SIPI was found and discarded (sent before the last INIT, or the vCPU runs) */
};
struct startup_step startup_take(struct startup *s, bool waiting);
/* Whether an INIT was sent that the target has not taken (its own CPU). */
bool startup_init_pending(const struct startup *s);
#endif
