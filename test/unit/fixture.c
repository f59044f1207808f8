/* The fixture parser and the synthetic profiles (see fixture.h).
 * Sections start with "[name]"; then "CPUID.1 eax=.. ebx=.. ecx=.. edx=.."
 * and "0xMSR value  # comment" lines. A value of "#GP" or "(skipped: ...)"
 * means the MSR is absent. */
#include "fixture.h"
#include "test.h"
#include "../../vmx/vmx_defs.h"

const char *fixture_text(void)
{
	static char *text;
	if (!text) {
		const char *dir = getenv("HV_FIXTURES");
		char path[512];
		snprintf(path, sizeof path, "%s/vmx-caps-bochs.txt", dir ? dir : "test/fixtures");
		text = test_read_file(path, NULL);
		if (!text)
			printf("    cannot read %s\n", path);
	}
	return text;
}

static void set_msr(struct vmx_raw_caps *r, unsigned long msr, uint64_t v)
{
	switch (msr) {
	case MSR_IA32_FEATURE_CONTROL: r->feature_control = v; break;
	case MSR_IA32_VMX_BASIC: r->basic = v; break;
	case MSR_IA32_VMX_PINBASED_CTLS: r->pin = v; break;
	case MSR_IA32_VMX_PROCBASED_CTLS: r->proc = v; break;
	case MSR_IA32_VMX_EXIT_CTLS: r->exit = v; break;
	case MSR_IA32_VMX_ENTRY_CTLS: r->entry = v; break;
	case MSR_IA32_VMX_MISC: r->misc = v; break;
	case MSR_IA32_VMX_CR0_FIXED0: r->cr0_fixed0 = v; break;
	case MSR_IA32_VMX_CR0_FIXED1: r->cr0_fixed1 = v; break;
	case MSR_IA32_VMX_CR4_FIXED0: r->cr4_fixed0 = v; break;
	case MSR_IA32_VMX_CR4_FIXED1: r->cr4_fixed1 = v; break;
	case MSR_IA32_VMX_VMCS_ENUM: r->vmcs_enum = v; break;
	case MSR_IA32_VMX_PROCBASED_CTLS2: r->proc2 = v; r->has_proc2 = true; break;
	case MSR_IA32_VMX_EPT_VPID_CAP: r->ept_vpid = v; r->has_ept_vpid = true; break;
	case MSR_IA32_VMX_TRUE_PINBASED_CTLS: r->true_pin = v; break;
	case MSR_IA32_VMX_TRUE_PROCBASED_CTLS: r->true_proc = v; break;
	case MSR_IA32_VMX_TRUE_EXIT_CTLS: r->true_exit = v; break;
	case MSR_IA32_VMX_TRUE_ENTRY_CTLS: r->true_entry = v; break;
	case MSR_IA32_VMX_VMFUNC: r->vmfunc = v; r->has_vmfunc = true; break;
	case MSR_IA32_VMX_PROCBASED_CTLS3: r->proc3 = v; r->has_proc3 = true; break;
	default: break;	/* EXIT_CTLS2, APIC_BASE, TSC: not part of vmx_raw_caps */
	}
}

bool fixture_load_profile(const char *name, struct vmx_raw_caps *r)
{
	const char *text = fixture_text();
	char hdr[128];
	unsigned ntrue = 0;
	bool have_basic = false;

	memset(r, 0, sizeof *r);
	if (!text)
		return false;
	snprintf(hdr, sizeof hdr, "[%s]\n", name);
	const char *p = strstr(text, hdr);
	if (!p)
		return false;
	p += strlen(hdr);
	while (*p && *p != '[') {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[256];
		snprintf(line, sizeof line, "%.*s", (int)len, p);
		p += len + (eol ? 1 : 0);

		if (!strncmp(line, "CPUID.1 ", 8)) {
			const char *e = strstr(line, "ecx=");
			if (!e)
				return false;
			r->cpuid1_ecx = (uint32_t)strtoul(e + 4, NULL, 16);
		} else if (!strncmp(line, "0x", 2)) {
			char *end;
			unsigned long msr = strtoul(line, &end, 16);
			while (*end == ' ')
				end++;
			if (*end == '#' || *end == '(')
				continue;	/* #GP or skipped: absent */
			char *vend;
			uint64_t v = strtoull(end, &vend, 16);
			if (vend == end)
				return false;
			set_msr(r, msr, v);
			if (msr == MSR_IA32_VMX_BASIC)
				have_basic = true;
			if (msr >= MSR_IA32_VMX_TRUE_PINBASED_CTLS && msr <= MSR_IA32_VMX_TRUE_ENTRY_CTLS)
				ntrue++;
		}
	}
	r->has_true = ntrue == 4;
	return have_basic;
}

int fixture_list_sections(const char **names, char (*buf)[64], int max)
{
	const char *text = fixture_text();
	const char *p = text;
	int n = 0;
	while (p && (p = strchr(p, '[')) && n < max) {
		if (p != text && p[-1] != '\n') { p++; continue; }
		const char *e = strchr(p, ']');
		if (!e)
			break;
		snprintf(buf[n], 64, "%.*s", (int)(e - p - 1), p + 1);
		names[n] = buf[n];
		n++;
		p = e;
	}
	return n;
}

void fixture_clear_allowed1(uint64_t *plain, uint64_t *true_msr, uint32_t bit)
{
	*plain &= ~((uint64_t)bit << 32);
	if (true_msr)
		*true_msr &= ~((uint64_t)bit << 32);
}

void fixture_set_allowed0(uint64_t *plain, uint64_t *true_msr, uint32_t bit)
{
	*plain |= bit;
	if (true_msr)
		*true_msr |= bit;
}

bool fixture_spr_ipiv(struct vmx_raw_caps *r)
{
	if (!fixture_load_profile("bochs-3.0 sapphire_rapids", r))
		return false;
	r->proc3 |= VMX_PROC3_IPI_VIRT | VMX_PROC3_APIC_TIMER_VIRT;
	return true;
}

bool fixture_no_tertiary(struct vmx_raw_caps *r)
{
	if (!fixture_spr_ipiv(r))
		return false;
	fixture_clear_allowed1(&r->proc, &r->true_proc, VMX_PROC_ACTIVATE_TERTIARY);
	return true;
}

bool fixture_no_posted(struct vmx_raw_caps *r)
{
	if (!fixture_spr_ipiv(r))
		return false;
	fixture_clear_allowed1(&r->pin, &r->true_pin, VMX_PIN_POSTED_INTR);
	return true;
}

bool fixture_no_vid(struct vmx_raw_caps *r)
{
	if (!fixture_load_profile("bochs-3.0 corei7_skylake_x", r))
		return false;
	fixture_clear_allowed1(&r->proc2, NULL, VMX_PROC2_VIRT_INTR_DELIVERY);
	return true;
}

void fixture_write_corpus(const char *env, const char *file, const void *data, size_t len)
{
	const char *dir = getenv(env);
	if (!dir)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(data, 1, len, f) == len);
	if (f)
		fclose(f);
}
