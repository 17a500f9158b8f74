/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the in-guest workload programs share: errors, command-line options,
 * clocks and fault counts, paging out, timing a child command, the bench
 * cgroup's control files and a small JSON writer.  Errors print
 * "PROGRAM: ..." (the name the program was started with) and exit 2, the
 * workloads' "usage or system error" code.
 */
#ifndef VB_UTIL_H
#define VB_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* Print "PROGRAM: WHAT: strerror(errno)" and exit 2. */
void vb_fail_sys(const char *what) __attribute__((noreturn));
/* Print "PROGRAM: MESSAGE" and exit 2. */
void vb_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/*
 * The workloads take long options only ("--size-mib 64").  vb_parse_args runs
 * getopt_long over @longopts and calls @handle(val, value, ctx) for each
 * option given; an unknown option, a missing value or a left-over argument
 * prints @usage and exits 2.
 */
struct option;
void vb_parse_args(int argc, char **argv, const struct option *longopts,
		   void (*handle)(int val, char *value, void *ctx), void *ctx,
		   const char *usage);

/* @s as a whole number in [min, max], else a usage error naming @opt. */
unsigned long vb_parse_ulong(const char *opt, const char *s, unsigned long min,
			     unsigned long max);
/* The index of @s in the NULL-terminated @choices, else a usage error naming @opt. */
int vb_parse_choice(const char *opt, const char *s, const char *const choices[]);
/* A comma list of pagefill classes as a mask, else a usage error naming @opt. */
unsigned int vb_parse_class_list(const char *opt, const char *s);

/* CLOCK_MONOTONIC in seconds: comparable between processes. */
double vb_now(void);

struct vb_faults {
	long minor, major;
};

/* The calling process's fault counts so far (getrusage RUSAGE_SELF). */
struct vb_faults vb_faults_now(void);
/* @after minus @before. */
struct vb_faults vb_faults_since(struct vb_faults before);

/*
 * MADV_PAGEOUT over [addr, addr + len); returns 0, or -1 when the kernel
 * does not know MADV_PAGEOUT (the caller then relies on the cgroup limit).
 */
int vb_page_out(void *addr, size_t len);

/*
 * The huge page advice of the run's thp setting (VB_THP in the environment)
 * for a mapping the workload swaps: thp=kernel (unset: the default) and
 * never, MADV_NOHUGEPAGE, base pages only; madvise, MADV_HUGEPAGE; always
 * and a large folio size (64K), none.  Returns the advice given (0 for none); fails on another value.
 */
int vb_advise_huge_pages(void *addr, size_t len);

/* Pages of [base, base + pages pages) whose pagemap entry is a swap entry. */
size_t vb_swapped_pages(const void *base, size_t pages);

/* Sum of the "Used" column of /proc/swaps, in KiB. */
long vb_swap_used_kib(void);

/* What one command cost, from wait4(). */
struct vb_cmd_cost {
	double wall_s, user_s, sys_s;
	long minor_faults, major_faults;
	int exit_status;	/* exit code, or 128 + signal */
};

/* Run @argv (argv[0] a path) without copying the caller's memory map. */
struct vb_cmd_cost vb_run_timed(char *const argv[]);

/*
 * The calling process's cgroup v2 directory (from /proc/self/cgroup) joined
 * with @file, into @buf of @size bytes.
 */
void vb_cgroup_path(const char *file, char *buf, size_t size);
/* Write @value to the cgroup control @file; returns 0 or errno. */
int vb_cgroup_write(const char *file, const char *value);
/* A single-number cgroup control @file ("max" reads as -1). */
long long vb_cgroup_read(const char *file);

/*
 * A JSON object written as it goes: vb_json_begin opens the file ("-" or
 * NULL is stdout), each call adds one member, objects nest up to 8 deep.
 */
struct vb_json {
	FILE *f;
	int depth;
	int members[8];
};

void vb_json_begin(struct vb_json *j, const char *path);
void vb_json_end(struct vb_json *j);
void vb_json_object(struct vb_json *j, const char *key);
void vb_json_close(struct vb_json *j);
void vb_json_int(struct vb_json *j, const char *key, long long v);
void vb_json_real(struct vb_json *j, const char *key, double v);
void vb_json_str(struct vb_json *j, const char *key, const char *v);
void vb_json_bool(struct vb_json *j, const char *key, int v);

#endif
