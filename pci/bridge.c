/* The bridges the scan saw (type 1 headers) and the DMAR's names of the
 * functions below them (a path of (device, function) hops from a bus). */
#include "bridge.h"

uint32_t vmsi_scope_path(const struct vmsi *s, uint16_t bdf, uint8_t *start_bus, uint8_t (*path)[2], uint32_t max)
{
	uint8_t up[256][2];
	uint32_t n = 0;
	for (uint32_t cur = bdf;;) {
		if (n == max || n == 256)
			return 0;                /* deeper than max, or a loop of bridges */
		up[n][0] = (uint8_t)(cur >> 3 & 31);
		up[n][1] = (uint8_t)(cur & 7);
		n++;
		uint16_t br = s->bridge_of[cur >> 8];
		if (!br || !(cur >> 8)) {
			*start_bus = (uint8_t)(cur >> 8);
			break;
		}
		cur = br - 1u;
	}
	for (uint32_t i = 0; i < n; i++) {
		path[i][0] = up[n - 1 - i][0];
		path[i][1] = up[n - 1 - i][1];
	}
	return n;
}

uint32_t vmsi_fn_scope_path(const struct vmsi *s, const struct vmsi_fn *f, uint8_t *start_bus, uint8_t (*path)[2],
			    uint32_t max)
{
	uint16_t bdf = f->pf && f->pf <= s->nfn ? s->fn[f->pf - 1].bdf : f->bdf;
	return vmsi_scope_path(s, bdf, start_bus, path, max);
}

struct vmsi_bridge *vmsi_bridge_named(struct vmsi *s, uint16_t bdf, bool live)
{
	for (uint32_t i = 0; i < s->nbridge; i++)
		if (s->bridge[i].bdf == bdf && (!live || !s->bridge[i].gone))
			return &s->bridge[i];
	return NULL;
}

bool vmsi_bridge_add(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf)
{
	if (vmsi_bridge_named(s, bdf, false))
		return true;                     /* scanned again */
	if (s->nbridge >= VMSI_MAX_BRIDGES)
		return false;
	uint16_t up = s->bridge_of[bdf >> 8];
	s->bridge[s->nbridge++] = (struct vmsi_bridge){
		.bdf = bdf, .parent = (bdf >> 8) && up && up - 1u != bdf ? (uint16_t)(up - 1) : VMSI_NO_PARENT,
		.sec = (uint8_t)hw->cfg_read(hw->ctx, bdf, CFG_SEC_BUS, 1), .sub = (uint8_t)hw->cfg_read(hw->ctx, bdf, CFG_SUB_BUS, 1) };
	return true;
}
