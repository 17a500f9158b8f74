// SPDX-License-Identifier: GPL-2.0
/* The virtual swap space's structures are private to mm/vswap.c. */
#include VB_SOURCE
#include "layout-probe.h"

void vb_layout_vswap(void);
void vb_layout_vswap(void)
{
	VB_LAYOUT(swp_desc, sizeof(struct swp_desc));
#ifdef VB_HAVE_DESC_SWAP_CACHE
	/* The swap cache's word of a descriptor: its folio, its shadow or NULL. */
	VB_LAYOUT(swp_desc_cache, sizeof(((struct swp_desc *)NULL)->cache));
#endif
	/* A cluster's slab object (see kernel-layout.sh). */
#ifdef VB_VSWAP_CLUSTER_LINE_ALIGNED
	VB_LAYOUT(vswap_cluster, ALIGN(sizeof(struct vswap_cluster), L1_CACHE_BYTES));
#else
	VB_LAYOUT(vswap_cluster, sizeof(struct vswap_cluster));
#endif
	VB_LAYOUT(vswap_cluster_nr, VSWAP_CLUSTER_NR);
	/* The descriptor array of a cluster, as desc_bytes counts it. */
	VB_LAYOUT(vswap_desc_array_bytes, PAGE_ALIGN(VSWAP_DESC_BYTES));
	/*
	 * A device's reverse map: a table entry per range of
	 * vswap_rmap_chunk_nr slots, and a chunk for each range in use.
	 */
	VB_LAYOUT(vswap_rmap_range, sizeof(struct vswap_rmap_range));
	VB_LAYOUT(vswap_rmap_chunk, sizeof(struct vswap_rmap_chunk));
	VB_LAYOUT(vswap_rmap_chunk_nr, VSWAP_RMAP_CHUNK_NR);
	/*
	 * The virtual space, whose cluster table (and swap cache address
	 * spaces, where the descriptor does not hold the swap cache) are set
	 * up at boot.
	 */
#ifdef VSWAP_NR_SLOTS
	VB_LAYOUT(vswap_nr_slots, VSWAP_NR_SLOTS);	/* fixed */
#endif
#ifdef VSWAP_MIN_SLOTS
	VB_LAYOUT(vswap_min_slots, VSWAP_MIN_SLOTS);	/* sized at boot, at least this */
#endif
}
