/* Names of the encodings in sdm_vmcs.h, for the models' messages. */
#include "sdm_vmcs.h"
#include <stddef.h>

const char *sdm_vmcs_name(uint32_t encoding)
{
	static const struct { uint32_t enc; const char *name; } names[] = {
#define SDM_FIELD_NAME(name, enc) { enc, #name },
		SDM_VMCS_FIELDS(SDM_FIELD_NAME)
#undef SDM_FIELD_NAME
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].enc == encoding)
			return names[i].name;
	return "unnamed field";
}
