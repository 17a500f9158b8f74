// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pagefill.h"
#include "vbutil.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define PAGEMAP_SWAPPED (1ULL << 62)

extern char **environ;

void vb_fail_sys(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, strerror(errno));
	exit(2);
}

void vb_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void vb_parse_args(int argc, char **argv, const struct option *longopts,
		   void (*handle)(int val, char *value, void *ctx), void *ctx,
		   const char *usage)
{
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			fputs(usage, stderr);
			exit(2);
		}
		handle(c, optarg, ctx);
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n%s", program_invocation_short_name,
			argv[optind], usage);
		exit(2);
	}
}

unsigned long vb_parse_ulong(const char *opt, const char *s, unsigned long min,
			     unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || *s == '-' || v < min || v > max)
		vb_fail("%s needs a number from %lu to %lu, not '%s'", opt, min, max, s);
	return v;
}

int vb_parse_choice(const char *opt, const char *s, const char *const choices[])
{
	char list[256] = "";
	int i;

	for (i = 0; choices[i]; i++) {
		if (!strcmp(s, choices[i]))
			return i;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i ? ", " : "", choices[i]);
	}
	vb_fail("%s is one of %s, not '%s'", opt, list, s);
}

unsigned int vb_parse_class_list(const char *opt, const char *s)
{
	unsigned int mask = vb_parse_classes(s);

	if (!mask)
		vb_fail("%s takes a comma list of random,text,zero,same, not '%s'", opt, s);
	return mask;
}

double vb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct vb_faults vb_faults_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct vb_faults){ ru.ru_minflt, ru.ru_majflt };
}

struct vb_faults vb_faults_since(struct vb_faults before)
{
	struct vb_faults now = vb_faults_now();

	return (struct vb_faults){ now.minor - before.minor, now.major - before.major };
}

int vb_page_out(void *addr, size_t len)
{
	if (madvise(addr, len, MADV_PAGEOUT) == 0)
		return 0;
	if (errno != EINVAL)
		vb_fail_sys("madvise(MADV_PAGEOUT)");
	return -1;
}

int vb_advise_huge_pages(void *addr, size_t len)
{
	const char *mode = getenv("VB_THP");
	int advice;

	if (!mode || !strcmp(mode, "kernel") || !strcmp(mode, "never"))
		advice = MADV_NOHUGEPAGE;
	else if (!strcmp(mode, "madvise"))
		advice = MADV_HUGEPAGE;
	else if (!strcmp(mode, "always") || (*mode && mode[strlen(mode) - 1] == 'K'))
		return 0;	/* a large folio size (64K): no advice either */
	else
		vb_fail("VB_THP=%s: not kernel, never, madvise, always or a size", mode);
	if (madvise(addr, len, advice))
		vb_fail_sys("madvise (huge pages)");
	return advice;
}

size_t vb_swapped_pages(const void *base, size_t pages)
{
	size_t page_size = sysconf(_SC_PAGESIZE), done = 0, swapped = 0;
	uint64_t entries[512];
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		vb_fail_sys("/proc/self/pagemap");
	while (done < pages) {
		size_t n = pages - done < 512 ? pages - done : 512, i;
		off_t off = ((uintptr_t)base / page_size + done) * sizeof(uint64_t);
		ssize_t got = pread(fd, entries, n * sizeof(uint64_t), off);

		if (got != (ssize_t)(n * sizeof(uint64_t)))
			vb_fail_sys("reading /proc/self/pagemap");
		for (i = 0; i < n; i++)
			swapped += !!(entries[i] & PAGEMAP_SWAPPED);
		done += n;
	}
	close(fd);
	return swapped;
}

long vb_swap_used_kib(void)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[512];
	long used, total = 0;

	if (!f)
		vb_fail_sys("/proc/swaps");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %ld", &used) == 1)
			total += used;
	fclose(f);
	return total;
}

struct vb_cmd_cost vb_run_timed(char *const argv[])
{
	struct vb_cmd_cost cost = { 0 };
	struct rusage ru;
	double start = vb_now();
	pid_t pid;
	int status, err;

	/* posix_spawn shares the caller's memory until exec: no page tables are copied. */
	err = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
	if (err) {
		errno = err;
		vb_fail_sys(argv[0]);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		vb_fail_sys("wait4");
	cost.wall_s = vb_now() - start;
	cost.user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	cost.sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	cost.minor_faults = ru.ru_minflt;
	cost.major_faults = ru.ru_majflt;
	cost.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return cost;
}

void vb_cgroup_path(const char *file, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[4096];
	const char *dir = NULL;

	if (!f)
		vb_fail_sys("/proc/self/cgroup");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			dir = line + 3;
			break;
		}
	}
	fclose(f);
	if (!dir)
		vb_fail("not in a cgroup v2 hierarchy (/proc/self/cgroup has no 0:: line)");
	if ((size_t)snprintf(buf, size, "/sys/fs/cgroup%s/%s", dir, file) >= size)
		vb_fail("cgroup path too long");
}

int vb_cgroup_write(const char *file, const char *value)
{
	char path[4200];
	int fd, err = 0;

	vb_cgroup_path(file, path, sizeof(path));
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, value, strlen(value)) < 0)
		err = errno;
	close(fd);
	return err;
}

long long vb_cgroup_read(const char *file)
{
	char path[4200], text[64] = "";
	FILE *f;

	vb_cgroup_path(file, path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		vb_fail_sys(path);
	if (!fgets(text, sizeof(text), f))
		text[0] = 0;
	fclose(f);
	return strncmp(text, "max", 3) ? atoll(text) : -1;
}

static void json_key(struct vb_json *j, const char *key)
{
	fprintf(j->f, "%s\n%*s\"%s\": ", j->members[j->depth]++ ? "," : "",
		2 * (j->depth + 1), "", key);
}

void vb_json_begin(struct vb_json *j, const char *path)
{
	*j = (struct vb_json){ .f = stdout };
	if (path && strcmp(path, "-") && !(j->f = fopen(path, "w")))
		vb_fail_sys(path);
	fputc('{', j->f);
}

void vb_json_object(struct vb_json *j, const char *key)
{
	if (j->depth + 1 >= (int)(sizeof(j->members) / sizeof(j->members[0])))
		vb_fail("JSON nested too deep");
	json_key(j, key);
	fputc('{', j->f);
	j->members[++j->depth] = 0;
}

void vb_json_close(struct vb_json *j)
{
	j->depth--;
	fprintf(j->f, "\n%*s}", 2 * (j->depth + 1), "");
}

void vb_json_end(struct vb_json *j)
{
	fputs("\n}\n", j->f);
	if (j->f != stdout ? fclose(j->f) : fflush(j->f))
		vb_fail_sys("writing the JSON output");
}

void vb_json_int(struct vb_json *j, const char *key, long long v)
{
	json_key(j, key);
	fprintf(j->f, "%lld", v);
}

void vb_json_real(struct vb_json *j, const char *key, double v)
{
	json_key(j, key);
	fprintf(j->f, "%.6f", v);
}

void vb_json_str(struct vb_json *j, const char *key, const char *v)
{
	json_key(j, key);
	fputc('"', j->f);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fputc('\\', j->f);
		if ((unsigned char)*v >= 0x20)
			fputc(*v, j->f);
	}
	fputc('"', j->f);
}

void vb_json_bool(struct vb_json *j, const char *key, int v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}
