/* Host-side VMCS: vmcs_write() records fields so tests can inspect them. */
#ifndef TEST_UNIT_VMCS_RECORD_H
#define TEST_UNIT_VMCS_RECORD_H
#include <stdint.h>
#include <stdbool.h>
void vmcs_record_clear(void);
bool vmcs_record_has(uint32_t field);
uint64_t vmcs_record_get(uint32_t field);    /* 0 when never written */
unsigned vmcs_record_count(void);
#endif
