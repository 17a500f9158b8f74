// SPDX-License-Identifier: GPL-2.0
/* struct zswap_entry is private to mm/zswap.c: the probe is that file plus the markers. */
#include VB_SOURCE
#include "layout-probe.h"

void vb_layout_zswap(void);
void vb_layout_zswap(void)
{
	VB_LAYOUT(zswap_entry, sizeof(struct zswap_entry));
}
