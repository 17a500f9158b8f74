// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side tests of what usemem and swapoff share in workloads/lib: mixed
 * pages (pagefill's compressibility knob) and vbutil (command-line options,
 * timed commands, fault counts, pagemap, the JSON writer).  One PASS/FAIL line per test and a
 * summary; exits non-zero when any test failed.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pagefill.h"
#include "report.h"
#include "vbutil.h"

static unsigned char a[VB_PAGE_SIZE], b[VB_PAGE_SIZE];

static void test_mixed_shape(void)
{
	struct vb_mix mix = { .random_bytes = 1000, .fill = 0xa5 };
	int ok = 1, i, distinct = 0;

	vb_fill_mixed(a, mix, 3, 42, 0);
	for (i = 1000; i < VB_PAGE_SIZE; i++)
		ok &= a[i] == 0xa5;
	for (i = 8; i < 1000; i += 8)
		distinct += memcmp(a + i, a + i - 8, 8) != 0;
	ok &= distinct > 100;
	report(ok, "mixed pages are random up to random_bytes, then the fill byte",
	       "the compressibility knob does not shape the page");
}

static void test_mixed_same_filled_and_full(void)
{
	struct vb_mix same = { .random_bytes = 0, .fill = 0xff };
	struct vb_mix full = { .random_bytes = 2 * VB_PAGE_SIZE, .fill = 0 };
	int ok = 1, i;

	vb_fill_mixed(a, same, 3, 42, 0);
	for (i = 0; i < VB_PAGE_SIZE; i++)
		ok &= a[i] == 0xff;
	/* More random bytes than a page: the whole page is random, nothing overflows. */
	vb_fill_mixed(b, full, 3, 42, 0);
	ok &= b[VB_PAGE_SIZE - 1] != 0 || b[VB_PAGE_SIZE - 2] != 0;
	report(ok, "0 random bytes give a same-filled page, a page's worth a random one",
	       "wrong same-filled or full-random page");
}

static void test_mixed_check(void)
{
	struct vb_mix mix = { .random_bytes = 512, .fill = 7 };
	int ok;

	vb_fill_mixed(a, mix, 9, 1000, 2);
	ok = vb_check_mixed(a, mix, 9, 1000, 2) == -1 &&
	     vb_check_mixed(a, mix, 9, 1001, 2) >= 0 &&
	     vb_check_mixed(a, mix, 9, 1000, 3) >= 0;
	a[3000] ^= 1;
	ok &= vb_check_mixed(a, mix, 9, 1000, 2) == 3000;
	report(ok, "mixed check accepts its page and names a flipped fill byte",
	       "a stale, misplaced or corrupted page would pass");
}

static const char *const orders[] = { "seq", "random", NULL };

/* The exit status of @fn(@arg) run in a child, its stderr (usage messages) discarded. */
static int child_status(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		fn(arg);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void collect_option(int val, char *value, void *ctx)
{
	char *seen = ctx;

	sprintf(seen + strlen(seen), "%c=%s;", val, value ? value : "");
}

/* Parse @arg (an argv) with --size N and --flag; exit 1 unless it saw "--size 5 --flag". */
static void parse_args_child(void *arg)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "flag", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	char **argv = arg, seen[64] = "";
	int argc = 0;

	while (argv[argc])
		argc++;
	vb_parse_args(argc, argv, longopts, collect_option, seen, "usage\n");
	_exit(strcmp(seen, "s=5;f=;") ? 1 : 0);
}

static void bad_choice_child(void *arg)
{
	vb_parse_choice("--order", arg, orders);
}

static void test_option_helpers(void)
{
	char *good[] = { "prog", "--size", "5", "--flag", NULL };
	char *unknown[] = { "prog", "--size", "5", "--colour", "red", NULL };
	char *leftover[] = { "prog", "--size", "5", "--flag", "extra", NULL };
	char *missing[] = { "prog", "--flag", "--size", NULL };

	report(child_status(parse_args_child, good) == 0 &&
	       child_status(parse_args_child, unknown) == 2 &&
	       child_status(parse_args_child, leftover) == 2 &&
	       child_status(parse_args_child, missing) == 2 &&
	       child_status(bad_choice_child, "sideways") == 2 &&
	       vb_parse_choice("--order", "random", orders) == 1 &&
	       vb_parse_class_list("--classes", "zero,same") == (1u << VB_CLASS_ZERO | 1u << VB_CLASS_SAME),
	       "options reach the handler; unknown, left-over, missing and bad ones exit 2",
	       "a wrong command line would run with wrong parameters");
}

static void test_run_timed(void)
{
	char *ok_argv[] = { "/bin/sh", "-c", "exit 0", NULL };
	char *fail_argv[] = { "/bin/sh", "-c", "exit 3", NULL };
	char *kill_argv[] = { "/bin/sh", "-c", "kill -9 $$", NULL };
	struct vb_cmd_cost ok = vb_run_timed(ok_argv), bad = vb_run_timed(fail_argv);
	struct vb_cmd_cost killed = vb_run_timed(kill_argv);

	report(ok.exit_status == 0 && bad.exit_status == 3 && killed.exit_status == 128 + 9 &&
	       ok.wall_s > 0 && ok.wall_s < 10 && ok.minor_faults > 0,
	       "a timed command reports its exit status, wall time and faults",
	       "wrong exit status or cost");
}

static void test_faults_and_pagemap(void)
{
	size_t pages = 64, i;
	char *p = mmap(NULL, pages * VB_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct vb_faults before;
	int ok;

	if (p == MAP_FAILED) {
		report(0, "touching fresh pages counts minor faults", "mmap failed");
		return;
	}
	madvise(p, pages * VB_PAGE_SIZE, MADV_NOHUGEPAGE);
	before = vb_faults_now();
	for (i = 0; i < pages; i++)
		p[i * VB_PAGE_SIZE] = 1;
	/* The host has no swap here: nothing is a swap entry. */
	ok = vb_faults_since(before).minor >= (long)pages && vb_swapped_pages(p, pages) == 0;
	munmap(p, pages * VB_PAGE_SIZE);
	report(ok, "touching fresh pages counts minor faults; none is swapped",
	       "fault count or pagemap reading is off");
}

/* The VmFlags of the mapping at @addr in /proc/self/smaps: "hg" MADV_HUGEPAGE, "nh" MADV_NOHUGEPAGE. */
static int vma_has_flag(const void *addr, const char *flag)
{
	char line[512], want[16];
	unsigned long start, end, at = (unsigned long)addr;
	int inside = 0, found = 0;
	FILE *smaps = fopen("/proc/self/smaps", "r");

	if (!smaps)
		return -1;
	snprintf(want, sizeof(want), " %s", flag);
	while (fgets(line, sizeof(line), smaps)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' '))
			inside = start <= at && at < end;
		else if (inside && !strncmp(line, "VmFlags:", 8))
			found = strstr(line, want) != NULL;
	}
	fclose(smaps);
	return found;
}

static void test_huge_page_advice(void)
{
	static const struct { const char *mode; int advice; const char *flag; } cases[] = {
		{ NULL, MADV_NOHUGEPAGE, "nh" }, { "kernel", MADV_NOHUGEPAGE, "nh" },
		{ "never", MADV_NOHUGEPAGE, "nh" }, { "madvise", MADV_HUGEPAGE, "hg" },
		{ "always", 0, NULL },
	};
	size_t len = 4UL << 20, i;
	int ok = 1;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			ok = 0;
			break;
		}
		if (cases[i].mode)
			setenv("VB_THP", cases[i].mode, 1);
		else
			unsetenv("VB_THP");
		ok &= vb_advise_huge_pages(p, len) == cases[i].advice;
		ok &= cases[i].flag ? vma_has_flag(p, cases[i].flag) == 1 :
		      vma_has_flag(p, "nh") == 0 && vma_has_flag(p, "hg") == 0;
		munmap(p, len);
	}
	unsetenv("VB_THP");
	report(ok, "the thp setting gives a swapped mapping its huge page advice",
	       "VB_THP's advice is not the one given, or smaps does not show it");
}

static void test_json_writer(void)
{
	char path[] = "/tmp/test_workload_lib.XXXXXX", text[512] = "";
	struct vb_json j;
	FILE *f;
	int fd = mkstemp(path);
	size_t n;

	if (fd < 0) {
		report(0, "the JSON writer nests objects and separates members", "mkstemp failed");
		return;
	}
	close(fd);
	vb_json_begin(&j, path);
	vb_json_int(&j, "n", -3);
	vb_json_object(&j, "o");
	vb_json_real(&j, "x", 0.5);
	vb_json_str(&j, "s", "a\"b");
	vb_json_close(&j);
	vb_json_bool(&j, "t", 1);
	vb_json_end(&j);
	f = fopen(path, "r");
	n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	text[n] = 0;
	if (f)
		fclose(f);
	unlink(path);
	report(!strcmp(text, "{\n  \"n\": -3,\n  \"o\": {\n    \"x\": 0.500000,\n"
			     "    \"s\": \"a\\\"b\"\n  },\n  \"t\": true\n}\n"),
	       "the JSON writer nests objects and separates members", text);
}

int main(void)
{
	test_mixed_shape();
	test_mixed_same_filled_and_full();
	test_mixed_check();
	test_option_helpers();
	test_run_timed();
	test_faults_and_pagemap();
	test_huge_page_advice();
	test_json_writer();
	return report_summary("workload_lib");
}
