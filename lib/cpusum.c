/* See cpusum.h. */
#include "cpusum.h"
#include "options.h"
#include "printk.h"
#include "string.h"

static uint32_t limit = REPORT_CPUS_AUTO_MAX;

/* reportcpus=N details N vCPUs in the end report; at boot never fewer CPUs
 * than auto's, so that a small machine keeps its lines whatever N. */
void cpusum_set_limit(uint32_t report_cpus)
{
	limit = report_cpus == REPORT_CPUS_ALL ? REPORT_CPUS_ALL
		: report_cpus > REPORT_CPUS_AUTO_MAX ? report_cpus : REPORT_CPUS_AUTO_MAX;
}

bool cpusum_detailed(uint32_t total)
{
	return total <= limit;
}

void cpusum_begin(struct cpusum *s, const char *prefix, const char *id_name, uint32_t total)
{
	memset(s, 0, sizeof *s);
	s->prefix = prefix;
	s->id_name = id_name;
	s->detail = cpusum_detailed(total);
}

static struct cpusum_class *class_of(struct cpusum *s, const char *cls, int level)
{
	for (uint32_t i = 0; i < s->nclass; i++)
		if (!strcmp(s->c[i].name, cls))
			return &s->c[i];
	if (s->nclass >= CPUSUM_CLASSES)
		return NULL;
	struct cpusum_class *c = &s->c[s->nclass++];
	snprintf(c->name, sizeof c->name, "%s", cls);
	c->level = level;
	return c;
}

void cpusum_add(struct cpusum *s, int level, uint32_t id, const char *cls, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (s->detail) {
		printk_level(level, "%s%s\n", s->prefix, line);
		return;
	}
	struct cpusum_class *c = class_of(s, cls, level);
	if (!c) {
		s->other++;
		printk_level(level < LOG_INFO ? level : LOG_INFO, "%s%s\n", s->prefix, line);
		return;
	}
	if (level < LOG_INFO && c->count < CPUSUM_EXCEPTION_LINES)
		printk_level(level, "%s%s\n", s->prefix, line);
	if (c->count && id == c->last + 1) {
		if (c->nranges <= CPUSUM_RANGES)   /* the last range is one of those kept */
			c->hi[c->nranges - 1] = id;
	} else {
		if (c->nranges < CPUSUM_RANGES)
			c->lo[c->nranges] = c->hi[c->nranges] = id;
		c->nranges++;
	}
	c->last = id;
	c->count++;
}

void cpusum_end(struct cpusum *s)
{
	if (s->detail)
		return;
	for (uint32_t i = 0; i < s->nclass; i++) {
		const struct cpusum_class *c = &s->c[i];
		char ids[160];
		size_t at = 0;
		ids[0] = 0;
		for (uint32_t r = 0; r < c->nranges && r < CPUSUM_RANGES && at < sizeof ids; r++) {
			if (c->lo[r] == c->hi[r])
				at += (size_t)snprintf(ids + at, sizeof ids - at, "%s%u", r ? "," : "", c->lo[r]);
			else
				at += (size_t)snprintf(ids + at, sizeof ids - at, "%s%u-%u", r ? "," : "", c->lo[r], c->hi[r]);
		}
		if (c->nranges > CPUSUM_RANGES && at < sizeof ids)
			snprintf(ids + at, sizeof ids - at, " and %u more ranges", c->nranges - CPUSUM_RANGES);
		printk_level(c->level, "%s%s: %u CPU%s, %s%s %s\n", s->prefix, c->name, c->count, c->count == 1 ? "" : "s",
			     s->id_name, c->count == 1 ? "" : "s", ids);
	}
	if (s->other)
		pr_info("%s%u CPUs with yet other outcomes, each said above\n", s->prefix, s->other);
}
