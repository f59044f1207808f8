/* What a guest writes, decoded: ICR writes (fast path and full path) and
 * KVM_HC_SEND_IPI over a domain of four vCPUs with APIC IDs {0, 2, 5, 300},
 * the hypercall policy, the MSR policy, the I/O policy, XSETBV's rules and
 * the event queue. The input is a sequence of 17-byte operations. Every
 * delivery must reach a vCPU of the domain, and nothing else may happen. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../ipi/ipi.h"
#include "../../apic/pi.h"
#include "../../guest/hypercall.h"
#include "../../guest/msr.h"
#include "../../guest/io.h"
#include "../../guest/cpuid.h"
#include "../../vmx/event.h"

static const uint32_t ids[4] = { 0, 2, 5, 300 };
static struct ipi_domain d;
static struct pi_desc *desc;
static uint64_t *table;
static uint16_t vmap[301];
static uint32_t apic_id[4];
static struct ipi_target_stats tst[4];

static void chk_vcpu(uint32_t i) { if (i >= 4) __builtin_trap(); }
static void notify(void *c, uint32_t ndst, uint8_t nv)
{
	(void)c;
	if (nv != 0xf2 || (ndst != 0 && ndst != 2 && ndst != 5 && ndst != 300))
		__builtin_trap();                /* a notification only to a vCPU's NDST */
}
static void nmi(void *c, uint32_t i) { (void)c; chk_vcpu(i); }
static void init(void *c, uint32_t i) { (void)c; chk_vcpu(i); }
static void sipi(void *c, uint32_t i, uint8_t v) { (void)c; (void)v; chk_vcpu(i); }
static uint64_t rep(uint32_t cpu) { (void)cpu; return 0; }
static int64_t send(void *ctx, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr)
{
	struct ipi_src_stats st = { 0 };
	return ipi_pv_send(&d, (uint32_t)(uintptr_t)ctx, lo, hi, min, icr, &st);
}
static int64_t posts(uint32_t id, uint32_t v) { (void)id; (void)v; return 0; }
static int64_t exits(uint32_t id) { (void)id; return 0; }

static void setup(void)
{
	desc = aligned_alloc(64, 4 * sizeof *desc);
	table = aligned_alloc(4096, pid_table_bytes(300));
	memset(table, 0, pid_table_bytes(300));
	for (int i = 0; i <= 300; i++)
		vmap[i] = IPI_NO_VCPU;
	for (int k = 0; k < 4; k++) {
		pi_desc_init(&desc[k], 0xf2, ids[k]);
		pid_table_set(table, ids[k], (paddr_t)(uintptr_t)&desc[k]);
		vmap[ids[k]] = (uint16_t)k;
		apic_id[k] = ids[k];
	}
	d = (struct ipi_domain){ .pid_table = table, .last_index = 300, .vcpu_of_apic = vmap, .nvcpus = 4,
				 .apic_id = apic_id, .tstats = tst,
				 .ops = { .notify = notify, .nmi = nmi, .init = init, .sipi = sipi } };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const struct acpi_info acpi = { .pm1a_cnt = 0xb004, .s5_valid = true, .slp_typa = 0 };
	const struct hc_ops ops = { rep, send, posts, exits };
	if (!desc)
		setup();
	for (size_t i = 0; i + 17 <= n; i += 17) {
		uint64_t a, b;
		memcpy(&a, data + i + 1, 8);
		memcpy(&b, data + i + 9, 8);
		uint32_t self = data[i] >> 6 & 3;
		struct ipi_src_stats st = { 0 };
		switch (data[i] % 8) {
		case 0:
			if (ipi_fast(&d, self, a, &st) == IPI_SLOW)
				(void)ipi_icr_write(&d, self, a, &st);
			break;
		case 1:
			(void)ipi_icr_write(&d, self, a, &st);
			break;
		case 2: {
			struct hc_call c = { b & 0xf ? b : 10, a, a >> 7, a >> 13, b, (b >> 8) & 1, b >> 16 };
			(void)hypercall(&ops, (void *)(uintptr_t)self, self, &c);
			break;
		}
		case 3: {
			uint64_t v;
			if ((uint32_t)a == 0x1b)         /* IA32_APIC_BASE reads the real MSR: not on the host */
				break;
			(void)guest_rdmsr((uint32_t)a, &v);
			(void)guest_wrmsr((uint32_t)a, b);
			break;
		}
		case 4: {
			const char *why;
			unsigned size = 1u << (b % 3);
			(void)io_write_is_sleep(&acpi, (uint16_t)a, (uint32_t)b, size);
			(void)io_write_ends_machine(&acpi, (uint16_t)a, (uint32_t)b, size, &why);
			(void)io_write_resets(&acpi, (uint16_t)a, (uint32_t)b, size, &why);
			break;
		}
		case 5:
			(void)xsetbv_valid((uint32_t)(a & 3), b, 0x2ff);
			break;
		case 6: {
			struct event_queue q = { .now = { (uint32_t)a, (uint32_t)(a >> 32), 0 } };
			enum event_result r = event_queue_exception(&q, (uint8_t)(b % 32), (uint32_t)(b >> 8));
			if (r == EVENT_QUEUED && !(q.now.info & 0x80000000u))
				__builtin_trap();        /* a queued exception is valid */
			(void)event_entry_info(&q.now, b & 1);
			break;
		}
		default: {
			struct ipi_src_stats s2 = { 0 };
			(void)ipi_pv_send(&d, self, a, b, data[i] >> 3, (a & 0x7ff) | ((b & 1) << 11), &s2);
			break;
		}
		}
	}
	return 0;
}
