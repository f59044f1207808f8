/* What the patched Bochs's VT-d unit (tools/bochs-patch/vtd.cc) needs of
 * Bochs, for its host test (vtd_device_test.cc, which includes vtd.cc
 * itself): a flat guest memory, the interrupt bus as a log of what was
 * delivered, the memory-handler registration as a table, and Bochs's
 * types and log macros. Only what vtd.cc uses. C++. */
#ifndef TEST_UNIT_VTD_HOST_H
#define TEST_UNIT_VTD_HOST_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t Bit8u;
typedef uint16_t Bit16u;
typedef uint32_t Bit32u;
typedef unsigned long Bit64u;          /* as Bochs on x86-64 Linux (config.h) */
typedef unsigned long bx_phy_address;
typedef Bit32u apic_dest_t;
#define BX_CONST64(x) (x##ULL)
#define FMT_ADDRX64 "%016lx"
#define BX_SUPPORT_PCI 1
#define BX_SUPPORT_APIC 1

/* The log: kept for the test to read (vtd_host_log), printed with UNIT_VERBOSE. */
extern char vtd_host_log[1 << 16];
void vtd_host_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vtd_host_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
class logfunctions {
public:
  void put(const char *) {}
};
#define BX_INFO(x) vtd_host_info x
#define BX_ERROR(x) vtd_host_error x
#define BX_PANIC(x) vtd_host_error x

/* Guest memory: VTD_HOST_MEM bytes from address 0. */
#define VTD_HOST_MEM (64u << 20)
extern Bit8u *vtd_host_mem;
struct vtd_host_memory {
  Bit64u get_memory_len() { return VTD_HOST_MEM; }
};
extern vtd_host_memory vtd_host_memobj;
#define BX_MEM(n) (&vtd_host_memobj)

/* The memory handlers vtd.cc registers (its units' pages), reached by the
 * test's MMIO accesses and by vtd.cc's own reads of its firmware pages. */
typedef bool (*memory_handler_t)(bx_phy_address addr, unsigned len, void *data, void *param);
bool vtd_host_register(void *param, memory_handler_t rd, memory_handler_t wr, bx_phy_address b, bx_phy_address e);
#define DEV_register_memory_handlers(param, rh, wh, b, e) vtd_host_register((param), (rh), (wh), (b), (e))
void vtd_host_read(bx_phy_address a, unsigned len, Bit8u *p);
void vtd_host_write(bx_phy_address a, unsigned len, Bit8u *p);
#define DEV_MEM_READ_PHYSICAL(a, l, p) vtd_host_read((a), (l), (Bit8u *) (p))
#define DEV_MEM_READ_PHYSICAL_DMA(a, l, p) vtd_host_read((a), (l), (Bit8u *) (p))
#define DEV_MEM_WRITE_PHYSICAL(a, l, p) vtd_host_write((a), (l), (Bit8u *) (p))
#define DEV_MEM_WRITE_PHYSICAL_DMA(a, l, p) vtd_host_write((a), (l), (Bit8u *) (p))

/* The interrupt bus: every delivery, in order. */
struct vtd_host_irq {
  Bit8u vector, mode;
  Bit32u dest;
  bool logical, trig;
};
extern vtd_host_irq vtd_host_irqs[256];
extern unsigned vtd_host_nirqs;
bool apic_bus_deliver_interrupt(Bit8u vector, apic_dest_t dest, Bit8u delivery_mode, bool logical_dest, bool level,
                                bool trig_mode);
#define DEV_pic_iac() ((Bit8u) 0x20)
// Bochs's emulated time (bx_pc_system.time_ticks()): the test sets it.
extern Bit64u vtd_host_clock;
static inline Bit64u vtd_host_now() { return vtd_host_clock; }
#endif
