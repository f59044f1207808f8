/* A guest linear address to its guest-physical address, by the guest's own
 * paging (SDM Vol. 3A, "Paging"): no paging (CR0.PG clear), 4-level paging
 * (IA-32e, CR4.PAE and EFER.LMA), PAE paging, and 32-bit paging, with large
 * pages. Only presence and, for writes, the R/W bits are checked: the exit
 * handlers that use it emulate an access the CPU already allowed (string
 * I/O); they need the address, not the protection check. Page-structure
 * entries are read at their guest-physical address, which the identity EPT
 * makes the physical one. */
#include "gwalk.h"

#define P   BIT(0)
#define RW  BIT(1)
#define PS  BIT(7)
#define ADDR52 0x000ffffffffff000ull

uint64_t gwalk_readable_end = ~0ull;

/* A page-structure entry the guest's CR3 or entries point at: beyond what
 * the hypervisor maps it reads as not present (the walk fails), never as a
 * fault of the hypervisor's own. */
static uint64_t rd64(uint64_t pa) { return gwalk_readable(pa, 8) ? *(const volatile uint64_t *)(uintptr_t)pa : 0; }
static uint32_t rd32(uint64_t pa) { return gwalk_readable(pa, 4) ? *(const volatile uint32_t *)(uintptr_t)pa : 0; }

int gwalk(const struct gwalk_regs *r, uint64_t la, bool write, uint64_t *gpa)
{
	if (!(r->cr0 & BIT(31))) {               /* CR0.PG clear: linear = physical */
		*gpa = la & 0xffffffffull;
		return 0;
	}
	if (!(r->cr4 & BIT(5))) {                /* 32-bit paging */
		uint32_t pde = rd32((r->cr3 & 0xfffff000ull) + ((la >> 22) & 0x3ff) * 4);
		if (!(pde & P) || (write && !(pde & RW)))
			return -1;
		if ((pde & PS) && (r->cr4 & BIT(4))) {   /* 4 MiB page (CR4.PSE) */
			*gpa = ((uint64_t)(pde & 0xffc00000u) | ((uint64_t)(pde >> 13 & 0xff) << 32)) | (la & 0x3fffff);
			return 0;
		}
		uint32_t pte = rd32((pde & 0xfffff000u) + ((la >> 12) & 0x3ff) * 4);
		if (!(pte & P) || (write && !(pte & RW)))
			return -1;
		*gpa = (pte & 0xfffff000u) | (la & 0xfff);
		return 0;
	}
	int levels;
	uint64_t table;
	if (r->efer & BIT(10)) {                 /* IA-32e: 4-level (LA57 not handled) */
		if (r->cr4 & BIT(12))
			return -1;
		levels = 4;
		table = r->cr3 & ADDR52;
	} else {                                 /* PAE: the PDPTE from CR3's 32-byte table */
		uint64_t pdpte = rd64((r->cr3 & 0xffffffe0ull) + ((la >> 30) & 3) * 8);
		if (!(pdpte & P))
			return -1;
		levels = 2;
		table = pdpte & ADDR52;
	}
	for (int l = levels; l >= 1; l--) {
		unsigned shift = 12 + 9 * (l - 1);
		uint64_t e = rd64(table + ((la >> shift) & 511) * 8);
		if (!(e & P) || (write && !(e & RW)))
			return -1;
		if (l == 1 || ((l == 2 || l == 3) && (e & PS))) {
			uint64_t size = 1ull << shift;
			*gpa = (e & ADDR52 & ~(size - 1)) | (la & (size - 1));
			return 0;
		}
		table = e & ADDR52;
	}
	return -1;
}
