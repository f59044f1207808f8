/* A recording stand-in for VMWRITE/VMREAD in host tests. */
#include "vmcs_record.h"
#include "../../vmx/vmcs_ops.h"
#include <string.h>

#define SLOTS 512
static struct { uint32_t field; uint64_t value; bool used; } rec[SLOTS];

void vmcs_record_clear(void) { memset(rec, 0, sizeof rec); }

static int find(uint32_t field)
{
	for (int i = 0; i < SLOTS; i++)
		if (rec[i].used && rec[i].field == field)
			return i;
	return -1;
}

void vmcs_write(uint32_t field, uint64_t value)
{
	int i = find(field);
	if (i < 0)
		for (i = 0; i < SLOTS && rec[i].used; i++)
			;
	if (i == SLOTS)
		return;
	rec[i].field = field;
	rec[i].value = value;
	rec[i].used = true;
}

uint64_t vmcs_read(uint32_t field) { return vmcs_record_get(field); }
bool vmcs_record_has(uint32_t field) { return find(field) >= 0; }
uint64_t vmcs_record_get(uint32_t field) { int i = find(field); return i < 0 ? 0 : rec[i].value; }

unsigned vmcs_record_count(void)
{
	unsigned n = 0;
	for (int i = 0; i < SLOTS; i++)
		n += rec[i].used;
	return n;
}
