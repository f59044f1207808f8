/* ipi_post to the sender itself with ops.self set: the vector goes to the
 * callback (the hypervisor sets it in the virtual IRR), not into the
 * descriptor, and no notification is sent; to anyone else it is posted as
 * before (PIR bit, ON, one notification). Descriptor layout from the SDM
 * (Vol. 3C, "Posted-Interrupt Descriptor": PIR bits 255:0, ON bit 256). */
#include "test.h"
#include "../../ipi/ipi.h"
#include "../../apic/pi.h"

static int selfs, notifies;
static uint8_t self_vec;
static void on_self(void *c, uint8_t v) { (void)c; selfs++; self_vec = v; }
static void on_notify(void *c, uint32_t ndst, uint8_t nv) { (void)c; (void)ndst; (void)nv; notifies++; }

static int pir_bit(const void *desc, unsigned v) { return (((const uint8_t *)desc)[v / 8] >> (v % 8)) & 1; }
static int on_bit(const void *desc) { return ((const uint8_t *)desc)[32] & 1; }

TEST(ipi_post_to_self_goes_to_the_self_op)
{
	static struct pi_desc desc[2] __attribute__((aligned(64)));
	static uint64_t table[512] __attribute__((aligned(4096)));
	static uint16_t vmap[2] = { 0, 1 };
	static uint32_t ids[2] = { 0, 1 };
	static struct ipi_target_stats st[2];
	memset(desc, 0, sizeof desc);
	memset(table, 0, sizeof table);
	memset(st, 0, sizeof st);
	for (int k = 0; k < 2; k++) {
		pi_desc_init(&desc[k], 0xf2, ids[k]);
		pid_table_set(table, ids[k], (paddr_t)(uintptr_t)&desc[k]);
	}
	struct ipi_domain d = { .pid_table = table, .last_index = 1, .vcpu_of_apic = vmap, .nvcpus = 2, .apic_id = ids,
				.tstats = st, .ops = { .notify = on_notify, .self = on_self } };
	selfs = notifies = 0;
	CHECK(ipi_post(&d, 1, 1, 0x40));                  /* vCPU 1 to itself */
	CHECK_EQ(selfs, 1);
	CHECK_EQ(self_vec, 0x40);
	CHECK_EQ(notifies, 0);
	CHECK(!pir_bit(&desc[1], 0x40) && !on_bit(&desc[1]));
	CHECK_EQ(st[1].posts, 1);
	CHECK(ipi_post(&d, 1, 0, 0x41));                  /* to vCPU 0: posted, notified */
	CHECK_EQ(selfs, 1);
	CHECK_EQ(notifies, 1);
	CHECK(pir_bit(&desc[0], 0x41) && on_bit(&desc[0]));
	d.ops.self = NULL;                                 /* without the op: posted to itself too */
	CHECK(ipi_post(&d, 1, 1, 0x42));
	CHECK(pir_bit(&desc[1], 0x42) && on_bit(&desc[1]));
	CHECK_EQ(notifies, 2);
}
