/* The host's own interrupt vectors, in one place (each its own: a vector
 * that is also the posted-interrupt notification is taken as a
 * notification, never as an exit). */
#ifndef VMX_VECTORS_H
#define VMX_VECTORS_H
#define HOST_TIMER_VECTOR  0xf0   /* the host's TSC-deadline timer, serving the guest's */
#define KICK_VECTOR        0xf1   /* makes a vCPU exit (a pending virtual NMI) */
#define POSTED_INTR_VECTOR 0xf2   /* the posted-interrupt notification */
#define CONSOLE_VECTOR     0xf4   /* the console UART's receive interrupt (vmx/vconsole.c) */
_Static_assert(POSTED_INTR_VECTOR != HOST_TIMER_VECTOR && POSTED_INTR_VECTOR != KICK_VECTOR &&
	       POSTED_INTR_VECTOR != CONSOLE_VECTOR && CONSOLE_VECTOR != HOST_TIMER_VECTOR && CONSOLE_VECTOR != KICK_VECTOR,
	       "host vectors collide");
#endif
