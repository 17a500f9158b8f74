/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deterministic page contents for swap tests.  Every page's bytes are a
 * function of (seed, index) alone, so any process can check any page without
 * keeping a copy, and the four classes drive the four swap-out paths:
 * incompressible data (zswap rejects it, it goes to disk), compressible text,
 * zero-filled pages and same-filled non-zero pages.
 */
#ifndef VB_PAGEFILL_H
#define VB_PAGEFILL_H

#include <stddef.h>
#include <stdint.h>

#define VB_PAGE_SIZE 4096

enum vb_page_class {
	VB_CLASS_RANDOM,
	VB_CLASS_TEXT,
	VB_CLASS_ZERO,
	VB_CLASS_SAME,
	VB_NR_CLASSES
};

extern const char *const vb_class_names[VB_NR_CLASSES];

/* Parse "random,text,zero,same" into a bit mask; returns 0 on a bad name. */
unsigned int vb_parse_classes(const char *list);

/* The class of page @index when the enabled classes in @mask rotate. */
enum vb_page_class vb_page_class_of(unsigned int mask, size_t index);

/* Fill @page with the content of page @index; @gen changes it on rewrite. */
void vb_fill_page(void *page, enum vb_page_class cls, uint64_t seed,
		  size_t index, uint32_t gen);

/*
 * Check @page; returns -1 when it is intact, else the offset of the first
 * byte that differs.
 */
long vb_check_page(const void *page, enum vb_page_class cls, uint64_t seed,
		   size_t index, uint32_t gen);

/* The next number of a splitmix64 stream: a fixed seed gives a fixed stream. */
uint64_t vb_rand64(uint64_t *state);

/*
 * Mixed pages tune compressibility: the first @random_bytes bytes are random
 * (a function of seed, index and gen), the rest is @fill.  0 random bytes
 * make zero-filled or, with a non-zero @fill, same-filled pages;
 * VB_PAGE_SIZE random bytes make incompressible ones.
 */
struct vb_mix {
	unsigned int random_bytes;
	unsigned char fill;
};

void vb_fill_mixed(void *page, struct vb_mix mix, uint64_t seed, size_t index,
		   uint32_t gen);

/* As vb_check_page, for a page written by vb_fill_mixed. */
long vb_check_mixed(const void *page, struct vb_mix mix, uint64_t seed,
		    size_t index, uint32_t gen);

#endif
