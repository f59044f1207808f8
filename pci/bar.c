/* BARs: each one's size as sized at boot (a VF BAR's too) and Resizable BAR's
 * control registers. Reads and writes the function's registers alone. */
#include "bar.h"

void vmsi_vf_bars_size(const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	/* Sizing writes the BAR: never while VFs decode it (VF Enable and VF
	 * MSE both set; VF MSE alone decodes nothing, as at VF Enable 0 -> 1
	 * with VF MSE left on). */
	uint16_t ctl = (uint16_t)hw->cfg_read(hw->ctx, f->bdf, (uint16_t)(f->sriov + SRIOV_CTRL), 2);
	if ((ctl & (SRIOV_VFE | SRIOV_MSE)) == (SRIOV_VFE | SRIOV_MSE))
		return;
	for (unsigned i = 0; i < 6; i++) {
		uint16_t reg = (uint16_t)(f->sriov + SRIOV_VF_BAR0 + 4 * i);
		f->vf_bar_size[i] = vmsi_vf_bar_size(hw, f->bdf, f->sriov, i);
		if ((hw->cfg_read(hw->ctx, f->bdf, reg, 4) & 7) == 4 && i < 5)
			f->vf_bar_size[++i] = 0;  /* a 64-bit VF BAR: the next register its upper half, no BAR */
	}
}

/* A BAR's size (PCI 3.0, "Base Address Registers": all ones written, the
 * read-back's writable bits), its decoding off meanwhile (bit 'off' of the
 * 16-bit register 'ctl'), at boot, before the guest runs. */
static uint64_t size_at(const struct vmsi_hw *hw, uint16_t bdf, uint16_t bar, bool last, uint16_t ctl, uint32_t off)
{
	uint32_t cmd = hw->cfg_read(hw->ctx, bdf, ctl, 2);
	uint32_t lo = hw->cfg_read(hw->ctx, bdf, bar, 4);
	if (lo & 1)
		return 0;
	bool wide = (lo & 6) == 4 && !last;
	uint32_t hi = wide ? hw->cfg_read(hw->ctx, bdf, bar + 4, 4) : 0;
	hw->cfg_write(hw->ctx, bdf, ctl, 2, cmd & ~off);
	hw->cfg_write(hw->ctx, bdf, bar, 4, 0xffffffffu);
	uint64_t mask = hw->cfg_read(hw->ctx, bdf, bar, 4) & ~0xfull;
	if (wide) {
		hw->cfg_write(hw->ctx, bdf, bar + 4, 4, 0xffffffffu);
		mask |= (uint64_t)hw->cfg_read(hw->ctx, bdf, bar + 4, 4) << 32;
		hw->cfg_write(hw->ctx, bdf, bar + 4, 4, hi);
	} else if (mask) {
		mask |= 0xffffffff00000000ull;     /* a 32-bit BAR; none implemented (mask 0): no size */
	}
	hw->cfg_write(hw->ctx, bdf, bar, 4, lo);
	hw->cfg_write(hw->ctx, bdf, ctl, 2, cmd);
	return (mask & ~0xfull) ? ~(mask & ~0xfull) + 1 : 0;
}

uint64_t vmsi_bar_size(const struct vmsi_hw *hw, uint16_t bdf, unsigned bir)
{
	return bir > 5 ? 0 : size_at(hw, bdf, (uint16_t)(CFG_BAR0 + 4 * bir), bir == 5, CFG_COMMAND, CMD_MEM);
}

/* One VF's share of the PF's VF BAR bir (SR-IOV, "VF BAR0-5": sized as a
 * BAR is, VF MSE off meanwhile; the size read is each VF's). */
uint64_t vmsi_vf_bar_size(const struct vmsi_hw *hw, uint16_t pf, uint16_t sriov, unsigned bir)
{
	return bir > 5 ? 0 : size_at(hw, pf, (uint16_t)(sriov + SRIOV_VF_BAR0 + 4 * bir), bir == 5,
				     (uint16_t)(sriov + SRIOV_CTRL), SRIOV_MSE);
}

/* PCI Express Base Specification, "Resizable BAR Extended Capability":
 * per resizable BAR a capability register (+4 + 8i: bit n + 4 set, size
 * 2^(n + 20) supported, n 0-27) and a control register (+8 + 8i: 2:0 BAR
 * index, 7:5 the number of resizable BARs (the first one's), 13:8 BAR
 * size n, 31:16 more sizes supported, n 28-43). */
#define REBAR_CAP(i)  (4u + 8u * (i))
#define REBAR_CTL(i)  (8u + 8u * (i))

/* The control register for f's table's BAR, its index i; false: none. */
static bool rebar_ctl(const struct vmsi_hw *hw, const struct vmsi_fn *f, unsigned *i, uint32_t *ctl)
{
	if (!f->rebar || !hw->ext_cfg)
		return false;
	unsigned n = (hw->cfg_read(hw->ctx, f->bdf, (uint16_t)(f->rebar + REBAR_CTL(0)), 4) >> 5) & 7;
	for (unsigned k = 0; k < n && k < 6; k++) {
		uint32_t c = hw->cfg_read(hw->ctx, f->bdf, (uint16_t)(f->rebar + REBAR_CTL(k)), 4);
		if ((c & 7) == (f->msix_table & 7)) {
			*i = k, *ctl = c;
			return true;
		}
	}
	return false;
}

bool vmsi_touches_rebar(const struct vmsi_hw *hw, const struct vmsi_fn *f, uint16_t off, unsigned size)
{
	unsigned i;
	uint32_t c;
	if (!f->rebar || off < f->rebar || !rebar_ctl(hw, f, &i, &c))
		return false;
	uint16_t r = (uint16_t)(f->rebar + REBAR_CTL(i));
	return off + size > r && off < r + 4;
}

uint64_t vmsi_rebar_size(const struct vmsi_hw *hw, const struct vmsi_fn *f)
{
	unsigned i;
	uint32_t c;
	if (!rebar_ctl(hw, f, &i, &c))
		return f->bar_size;
	unsigned n = (c >> 8) & 0x3f;
	uint32_t cap = hw->cfg_read(hw->ctx, f->bdf, (uint16_t)(f->rebar + REBAR_CAP(i)), 4);
	bool listed = n <= 27 ? (cap >> (n + 4)) & 1 : n <= 43 ? (c >> (16 + n - 28)) & 1 : false;
	/* A size the function does not list: what it decodes is not known,
	 * so no table is placed in it until a listed size is written. */
	return listed ? 1ull << (n + 20) : VMSI_BAR_UNDEFINED;
}
