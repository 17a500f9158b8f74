// SPDX-License-Identifier: GPL-2.0
/*
 * overhead: the kernel memory swap metadata takes, per device slot and per
 * swapped-out entry, measured at three points (docs/vswap-6.12-design.md
 * section 5):
 *   A  the swap device off (this program swaps off what the agent set up),
 *   B  the device on, S slots (mkswap of SIZE MiB of it, then swapon),
 *   C  N pages of this process held swapped out: filled, pushed out with
 *      MADV_PAGEOUT and checked in /proc/self/pagemap, their swap cache
 *      folios then reclaimed (memory.reclaim); none is touched again, so
 *      nothing is faulted back.
 *   F  with --fragment-rounds K, after the last C: K rounds that each free
 *      --fragment-percent of the entries held, scattered (each page
 *      drawn at random), and swap out as many new pages in their place,
 *      as a long-running system churns its swap; the entries held are as
 *      many as at the last C, their slots no longer dense.
 * A and B are taken for every size of --sizes (B - A over S: bytes per
 * slot); C for every percentage of --percents of --hold-mib, with the
 * device of the last size on (C - C(0 %) over N: bytes per entry); F is
 * compared with the last C.  With no
 * swap device (zswap-only) there is no swapon: A and B are the same state at
 * S = 0, which shows the noise, and C follows.
 *
 * Every point is read --reads times, each read after a drop_caches (unless
 * --drop-caches 0), plus a read "0" before the first drop, taken once two
 * reads half a second apart agree (deferred frees are done by then;
 * settle_s says how long that took; reads 1..R settle the same way):
 * drop_caches also
 * lets the shadow-node shrinker free the swap cache's xarray nodes, which
 * read 0 still shows.  A read is taken by this process alone, from /proc and
 * debugfs, without starting any other process.
 *
 * A read (after /proc/sys/vm/stat_refresh folds the per-CPU counter
 * deltas): kernel_bytes, everything not free, not user memory and not the
 * zswap pool: MemTotal - MemFree - the per-CPU free lists (/proc/zoneinfo
 * "count:") - AnonPages - Cached - Buffers - SwapCached - PageTables - Zswap.
 * accounted_bytes, what the kernel attributes: Slab + VmallocUsed + Percpu
 * + the vswap descriptor arrays (debugfs desc_bytes: page allocations that
 * no meminfo field shows).  Also the meminfo fields themselves, zswap's pool
 * and stored pages (payload, reported apart), /proc/swaps' used, the vswap
 * debugfs counters and, in read 1 of each point, every /proc/slabinfo
 * cache's bytes (num_slabs x pagesperslab pages).
 * --sizes none measures at S = 0 and leaves any swap device alone.
 *
 * Output: one JSON object (--json FILE or stdout).  Exit 0, or 2 on a usage
 * or system error (a size larger than the device, swapon refused, ...).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <unistd.h>

#include "vbutil.h"

#define PAGE 4096UL
#define MAX_SIZES 16
#define MAX_PERCENTS 16
#define CHUNK_PAGES 2048UL	/* filled and paged out together: 8 MiB */
#define PAGEOUT_TRIES 4
#define ZSWAP_DEBUGFS "/sys/kernel/debug/zswap/"
#define ZSWAP_ENABLED "/sys/module/zswap/parameters/enabled"
#define VSWAP_DEBUGFS "/sys/kernel/debug/vswap/"

struct options {
	char *sizes;		/* MiB list, or "device" */
	size_t hold_mib;
	char *percents;
	int reads;
	int drop_caches;
	int fragment_rounds, fragment_percent;
	const char *json_path;
};

static const char usage[] =
	"usage: overhead [--sizes 'MIB ...'|device|none] [--hold-mib N] [--percents 'P ...']\n"
	"       [--reads R] [--drop-caches 0|1] [--fragment-rounds K] [--fragment-percent F]\n"
	"       [--json FILE]\n";

static void handle_option(int opt, char *value, void *ctx)
{
	struct options *o = ctx;

	switch (opt) {
	case 's': o->sizes = value; break;
	case 'h': o->hold_mib = vb_parse_ulong("--hold-mib", value, 1, 1UL << 20); break;
	case 'p': o->percents = value; break;
	case 'r': o->reads = vb_parse_ulong("--reads", value, 1, 50); break;
	case 'd': o->drop_caches = vb_parse_ulong("--drop-caches", value, 0, 1); break;
	case 'k': o->fragment_rounds = vb_parse_ulong("--fragment-rounds", value, 0, 100); break;
	case 'f': o->fragment_percent = vb_parse_ulong("--fragment-percent", value, 1, 99); break;
	case 'j': o->json_path = value; break;
	}
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "hold-mib", required_argument, NULL, 'h' },
		{ "percents", required_argument, NULL, 'p' },
		{ "reads", required_argument, NULL, 'r' },
		{ "drop-caches", required_argument, NULL, 'd' },
		{ "fragment-rounds", required_argument, NULL, 'k' },
		{ "fragment-percent", required_argument, NULL, 'f' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};

	*o = (struct options){ .sizes = "device", .hold_mib = 256,
			       .percents = "0 25 50 75 100", .reads = 3, .drop_caches = 1,
			       .fragment_percent = 25 };
	vb_parse_args(argc, argv, longopts, handle_option, o, usage);
}

/* A space-separated list of whole numbers into @out; returns how many. */
static int parse_list(const char *opt, const char *text, unsigned long *out, int max,
		      unsigned long limit)
{
	char *copy = strdup(text), *word, *save = NULL;
	int n = 0;

	if (!copy)
		vb_fail_sys("strdup");
	for (word = strtok_r(copy, " ,", &save); word; word = strtok_r(NULL, " ,", &save)) {
		if (n == max)
			vb_fail("%s: more than %d values", opt, max);
		out[n++] = vb_parse_ulong(opt, word, 0, limit);
	}
	free(copy);
	if (!n)
		vb_fail("%s: no value", opt);
	return n;
}

/* The whole of a small file into @buf; -1 when it cannot be read. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t got, total = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((got = read(fd, buf + total, size - 1 - total)) > 0)
		total += got;
	close(fd);
	if (got < 0)
		return -1;
	buf[total] = 0;
	return total;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		vb_fail_sys(path);
	close(fd);
}

/* A debugfs counter: a single number, or -1 when the file is absent. */
static long long read_counter(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/*
 * zswap makes its debugfs directory when it is first turned on: a zswap that
 * is off and has none was never on and holds nothing (0); -1 when that
 * cannot be told.
 */
static long long read_zswap_counter(const char *name)
{
	char path[256], enabled[8];
	long long value;

	snprintf(path, sizeof(path), ZSWAP_DEBUGFS "%s", name);
	value = read_counter(path);
	if (value >= 0 || access(ZSWAP_DEBUGFS, F_OK) == 0)
		return value;
	if (read_file(ZSWAP_ENABLED, enabled, sizeof(enabled)) > 0 && enabled[0] == 'N')
		return 0;
	return -1;
}

static const char *const meminfo_keys[] = {
	"MemTotal", "MemFree", "AnonPages", "Cached", "Buffers", "SwapCached",
	"PageTables", "Slab", "SReclaimable", "SUnreclaim", "VmallocUsed", "Percpu",
	"KernelStack", "Zswap", "Zswapped", "Shmem", "Writeback", NULL,
};
#define NR_MEMINFO (sizeof(meminfo_keys) / sizeof(meminfo_keys[0]) - 1)

static const char *const vswap_keys[] = {
	"used", "clusters", "desc_bytes", "rmap_bytes", "nr_swapfile", "nr_zswap",
	"nr_zero", "nr_folio", NULL,
};
#define VSWAP_DESC_BYTES 2	/* index of desc_bytes */
#define NR_VSWAP (sizeof(vswap_keys) / sizeof(vswap_keys[0]) - 1)

struct reading {
	long long meminfo[NR_MEMINFO];	/* kB, -1 if absent */
	long long pcp_kb;
	long long zswap_pool_bytes, zswap_stored_pages;
	long long swap_used_kb;
	long long vswap[NR_VSWAP];	/* -1 if absent (no vswap) */
	long long kernel_bytes, accounted_bytes;
};

static long long meminfo_of(const struct reading *r, const char *key)
{
	size_t i;

	for (i = 0; i < NR_MEMINFO; i++)
		if (!strcmp(meminfo_keys[i], key))
			return r->meminfo[i] < 0 ? 0 : r->meminfo[i];
	vb_fail("no meminfo key %s", key);
}

static char big[1 << 20];	/* /proc/slabinfo and /proc/zoneinfo fit */

static void read_meminfo(struct reading *r)
{
	char *line, *save = NULL;
	size_t i;

	for (i = 0; i < NR_MEMINFO; i++)
		r->meminfo[i] = -1;
	if (read_file("/proc/meminfo", big, sizeof(big)) < 0)
		vb_fail_sys("/proc/meminfo");
	for (line = strtok_r(big, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = 0;
		for (i = 0; i < NR_MEMINFO; i++)
			if (!strcmp(line, meminfo_keys[i]))
				r->meminfo[i] = strtoll(colon + 1, NULL, 10);
	}
}

/* Pages on the per-CPU free lists: free, but not in MemFree. */
static long long read_pcp_kb(void)
{
	long long pages = 0;
	char *p = big;

	if (read_file("/proc/zoneinfo", big, sizeof(big)) < 0)
		vb_fail_sys("/proc/zoneinfo");
	while ((p = strstr(p, "count:"))) {
		p += 6;
		pages += strtoll(p, &p, 10);
	}
	return pages * (PAGE / 1024);
}

static long long read_swap_used_kb(void)
{
	return vb_swap_used_kib();
}

/*
 * Fold every CPU's pending counter deltas into the global counters meminfo
 * shows (MemFree, Slab, ... lag by up to a threshold per CPU and zone
 * otherwise).  The write fails with EINVAL when some counter is negative,
 * after the refresh: that is ignored, as is a kernel without the file.
 */
static void refresh_counters(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, "1", 1) < 0)
		errno = 0;
	close(fd);
}

static void take_reading(struct reading *r)
{
	char path[128];
	size_t i;

	refresh_counters();
	read_meminfo(r);
	r->pcp_kb = read_pcp_kb();
	r->zswap_pool_bytes = read_zswap_counter("pool_total_size");
	r->zswap_stored_pages = read_zswap_counter("stored_pages");
	r->swap_used_kb = read_swap_used_kb();
	for (i = 0; i < NR_VSWAP; i++) {
		snprintf(path, sizeof(path), VSWAP_DEBUGFS "%s", vswap_keys[i]);
		r->vswap[i] = read_counter(path);
	}
	r->kernel_bytes = 1024 * (meminfo_of(r, "MemTotal") - meminfo_of(r, "MemFree") - r->pcp_kb
				  - meminfo_of(r, "AnonPages") - meminfo_of(r, "Cached")
				  - meminfo_of(r, "Buffers") - meminfo_of(r, "SwapCached")
				  - meminfo_of(r, "PageTables") - meminfo_of(r, "Zswap"));
	r->accounted_bytes = 1024 * (meminfo_of(r, "Slab") + meminfo_of(r, "VmallocUsed")
				     + meminfo_of(r, "Percpu"))
			     + (r->vswap[VSWAP_DESC_BYTES] > 0 ? r->vswap[VSWAP_DESC_BYTES] : 0);
}

/* Every slab cache's bytes: num_slabs x pagesperslab pages (slabinfo 2.1). */
static void json_slabinfo(struct vb_json *j)
{
	char *line, *save = NULL;

	if (read_file("/proc/slabinfo", big, sizeof(big)) < 0)
		return;	/* no CONFIG_SLUB_DEBUG: the "slab" object is left out */
	vb_json_object(j, "slab");
	for (line = strtok_r(big, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long active, num, objsize, perslab, pages, limit, batch, shared, slabs, active_slabs;

		if (sscanf(line, "%63s %lu %lu %lu %lu %lu : tunables %lu %lu %lu : slabdata %lu %lu",
			   name, &active, &num, &objsize, &perslab, &pages, &limit, &batch, &shared,
			   &active_slabs, &slabs) != 11)
			continue;
		vb_json_int(j, name, (long long)slabs * pages * PAGE);
	}
	vb_json_close(j);
}

static void json_reading(struct vb_json *j, const char *key, const struct reading *r, int with_slab)
{
	size_t i;

	vb_json_object(j, key);
	vb_json_int(j, "kernel_bytes", r->kernel_bytes);
	vb_json_int(j, "accounted_bytes", r->accounted_bytes);
	vb_json_int(j, "pcp_kb", r->pcp_kb);
	vb_json_int(j, "zswap_pool_bytes", r->zswap_pool_bytes);
	vb_json_int(j, "zswap_stored_pages", r->zswap_stored_pages);
	vb_json_int(j, "swap_used_kb", r->swap_used_kb);
	vb_json_object(j, "meminfo");
	for (i = 0; i < NR_MEMINFO; i++)
		if (r->meminfo[i] >= 0)
			vb_json_int(j, meminfo_keys[i], r->meminfo[i]);
	vb_json_close(j);
	if (r->vswap[0] >= 0) {
		vb_json_object(j, "vswap");
		for (i = 0; i < NR_VSWAP; i++)
			vb_json_int(j, vswap_keys[i], r->vswap[i]);
		vb_json_close(j);
	}
	if (with_slab)
		json_slabinfo(j);
	vb_json_close(j);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/*
 * Pages written to the disk stay under writeback (with their bios and
 * requests) for a while after MADV_PAGEOUT returns: wait for them, up to
 * 30 s, so that a point reads the entries at rest.  Returns the seconds
 * waited.
 */
static double wait_writeback(void)
{
	double start = vb_now();
	struct reading r;
	int i;

	for (i = 0; i < 300; i++) {
		read_meminfo(&r);
		if (meminfo_of(&r, "Writeback") == 0)
			break;
		usleep(100 * 1000);
	}
	return vb_now() - start;
}

/*
 * A page written to the disk stays in the swap cache, its PTE already a
 * swap entry, until reclaim frees it (zswap frees it at once): with no
 * memory pressure that is never.  Reclaiming the bench cgroup's memory
 * (memory.reclaim) frees those clean folios and leaves the workingset
 * shadow in their place, as zswap's do, so every backend holds its entries
 * the same way.  EAGAIN (less could be reclaimed than asked) is the normal
 * answer.  Only in a vswap-bench guest: on a host it would reclaim the
 * caller's cgroup.  Returns the errno, or 0.
 */
static int evict_swap_cache(size_t pages)
{
	char value[32];

	if (!getenv("VB_OUT") || !pages)
		return 0;
	snprintf(value, sizeof(value), "%zu", pages * PAGE);
	return vb_cgroup_write("memory.reclaim", value);
}

/*
 * Right after the pages go out, objects whose freeing is deferred (RCU
 * callbacks, per-CPU batches) can hold several hundred KiB of unreclaimable
 * slab for a moment: a single read 0 would catch some of them.  Read
 * until two reads SETTLE_INTERVAL_US apart agree within SETTLE_BYTES, up
 * to SETTLE_MAX_READS, and keep the last in @r.  Returns the seconds
 * waited.
 */
#define SETTLE_INTERVAL_US (500 * 1000)
#define SETTLE_BYTES (16 << 10)
#define SETTLE_MAX_READS 40

static double settle(struct reading *r)
{
	double start = vb_now();
	long long previous;
	int i;

	take_reading(r);
	for (i = 1; i < SETTLE_MAX_READS; i++) {
		previous = r->kernel_bytes;
		usleep(SETTLE_INTERVAL_US);
		take_reading(r);
		if (llabs(r->kernel_bytes - previous) <= SETTLE_BYTES)
			break;
	}
	return vb_now() - start;
}

/*
 * The reads of one point, as object @key: read "0" once the kernel's
 * memory has settled, then reads 1..R each after a sync, a drop_caches
 * and the same settling.  Returns the median kernel_bytes of reads 1..R.
 */
static long long take_point(struct vb_json *j, const char *key, const struct options *o)
{
	struct reading r;
	long long values[64];
	double settled = 0;
	char name[8];
	int i;

	vb_json_object(j, key);
	vb_json_real(j, "writeback_wait_s", wait_writeback());
	vb_json_real(j, "settle_s", settle(&r));
	json_reading(j, "0", &r, 0);
	for (i = 1; i <= o->reads; i++) {
		sync();
		if (o->drop_caches)
			write_file("/proc/sys/vm/drop_caches", "3");
		/* The xarray nodes drop_caches takes out are freed through RCU. */
		settled += settle(&r);
		snprintf(name, sizeof(name), "%d", i);
		json_reading(j, name, &r, i == 1);
		values[i - 1] = r.kernel_bytes;
	}
	vb_json_real(j, "settle_after_drop_s", settled);
	vb_json_close(j);
	qsort(values, o->reads, sizeof(values[0]), cmp_ll);
	return values[o->reads / 2];
}

/* The swap device the agent enabled (first line of /proc/swaps), or NULL. */
static char *swap_device(void)
{
	static char dev[256];
	char *line;

	if (read_file("/proc/swaps", big, sizeof(big)) < 0)
		vb_fail_sys("/proc/swaps");
	line = strchr(big, '\n');
	if (!line || sscanf(line + 1, "%255s", dev) != 1)
		return NULL;
	return dev;
}

static unsigned long device_mib(const char *dev)
{
	char path[300], buf[64];
	const char *base = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;

	snprintf(path, sizeof(path), "/sys/class/block/%s/size", base);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		vb_fail_sys(path);
	return strtoull(buf, NULL, 10) * 512 >> 20;
}

static void make_swap(const char *dev, unsigned long mib)
{
	char size_kb[32];
	char *argv[] = { "/sbin/mkswap", "-q", (char *)dev, size_kb, NULL };
	struct vb_cmd_cost cost;

	snprintf(size_kb, sizeof(size_kb), "%lu", mib << 10);
	cost = vb_run_timed(argv);
	if (cost.exit_status)
		vb_fail("mkswap -q %s %s exited %d", dev, size_kb, cost.exit_status);
}

/* Page @i: mostly one byte value, its index in four places: it compresses
 * well, and is neither zero-filled nor same-filled. */
static void fill_page(char *page, size_t i)
{
	uint64_t tag = 0x6f76657268656164ULL ^ i;
	int k;

	memset(page, 0x5a, PAGE);
	for (k = 0; k < 4; k++)
		memcpy(page + k * 1024, &tag, sizeof(tag));
}

/*
 * Push the first @pages of @base out until each is a swap entry or
 * PAGEOUT_TRIES passes have been made; returns the swap entries and sets
 * *@tries to the passes.
 */
static size_t page_out_all(char *base, size_t pages, int *tries)
{
	size_t swapped = vb_swapped_pages(base, pages);

	for (*tries = 1; swapped < pages && *tries < PAGEOUT_TRIES; (*tries)++) {
		vb_page_out(base, pages * PAGE);
		swapped = vb_swapped_pages(base, pages);
	}
	return swapped;
}

/*
 * One round of churn over the @pages held at @base: free each page's
 * entry with probability @percent % (MADV_DONTNEED, in page order: the
 * freed slots are scattered over the clusters), then write those pages
 * anew and swap them out again.  Returns the pages churned.
 */
static size_t fragment_round(char *base, size_t pages, int percent, unsigned int *seed)
{
	size_t i, n = 0;
	unsigned char *pick = calloc(pages, 1);

	if (!pick)
		vb_fail_sys("calloc");
	for (i = 0; i < pages; i++) {
		if ((int)(rand_r(seed) % 100) >= percent)
			continue;
		if (madvise(base + i * PAGE, PAGE, MADV_DONTNEED))
			vb_fail_sys("madvise(MADV_DONTNEED)");
		pick[i] = 1;
		n++;
	}
	for (i = 0; i < pages; i++)
		if (pick[i])
			fill_page(base + i * PAGE, i);
	vb_page_out(base, pages * PAGE);
	free(pick);
	return n;
}

int main(int argc, char **argv)
{
	struct options o;
	struct vb_json j;
	unsigned long sizes[MAX_SIZES], percents[MAX_PERCENTS];
	int nsizes = 0, npercents, s, p;
	size_t hold_pages, filled = 0;
	char *dev, key[32], partial[4096] = "";
	unsigned long dev_mib = 0, last_slots = 0;
	long long static_bytes = 0, c0 = 0, c_last = 0, fragmented = 0;
	size_t last_entries = 0, fragmented_entries = 0;
	cpu_set_t one;
	char *base;

	parse_options(argc, argv, &o);
	npercents = parse_list("--percents", o.percents, percents, MAX_PERCENTS, 100);
	hold_pages = o.hold_mib * (1024 * 1024 / PAGE);
	/* One CPU: the pages just filled wait in this CPU's LRU batch, which
	 * MADV_PAGEOUT drains first. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);

	/*
	 * The device is swapped off and remade only in a vswap-bench guest,
	 * where the agent sets VB_OUT; "--sizes none" leaves swap as it is
	 * (the host tests run the program that way).
	 */
	dev = strcmp(o.sizes, "none") ? swap_device() : NULL;
	if (dev && !getenv("VB_OUT"))
		vb_fail("not in a vswap-bench guest (no VB_OUT): refusing to swapoff and mkswap %s", dev);
	if (dev) {
		dev = strdup(dev);
		dev_mib = device_mib(dev);
		if (!strcmp(o.sizes, "device"))
			sizes[nsizes++] = dev_mib;
		else
			nsizes = parse_list("--sizes", o.sizes, sizes, MAX_SIZES, dev_mib);
		for (s = 0; s < nsizes; s++)
			if (sizes[s] < 1)
				vb_fail("--sizes: a swap area of %lu MiB", sizes[s]);
		/* The holding cannot use more slots than the last size has. */
		if (hold_pages + CHUNK_PAGES >= (sizes[nsizes - 1] << 20) / PAGE)
			vb_fail("--hold-mib %zu does not fit in a swap area of %lu MiB", o.hold_mib,
				sizes[nsizes - 1]);
	} else {
		sizes[nsizes++] = 0;
	}

	/*
	 * Written to a temporary and renamed at the end: a run that fails half
	 * way (mkswap, swapon) leaves no half JSON for the agent to embed in
	 * result.json.
	 */
	if (o.json_path && strcmp(o.json_path, "-")) {
		snprintf(partial, sizeof(partial), "%s.partial", o.json_path);
		vb_json_begin(&j, partial);
	} else {
		vb_json_begin(&j, NULL);
	}
	vb_json_str(&j, "device", dev ? dev : "");
	vb_json_int(&j, "device_mib", dev_mib);
	vb_json_int(&j, "page_size", PAGE);
	vb_json_int(&j, "reads_per_point", o.reads);
	vb_json_bool(&j, "drop_caches", o.drop_caches);
	vb_json_int(&j, "hold_pages", hold_pages);

	vb_json_object(&j, "static");
	for (s = 0; s < nsizes; s++) {
		long long a, b;

		if (dev) {
			if (swapoff(dev) && errno != EINVAL)
				vb_fail_sys("swapoff");
			make_swap(dev, sizes[s]);
		}
		snprintf(key, sizeof(key), "%lu", sizes[s]);
		vb_json_object(&j, key);
		vb_json_int(&j, "size_mb", sizes[s]);
		/* The arrays of swapon are sized by the header's last page + 1. */
		last_slots = (sizes[s] << 20) / PAGE;
		vb_json_int(&j, "swap_slots", last_slots);
		a = take_point(&j, "A", &o);
		if (dev && swapon(dev, 0))
			vb_fail_sys("swapon");
		b = take_point(&j, "B", &o);
		vb_json_close(&j);
		static_bytes = b - a;
	}
	vb_json_close(&j);

	base = mmap(NULL, hold_pages * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		vb_fail_sys("mmap");
	/* Huge pages as the run's thp setting says (base pages by default). */
	vb_advise_huge_pages(base, hold_pages * PAGE);

	vb_json_object(&j, "dynamic");
	vb_json_int(&j, "size_mb", sizes[nsizes - 1]);
	vb_json_int(&j, "swap_slots", last_slots);
	vb_json_object(&j, "points");
	for (p = 0; p < npercents; p++) {
		size_t target = hold_pages * percents[p] / 100, swapped, after;
		double t0 = vb_now(), t_fill;
		int tries, evict;

		if (target < filled)
			vb_fail("--percents must grow: %lu after a larger one", percents[p]);
		while (filled < target) {
			size_t n = target - filled < CHUNK_PAGES ? target - filled : CHUNK_PAGES, i;

			for (i = 0; i < n; i++)
				fill_page(base + (filled + i) * PAGE, filled + i);
			vb_page_out(base + filled * PAGE, n * PAGE);
			filled += n;
		}
		t_fill = vb_now();
		swapped = page_out_all(base, filled, &tries);
		wait_writeback();
		evict = evict_swap_cache(filled);
		snprintf(key, sizeof(key), "%lu", percents[p]);
		vb_json_object(&j, key);
		vb_json_int(&j, "percent", percents[p]);
		vb_json_int(&j, "evict_errno", evict);
		vb_json_int(&j, "target_pages", target);
		/* The entries held: pages whose PTE is a swap entry. */
		vb_json_int(&j, "entries", swapped);
		vb_json_int(&j, "resident_pages", filled - swapped);
		vb_json_int(&j, "pageout_tries", tries);
		vb_json_real(&j, "fill_s", t_fill - t0);
		c_last = take_point(&j, "C", &o);
		/* Checked again after the reads: nothing came back in (0 expected). */
		after = vb_swapped_pages(base, filled);
		vb_json_int(&j, "faulted_back", after < swapped ? (long long)(swapped - after) : 0);
		vb_json_close(&j);
		if (p == 0)
			c0 = c_last;
		last_entries = swapped;
	}
	vb_json_close(&j);
	if (o.fragment_rounds) {
		unsigned int seed = 1;
		size_t churned = 0, swapped;
		double t0 = vb_now();
		int r, tries, evict;

		for (r = 0; r < o.fragment_rounds; r++)
			churned += fragment_round(base, filled, o.fragment_percent, &seed);
		swapped = page_out_all(base, filled, &tries);
		wait_writeback();
		evict = evict_swap_cache(filled);
		vb_json_object(&j, "fragmented");
		vb_json_int(&j, "rounds", o.fragment_rounds);
		vb_json_int(&j, "percent", o.fragment_percent);
		vb_json_int(&j, "churned_pages", churned);
		vb_json_int(&j, "evict_errno", evict);
		vb_json_int(&j, "entries", swapped);
		vb_json_int(&j, "resident_pages", filled - swapped);
		vb_json_int(&j, "pageout_tries", tries);
		vb_json_real(&j, "churn_s", vb_now() - t0);
		fragmented = take_point(&j, "F", &o);
		vb_json_close(&j);
		fragmented_entries = swapped;
	}
	vb_json_close(&j);

	/* A summary, kept as metrics (output.overhead.*): the last size, the last point. */
	vb_json_object(&j, "overhead");
	vb_json_int(&j, "swap_slots", dev ? last_slots : 0);
	vb_json_int(&j, "entries", last_entries);
	vb_json_int(&j, "static_bytes", static_bytes);
	vb_json_int(&j, "dynamic_bytes", c_last - c0);
	if (o.fragment_rounds) {
		vb_json_int(&j, "fragmented_entries", fragmented_entries);
		vb_json_int(&j, "fragmented_dynamic_bytes", fragmented - c0);
	}
	vb_json_close(&j);
	vb_json_end(&j);
	if (*partial && rename(partial, o.json_path))
		vb_fail_sys(o.json_path);
	munmap(base, hold_pages * PAGE);
	return 0;
}
