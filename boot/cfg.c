/* Parsing \hv\hv.cfg (see cfg.h). Pure: the UEFI entry reads the file. */
#include "cfg.h"
#include "../lib/string.h"
#include "../lib/printk.h"

void cfg_append(char *dst, size_t size, const char *src, size_t n)
{
	size_t len = strlen(dst);
	if (len && len + 1 < size && n)
		dst[len++] = ' ';
	while (n-- && *src && len + 1 < size)
		dst[len++] = *src++;
	dst[len] = 0;
}

/* An empty value is a value: 'options=' (what tools/mkusb.sh writes
 * without HV_CMDLINE) means none, as an absent line does. */
static bool key(const char *line, size_t n, const char *k)
{
	size_t kl = strlen(k);
	return n >= kl && !strncmp(line, k, kl);
}

int cfg_parse(const char *text, size_t len, struct hv_cfg *cfg, char *err, size_t errlen)
{
	unsigned lineno = 0;
	memset(cfg, 0, sizeof *cfg);
	if (errlen)
		err[0] = 0;
	for (size_t at = 0; at < len && text[at];) {
		const char *line = text + at;
		size_t end = at;
		while (end < len && text[end] && text[end] != '\n')
			end++;
		size_t n = end - at;
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
			n--;
		lineno++;
		at = end < len && text[end] == '\n' ? end + 1 : end;
		if (!n || line[0] == '#')
			continue;
		if (key(line, n, "options="))
			cfg_append(cfg->options, sizeof cfg->options, line + 8, n - 8);
		else if (key(line, n, "cmdline="))
			cfg_append(cfg->cmdline, sizeof cfg->cmdline, line + 8, n - 8);
		else if (key(line, n, "kernel=") && n - 7 < sizeof cfg->kernel)
			memcpy(cfg->kernel, line + 7, n - 7), cfg->kernel[n - 7] = 0;
		else if (key(line, n, "initrd=") && n - 7 < sizeof cfg->initrd)
			memcpy(cfg->initrd, line + 7, n - 7), cfg->initrd[n - 7] = 0;
		else {
			snprintf(err, errlen,
				 "efi: hv.cfg line %u '%.*s': not options=, cmdline=, kernel= or initrd= (a path under %u characters)",
				 lineno, (int)(n > 60 ? 60 : n), line, (unsigned)HV_CFG_PATH_MAX);
			return -1;
		}
	}
	return 0;
}
