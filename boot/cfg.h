/* \hv\hv.cfg, the UEFI stick's configuration: one key=value per line,
 * '#' starts a comment, blank lines and trailing CR/spaces ignored:
 *   options=<hypervisor options>  cmdline=<guest kernel command line>
 *   kernel=<path>  initrd=<path>  (paths under HV_CFG_PATH_MAX characters)
 * options= and cmdline= may repeat (appended with a space). */
#ifndef BOOT_CFG_H
#define BOOT_CFG_H
#include "../lib/types.h"
#include "../lib/boot_info.h"

#define HV_CFG_PATH_MAX 128

struct hv_cfg {
	char options[BOOT_CMDLINE_MAX];    /* boot_info's cmdline */
	char cmdline[BOOT_CMDLINE_MAX];    /* boot_info's guest_cmdline */
	char kernel[HV_CFG_PATH_MAX];
	char initrd[HV_CFG_PATH_MAX];
};

/* Appends up to n bytes of src (to a NUL) to the string dst of size bytes,
 * a space between when dst is not empty; truncates at the size. */
void cfg_append(char *dst, size_t size, const char *src, size_t n);
/* Parses len bytes of text (a NUL ends it early). Returns 0, or -1 with a
 * message naming the first bad line in err (what came before it is kept). */
int cfg_parse(const char *text, size_t len, struct hv_cfg *cfg, char *err, size_t errlen);
#endif
