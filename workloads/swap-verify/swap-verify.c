// SPDX-License-Identifier: GPL-2.0
/*
 * swap-verify: push pages of known content through swap and check every byte
 * when they come back.
 *
 * The pages are filled by pagefill (four classes, content a function of seed
 * and index), forced out by the cgroup limit the caller set and by
 * MADV_PAGEOUT, then read back.  Modes:
 *   plain  private anonymous memory;
 *   fork   children verify the parent's swapped pages (shared copy-on-write
 *          swap entries, swap counts above one), rewrite their share and
 *          verify it; the parent then checks that it still sees its own data;
 *   shmem  a memfd (tmpfs) mapping, swapped through the shmem path.
 * Every mode then rewrites every other page, pages out again and verifies
 * all pages once more, so freed and reused swap slots are exercised too.
 * --snapshot CMD runs CMD (through /bin/sh) right after the first page-out,
 * before any page is read back: the caller records there where the pages
 * went (device slots, zswap, zero pages), which the end of the run no
 * longer shows, its pages freed.
 *
 * Output: one JSON object (stdout, or --json FILE).  Exit 0 when every page
 * matched, 1 on a mismatch (the first bad page is named on stderr and in the
 * JSON), 2 on a usage or system error.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pagefill.h"
#include "vbutil.h"

#define PM_SWAP (1ULL << 62)
#define PM_SWAP_TYPE_MASK 0x1fULL

struct options {
	size_t size_mib;
	const char *mode;
	int children;
	uint64_t seed;
	unsigned int classes;
	const char *json_path;
	const char *snapshot;
};

struct mismatch {
	const char *phase;
	size_t page;
	enum vb_page_class cls;
	long offset;
};

struct residency {
	size_t nonresident;	/* pages mincore() reports not in memory */
	size_t swap_ptes;	/* pagemap entries with the swapped bit */
	unsigned int swap_types;	/* bit mask of swap types in those entries */
};

static const char usage[] =
	"usage: swap-verify [--size-mib N] [--mode plain|fork|shmem] [--children K]\n"
	"       [--seed S] [--classes random,text,zero,same] [--json FILE]\n"
	"       [--snapshot CMD]\n";

static void handle_option(int opt, char *value, void *ctx)
{
	static const char *const modes[] = { "plain", "fork", "shmem", NULL };
	struct options *o = ctx;

	switch (opt) {
	case 's': o->size_mib = vb_parse_ulong("--size-mib", value, 1, 1UL << 20); break;
	case 'm': o->mode = modes[vb_parse_choice("--mode", value, modes)]; break;
	case 'c': o->children = vb_parse_ulong("--children", value, 1, 4096); break;
	case 'S': o->seed = vb_parse_ulong("--seed", value, 1, ~0UL); break;
	case 'C': o->classes = vb_parse_class_list("--classes", value); break;
	case 'j': o->json_path = value; break;
	case 'n': o->snapshot = value; break;
	}
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "size-mib", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "children", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'S' },
		{ "classes", required_argument, NULL, 'C' },
		{ "json", required_argument, NULL, 'j' },
		{ "snapshot", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};

	*o = (struct options){ .size_mib = 64, .mode = "plain", .children = 4,
			       .seed = 1, .classes = (1u << VB_NR_CLASSES) - 1 };
	vb_parse_args(argc, argv, longopts, handle_option, o, usage);
}

static void fill_range(char *base, const struct options *o, size_t first,
		       size_t end, size_t step, uint32_t gen)
{
	size_t i;

	for (i = first; i < end; i += step)
		vb_fill_page(base + i * VB_PAGE_SIZE, vb_page_class_of(o->classes, i),
			     o->seed, i, gen);
}

/*
 * Check pages first, first+step, ... below end; page i is expected at
 * generation gen_of(i).  Returns the number of bad pages and records the first.
 */
static size_t check_range(const char *base, const struct options *o, size_t first,
			  size_t end, size_t step, uint32_t (*gen_of)(size_t, const void *),
			  const void *gen_arg, const char *phase, struct mismatch *first_bad)
{
	size_t i, bad = 0;

	for (i = first; i < end; i += step) {
		enum vb_page_class cls = vb_page_class_of(o->classes, i);
		long off = vb_check_page(base + i * VB_PAGE_SIZE, cls, o->seed, i,
					 gen_of(i, gen_arg));

		if (off < 0)
			continue;
		if (!bad++ && first_bad && !first_bad->phase)
			*first_bad = (struct mismatch){ phase, i, cls, off };
	}
	return bad;
}

static uint32_t gen_zero(size_t index, const void *arg)
{
	(void)index; (void)arg;
	return 0;
}

/* After the rewrite pass odd pages are at generation 1. */
static uint32_t gen_rewritten(size_t index, const void *arg)
{
	(void)arg;
	return index & 1;
}

static void page_out(char *base, size_t len, int *pageout_supported)
{
	if (vb_page_out(base, len))
		*pageout_supported = 0;
}

/* Runs the --snapshot command; returns its wall time, which verify_s leaves out. */
static double take_snapshot(const char *cmd)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	struct vb_cmd_cost cost = vb_run_timed(argv);

	if (cost.exit_status)
		vb_fail("--snapshot command exited %d: %s", cost.exit_status, cmd);
	return cost.wall_s;
}

/*
 * The anonymous large folios in use in the whole guest, of each size
 * (hugepages-SIZE/stats/nr_anon), as a JSON object: taken while this process
 * holds its memory, they say whether pages swapped out in large folios came
 * back in them.  {} on a kernel without the counters.
 */
static char *large_folios(void)
{
	const char *pattern = "/sys/kernel/mm/transparent_hugepage/hugepages-*/stats/nr_anon";
	char *json = NULL;
	size_t len = 0, i;
	glob_t found;
	FILE *out = open_memstream(&json, &len);

	if (!out)
		vb_fail_sys("open_memstream");
	fprintf(out, "{");
	if (!glob(pattern, 0, NULL, &found)) {
		for (i = 0; i < found.gl_pathc; i++) {
			const char *size = strstr(found.gl_pathv[i], "hugepages-") + strlen("hugepages-");
			long value = -1;
			FILE *f = fopen(found.gl_pathv[i], "r");

			if (!f || fscanf(f, "%ld", &value) != 1)
				vb_fail_sys(found.gl_pathv[i]);
			fclose(f);
			fprintf(out, "%s\"%.*s\": %ld", i ? ", " : "", (int)strcspn(size, "/"), size, value);
		}
		globfree(&found);
	}
	fprintf(out, "}");
	fclose(out);
	return json;
}

static struct residency measure_residency(char *base, size_t pages)
{
	struct residency r = { 0 };
	unsigned char *vec = malloc(pages);
	uint64_t entry;
	size_t i;
	int fd;

	if (!vec)
		vb_fail_sys("malloc");
	if (mincore(base, pages * VB_PAGE_SIZE, vec))
		vb_fail_sys("mincore");
	for (i = 0; i < pages; i++)
		r.nonresident += !(vec[i] & 1);
	free(vec);

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return r;
	for (i = 0; i < pages; i++) {
		off_t off = ((uintptr_t)base / VB_PAGE_SIZE + i) * sizeof(entry);

		if (pread(fd, &entry, sizeof(entry), off) != sizeof(entry))
			break;
		if (entry & PM_SWAP) {
			r.swap_ptes++;
			r.swap_types |= 1u << (entry & PM_SWAP_TYPE_MASK);
		}
	}
	close(fd);
	return r;
}

/*
 * Child @k of @n: verify everything the parent wrote, rewrite pages k, k+n,
 * ... at generation k + 1, push them out again and verify them.
 */
static uint32_t gen_child(size_t index, const void *arg)
{
	(void)index;
	return *(const uint32_t *)arg;
}

static int run_child(char *base, size_t pages, const struct options *o, int k,
		     int *pageout_supported)
{
	struct mismatch bad = { 0 };
	uint32_t gen = k + 1;

	if (check_range(base, o, 0, pages, 1, gen_zero, NULL, "child-verify", &bad) == 0) {
		fill_range(base, o, k, pages, o->children, gen);
		page_out(base, pages * VB_PAGE_SIZE, pageout_supported);
		check_range(base, o, k, pages, o->children, gen_child, &gen,
			    "child-rewrite", &bad);
	}
	if (!bad.phase)
		return 0;
	fprintf(stderr, "swap-verify: MISMATCH mode=fork child=%d phase=%s page=%zu class=%s offset=%ld\n",
		k, bad.phase, bad.page, vb_class_names[bad.cls], bad.offset);
	return 1;
}

static int run_children(char *base, size_t pages, const struct options *o,
			int *pageout_supported)
{
	int k, status, failed = 0;

	for (k = 0; k < o->children; k++) {
		pid_t pid = fork();

		if (pid < 0)
			vb_fail_sys("fork");
		if (pid == 0)
			_exit(run_child(base, pages, o, k, pageout_supported));
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	return failed;
}

int main(int argc, char **argv)
{
	struct options o;
	struct mismatch bad = { 0 };
	struct residency after_pageout, after_rewrite;
	size_t pages, len, nbad = 0, per_class[VB_NR_CLASSES] = { 0 }, i;
	int pageout_supported = 1, children_failed = 0, fd = -1;
	double t0, t_fill, t_out, t_verify, t_end, snapshot_s = 0;
	char *base, *folios_after_fill, *folios_after_verify;
	FILE *out = stdout;

	parse_options(argc, argv, &o);
	pages = o.size_mib * (1024 * 1024 / VB_PAGE_SIZE);
	len = pages * VB_PAGE_SIZE;

	if (!strcmp(o.mode, "shmem")) {
		fd = memfd_create("swap-verify", 0);
		if (fd < 0 || ftruncate(fd, len))
			vb_fail_sys("memfd");
		base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	} else {
		base = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (base == MAP_FAILED)
		vb_fail_sys("mmap");
	/* Huge pages as the run's thp setting says (base pages by default). */
	vb_advise_huge_pages(base, len);

	t0 = vb_now();
	fill_range(base, &o, 0, pages, 1, 0);
	t_fill = vb_now();
	folios_after_fill = large_folios();
	page_out(base, len, &pageout_supported);
	t_out = vb_now();
	after_pageout = measure_residency(base, pages);
	if (o.snapshot)
		snapshot_s = take_snapshot(o.snapshot);

	if (!strcmp(o.mode, "fork"))
		children_failed = run_children(base, pages, &o, &pageout_supported);
	nbad += check_range(base, &o, 0, pages, 1, gen_zero, NULL, "verify", &bad);
	t_verify = vb_now();
	folios_after_verify = large_folios();

	fill_range(base, &o, 1, pages, 2, 1);
	page_out(base, len, &pageout_supported);
	after_rewrite = measure_residency(base, pages);
	nbad += check_range(base, &o, 0, pages, 1, gen_rewritten, NULL, "rewrite-verify", &bad);
	t_end = vb_now();

	for (i = 0; i < pages; i++)
		per_class[vb_page_class_of(o.classes, i)]++;

	if (o.json_path && !(out = fopen(o.json_path, "w")))
		vb_fail_sys(o.json_path);
	fprintf(out, "{\n  \"mode\": \"%s\",\n  \"size_mib\": %zu,\n  \"pages\": %zu,\n"
		"  \"seed\": %llu,\n  \"children\": %d,\n  \"pages_per_class\": {",
		o.mode, o.size_mib, pages, (unsigned long long)o.seed,
		strcmp(o.mode, "fork") ? 0 : o.children);
	for (i = 0; i < VB_NR_CLASSES; i++)
		fprintf(out, "%s\"%s\": %zu", i ? ", " : "", vb_class_names[i], per_class[i]);
	fprintf(out, "},\n  \"madv_pageout\": %s,\n"
		"  \"nonresident_after_pageout\": %zu,\n  \"swap_ptes_after_pageout\": %zu,\n"
		"  \"swap_type_mask\": %u,\n  \"nonresident_after_rewrite\": %zu,\n"
		"  \"fill_s\": %.6f,\n  \"pageout_s\": %.6f,\n  \"verify_s\": %.6f,\n"
		"  \"rewrite_verify_s\": %.6f,\n  \"pages_verified\": %zu,\n"
		"  \"mib_verified\": %zu,\n  \"mismatches\": %zu,\n  \"children_failed\": %d,\n"
		"  \"large_folios_after_fill\": %s,\n  \"large_folios_after_verify\": %s",
		pageout_supported ? "true" : "false", after_pageout.nonresident,
		after_pageout.swap_ptes, after_pageout.swap_types | after_rewrite.swap_types,
		after_rewrite.nonresident, t_fill - t0, t_out - t_fill, t_verify - t_out - snapshot_s,
		t_end - t_verify, 2 * pages, 2 * o.size_mib, nbad, children_failed,
		folios_after_fill, folios_after_verify);
	if (bad.phase)
		fprintf(out, ",\n  \"first_bad\": {\"phase\": \"%s\", \"page\": %zu, \"class\": \"%s\", \"offset\": %ld}",
			bad.phase, bad.page, vb_class_names[bad.cls], bad.offset);
	fprintf(out, "\n}\n");
	if (out != stdout)
		fclose(out);

	if (bad.phase)
		fprintf(stderr, "swap-verify: MISMATCH mode=%s phase=%s page=%zu class=%s offset=%ld (%zu bad pages)\n",
			o.mode, bad.phase, bad.page, vb_class_names[bad.cls], bad.offset, nbad);
	if (children_failed)
		fprintf(stderr, "swap-verify: %d of %d children found bad pages\n",
			children_failed, o.children);
	return nbad || children_failed ? 1 : 0;
}
