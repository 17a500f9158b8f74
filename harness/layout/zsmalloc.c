// SPDX-License-Identifier: GPL-2.0
/*
 * zsmalloc's per-object handle and per-zspage descriptor are slab objects
 * outside its pool (pool_total_size counts only the zspages' pages): they
 * are metadata of every entry zswap stores.
 */
#include VB_SOURCE
#include "layout-probe.h"

void vb_layout_zsmalloc(void);
void vb_layout_zsmalloc(void)
{
	VB_LAYOUT(zs_handle, ZS_HANDLE_SIZE);
	VB_LAYOUT(zspage, sizeof(struct zspage));
}
