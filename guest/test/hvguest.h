/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest test modules share: the hypervisor's hypercall (VMCALL with
 * KVM's register ABI: RAX the number, RBX and RCX the arguments, RAX the
 * result) and the test whether there is a hypervisor that answers it.
 * tools/build-ipigen.sh copies this file next to each module's source.
 */
#ifndef HV_GUEST_TEST_H
#define HV_GUEST_TEST_H
#include <linux/string.h>
#include <asm/processor.h>
#include <asm/cpufeature.h>

static inline long hv_call(unsigned long nr, unsigned long b, unsigned long c)
{
	unsigned long ax = nr;

	asm volatile("vmcall" : "+a"(ax), "+b"(b), "+c"(c) : : "memory");
	return (long)ax;
}

/* CPUID leaf 1 ECX bit 31 and KVM's signature at 0x40000000: a hypervisor
 * that answers VMCALL. Without one a VMCALL raises #UD. */
static inline bool hv_present(void)
{
	unsigned int a, b, c, d;
	char sig[13];

	if (!boot_cpu_has(X86_FEATURE_HYPERVISOR))
		return false;
	cpuid(0x40000000, &a, &b, &c, &d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = 0;
	return !strcmp(sig, "KVMKVMKVM");
}
#endif
