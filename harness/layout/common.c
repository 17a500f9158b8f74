// SPDX-License-Identifier: GPL-2.0
/*
 * Sizes of the swap structures every 6.12 kernel has: mm/swapfile.c (which
 * defines SWAPFILE_CLUSTER and includes the headers of the others) plus the
 * markers, built with the flags of the kernel's own mm/swapfile.o
 * (harness/kernel-layout.sh).
 */
#include VB_SOURCE
#include "layout-probe.h"

void vb_layout_common(void);
void vb_layout_common(void)
{
	struct swap_info_struct *si = NULL;

	VB_LAYOUT(page_size, PAGE_SIZE);
	VB_LAYOUT(swap_info_struct, sizeof(struct swap_info_struct));
#ifdef VB_HAVE_SLOT_BITMAPS
	/*
	 * The slot states as bitmaps, a bit a slot each: slot_used, and in the
	 * kernels that have it, slot_cache_only.
	 */
#ifdef VB_HAVE_SLOT_CACHE_ONLY
	VB_LAYOUT(slot_bitmaps, (sizeof(*si->slot_used) +
				 sizeof(*si->slot_cache_only)) / sizeof(long));
#else
	VB_LAYOUT(slot_bitmaps, sizeof(*si->slot_used) / sizeof(long));
#endif
#else
	VB_LAYOUT(swap_map_bytes_per_slot, sizeof(*si->swap_map));
#endif
	VB_LAYOUT(swap_cluster_info, sizeof(struct swap_cluster_info));
	VB_LAYOUT(swapfile_cluster, SWAPFILE_CLUSTER);
	VB_LAYOUT(percpu_cluster, sizeof(struct percpu_cluster));
	VB_LAYOUT(address_space, sizeof(struct address_space));
#ifdef SWAP_ADDRESS_SPACE_PAGES
	/*
	 * Slots per swap cache address space (a tree whose descriptors hold
	 * the swap cache may have no such spaces, nor this constant).
	 */
	VB_LAYOUT(swap_address_space_pages, SWAP_ADDRESS_SPACE_PAGES);
#endif
	VB_LAYOUT(xarray, sizeof(struct xarray));
	VB_LAYOUT(xa_node, sizeof(struct xa_node));
	VB_LAYOUT(xa_chunk_size, XA_CHUNK_SIZE);
	VB_LAYOUT(pointer, sizeof(void *));
#ifndef VB_HAVE_VSWAP
	/* The zero map: a bitmap of one bit per slot, in words of this size. */
	VB_LAYOUT(zeromap_word, sizeof(*si->zeromap));
#endif
}
