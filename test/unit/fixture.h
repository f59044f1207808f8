/* Shared by the host tests: the VMX capability MSRs measured under Bochs
 * (test/fixtures/vmx-caps-bochs.txt, directory from $HV_FIXTURES) and the
 * synthetic profiles derived from them. */
#ifndef TEST_UNIT_FIXTURE_H
#define TEST_UNIT_FIXTURE_H
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "../../vmx/caps.h"

/* The whole fixture file, read once; NULL (after saying why) if unreadable. */
const char *fixture_text(void);
/* Fills *r from section "[name]"; false if the section is missing or broken. */
bool fixture_load_profile(const char *name, struct vmx_raw_caps *r);
/* Section names in file order into names[] (backed by buf); returns the count. */
int fixture_list_sections(const char **names, char (*buf)[64], int max);
/* Clears a bit in the allowed-1 half of a control MSR and of its TRUE twin. */
void fixture_clear_allowed1(uint64_t *plain, uint64_t *true_msr, uint32_t bit);
/* Sets a bit in the allowed-0 half (the control is forced to 1). */
void fixture_set_allowed0(uint64_t *plain, uint64_t *true_msr, uint32_t bit);

/* When the environment variable 'env' names a folder, writes data there as
 * 'file' (the server-shaped tables seed the fuzzers' corpora that way). */
void fixture_write_corpus(const char *env, const char *file, const void *data, size_t len);

/* SYNTHETIC profiles (no emulator has these): each returns false if the
 * Bochs section it starts from is missing.
 *  spr_ipiv:      Bochs 3.0 sapphire_rapids + tertiary bits 4 (IPIv) and 8
 *                 (APIC-timer virtualization) in IA32_VMX_PROCBASED_CTLS3
 *  no_tertiary:   spr_ipiv with "activate tertiary controls" not allowed
 *  no_posted:     spr_ipiv with "process posted interrupts" not allowed
 *  no_vid:        Bochs 3.0 corei7_skylake_x without "virtual-interrupt delivery" */
bool fixture_spr_ipiv(struct vmx_raw_caps *r);
bool fixture_no_tertiary(struct vmx_raw_caps *r);
bool fixture_no_posted(struct vmx_raw_caps *r);
bool fixture_no_vid(struct vmx_raw_caps *r);
#endif
