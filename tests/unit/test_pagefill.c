// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side tests of workloads/lib/pagefill: the page contents every swap
 * workload relies on.  Prints one PASS/FAIL line per test and a summary;
 * exits non-zero when any test failed.
 */
#include <stdio.h>
#include <string.h>

#include "pagefill.h"
#include "report.h"

static unsigned char a[VB_PAGE_SIZE], b[VB_PAGE_SIZE];

static void test_deterministic(void)
{
	int cls, ok = 1;

	for (cls = 0; cls < VB_NR_CLASSES; cls++) {
		vb_fill_page(a, cls, 7, 1234, 0);
		vb_fill_page(b, cls, 7, 1234, 0);
		ok &= !memcmp(a, b, sizeof(a));
	}
	report(ok, "same seed and index give the same page", "contents differ");
}

static void test_index_seed_gen_matter(void)
{
	int cls, ok = 1;

	for (cls = 0; cls < VB_NR_CLASSES; cls++) {
		if (cls == VB_CLASS_ZERO)
			continue;
		vb_fill_page(a, cls, 7, 1234, 0);
		vb_fill_page(b, cls, 7, 1235, 0);
		ok &= !!memcmp(a, b, sizeof(a));
		vb_fill_page(b, cls, 8, 1234, 0);
		ok &= !!memcmp(a, b, sizeof(a));
		vb_fill_page(b, cls, 7, 1234, 1);
		ok &= !!memcmp(a, b, sizeof(a));
	}
	report(ok, "index, seed and generation change non-zero pages",
	       "a misplaced or stale page would pass the check");
}

static void test_check_finds_one_flipped_byte(void)
{
	int cls, ok = 1;

	for (cls = 0; cls < VB_NR_CLASSES; cls++) {
		vb_fill_page(a, cls, 3, 99, 0);
		ok &= vb_check_page(a, cls, 3, 99, 0) == -1;
		a[4000] ^= 0x10;
		ok &= vb_check_page(a, cls, 3, 99, 0) == 4000;
	}
	report(ok, "check accepts intact pages and names a flipped byte",
	       "wrong check result");
}

static void test_class_shapes(void)
{
	const unsigned long long *w = (const void *)a;
	int ok = 1, i, distinct = 0;

	vb_fill_page(a, VB_CLASS_ZERO, 5, 17, 0);
	for (i = 0; i < VB_PAGE_SIZE; i++)
		ok &= a[i] == 0;
	vb_fill_page(a, VB_CLASS_SAME, 5, 17, 0);
	ok &= w[0] != 0;
	for (i = 1; i < VB_PAGE_SIZE / 8; i++)
		ok &= w[i] == w[0];
	vb_fill_page(a, VB_CLASS_RANDOM, 5, 17, 0);
	for (i = 1; i < VB_PAGE_SIZE / 8; i++)
		distinct += w[i] != w[i - 1];
	ok &= distinct > VB_PAGE_SIZE / 8 - 4;
	report(ok, "zero, same-filled and random pages have their shape",
	       "a class would not take its swap path");
}

/* Text pages must compress: few distinct byte values. */
static void test_text_is_compressible(void)
{
	int seen[256] = { 0 }, i, distinct = 0;

	vb_fill_page(a, VB_CLASS_TEXT, 5, 17, 0);
	for (i = 0; i < VB_PAGE_SIZE; i++)
		seen[a[i]] = 1;
	for (i = 0; i < 256; i++)
		distinct += seen[i];
	report(distinct <= 34, "text pages use a small alphabet", "too many distinct bytes");
}

static void test_parse_classes(void)
{
	int ok = vb_parse_classes("random,text,zero,same") == 0xf &&
		 vb_parse_classes("zero") == 1u << VB_CLASS_ZERO &&
		 vb_parse_classes("zero,bogus") == 0 &&
		 vb_page_class_of(1u << VB_CLASS_SAME, 12345) == VB_CLASS_SAME &&
		 vb_page_class_of(0xf, 6) == VB_CLASS_ZERO;

	report(ok, "class lists parse and rotate", "wrong mask or rotation");
}

int main(void)
{
	test_deterministic();
	test_index_seed_gen_matter();
	test_check_finds_one_flipped_byte();
	test_class_shapes();
	test_text_is_compressible();
	test_parse_classes();
	return report_summary("pagefill");
}
