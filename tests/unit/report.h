/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host-side C tests' reporter: one kselftest-style PASS/FAIL line per
 * test and the "SUITE: N passed, N failed" line tests/run-all.sh totals.
 * Each test is one program, so the counters can live here.
 */
#ifndef VB_TEST_REPORT_H
#define VB_TEST_REPORT_H

#include <stdio.h>

static int report_passed, report_failed;

/* Record test @name: passed when @ok, else failed because of @why. */
static void report(int ok, const char *name, const char *why)
{
	if (ok) {
		report_passed++;
		printf("PASS %s\n", name);
	} else {
		report_failed++;
		printf("FAIL %s: %s\n", name, why);
	}
}

/* Print the summary line of @suite; returns the program's exit code. */
static int report_summary(const char *suite)
{
	printf("%s: %d passed, %d failed\n", suite, report_passed, report_failed);
	return report_failed ? 1 : 0;
}

#endif
