/* The function registry (pci/fn.c). */
#ifndef PCI_FN_H
#define PCI_FN_H
#include "model.h"

/* The first-access bitmap (s->seen): bdf answered and was probed; forgotten,
 * it is probed again at the next access. */
bool vmsi_was_seen(const struct vmsi *s, uint16_t bdf);
void vmsi_mark_seen(struct vmsi *s, uint16_t bdf);
void vmsi_unsee(struct vmsi *s, uint16_t bdf);
/* The trapped function bdf, NULL: none. */
struct vmsi_fn *vmsi_find(struct vmsi *s, uint16_t bdf);
#endif
