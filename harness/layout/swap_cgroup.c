// SPDX-License-Identifier: GPL-2.0
/*
 * struct swap_cgroup is private to mm/swap_cgroup.c (kernels without the
 * virtual swap space: vswap keeps the memcg id in the descriptor).
 */
#include VB_SOURCE
#include "layout-probe.h"

void vb_layout_swap_cgroup(void);
void vb_layout_swap_cgroup(void)
{
	VB_LAYOUT(swap_cgroup, sizeof(struct swap_cgroup));
	VB_LAYOUT(swap_cgroup_per_page, SC_PER_PAGE);
}
