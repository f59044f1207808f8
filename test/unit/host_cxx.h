// The harness of the C++ host tests of the patched Bochs's units
// (bochs_pmu_test.cc, vtd_device_test.cc; test/run-tests.sh's
// host_cxx_test): a case is a function whose CHECKs count its failures;
// run_cases prints one "PASS|FAIL unit/PREFIX_NAME" line per case and
// "TAG: N passed, N failed", and returns the number failed.
#ifndef HV_TEST_HOST_CXX_H
#define HV_TEST_HOST_CXX_H
#include <stdio.h>

static unsigned case_failures;
#define CHECK(c) do { if (!(c)) { case_failures++; printf("    %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); } } while (0)
#define CHECK_EQ(a, b) do { unsigned long long _a = (unsigned long long) (a), _b = (unsigned long long) (b); \
  if (_a != _b) { case_failures++; printf("    %s:%d: CHECK failed: %s == %s (0x%llx != 0x%llx)\n", __FILE__, __LINE__, #a, #b, _a, _b); } } while (0)

struct host_case { const char *name; void (*fn)(); };

static unsigned run_cases(const char *prefix, const char *tag, const host_case *cases, unsigned n)
{
  unsigned pass = 0, fail = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (unsigned i = 0; i < n; i++) {
    case_failures = 0;
    cases[i].fn();
    printf("%s unit/%s_%s\n", case_failures ? "FAIL" : "PASS", prefix, cases[i].name);
    if (case_failures) fail++; else pass++;
  }
  printf("%s: %u passed, %u failed\n", tag, pass, fail);
  return fail;
}
#endif
