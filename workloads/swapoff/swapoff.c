// SPDX-License-Identifier: GPL-2.0
/*
 * swapoff (installed in the guest as /opt/vb/bin/swapoff; the system tool it
 * times is /usr/sbin/swapoff): the cost of swapoff and what it leaves behind.
 *
 * 1. Populate verifiable pages (pagefill classes):
 *      anon    --size-mib private anonymous memory of this process;
 *      cow     --cow-mib private anonymous memory shared copy-on-write with
 *              a forked child (swap entries with a count of two);
 *      shmem   --shmem-mib of a memfd (tmpfs) mapped shared;
 *      sparse  --sparse-mib of a mapping that is only read, so each page has
 *              a page-table entry (the shared zero page) and no memory: a
 *              large mapping swapoff must walk, like the cover letter's
 *              process mapping a large file; one written page gives it the
 *              anon_vma that makes swapoff walk it;
 *      vmas    --vmas separate private anonymous mappings of --vma-pages
 *              pages each, one guard page apart so the kernel cannot merge
 *              them: swapoff walks the page tables VMA by VMA, and many small
 *              VMAs with swapped pages stress that walk rather than its
 *              per-page work.
 * 2. Push them to swap: MADV_PAGEOUT, then (--cgroup) memory.reclaim of the
 *    process's cgroup for the shared pages MADV_PAGEOUT skips; then lift the
 *    cgroup's memory.max so swapoff can bring every page back in.
 * 3. Time `SWAPOFF -a` (default /usr/sbin/swapoff) run as a child: wall
 *    time and its own user/sys time from wait4().  This process and the
 *    child stay alive meanwhile, holding every swapped page.  With
 *    --fail-reads N, the kernel's fault injection (fail_make_request) fails
 *    the first N requests to the swap devices from then on: swapoff cannot
 *    read those pages, and must still complete and lose only them.
 * 4. Touch every page, count the minor and major faults it takes per region
 *    (swapoff should have mapped the pages back) and verify every page; the
 *    child verifies its copy-on-write view too.  A page whose touch raises
 *    SIGBUS is counted lost, not bad: it is how both kernels report a page
 *    swapoff could not read.
 *
 * Output: JSON (--json FILE or stdout).  Exit 0 when swapoff succeeded and
 * every page verified or (with --fail-reads) was lost, 1 otherwise, 2 on a
 * usage or system error.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pagefill.h"
#include "vbutil.h"

enum region_id { REGION_ANON, REGION_COW, REGION_SHMEM, REGION_SPARSE, REGION_VMAS, NR_REGIONS };

static const char *const region_names[NR_REGIONS] = { "anon", "cow", "shmem", "sparse", "vmas" };

/*
 * Each small mapping and its guard page are two VMAs; vm.max_map_count
 * (65530 by default) bounds them all, the program's own included.
 */
#define MAX_VMAS 30000

struct options {
	size_t mib[REGION_VMAS];
	size_t vmas, vma_pages;
	size_t fail_reads;
	uint64_t seed;
	unsigned int classes;
	int use_cgroup;
	char *swapoff_path;
	const char *json_path;
};

struct region {
	char *base;
	size_t pages;
	size_t chunk;		/* pages per mapping, 0: one mapping */
	size_t span;		/* pages mapped, guard pages included */
	size_t first_index;	/* pagefill index of the first page: regions differ */
	size_t swapped_before;	/* pagemap swap entries before swapoff */
	size_t swapped_after;
	struct vb_faults faults;	/* taken while touching after swapoff */
	size_t bad_pages;
	size_t lost_pages;	/* SIGBUS on touch */
	double verify_s;
};

/* What the child that shares the cow region reports after verifying it. */
struct child_report {
	struct vb_faults faults;
	size_t bad_pages, lost_pages;
};

static const char usage[] =
	"usage: swapoff [--size-mib N] [--cow-mib N] [--shmem-mib N] [--sparse-mib N]\n"
	"               [--vmas N] [--vma-pages K] [--classes LIST] [--seed S] [--cgroup] [--swapoff PATH]\n"
	"               [--fail-reads N] [--json FILE]\n"
	"This is vswap-bench's swapoff workload; the system tool is /usr/sbin/swapoff.\n";

static void handle_option(int opt, char *value, void *ctx)
{
	struct options *o = ctx;

	switch (opt) {
	case 'a': o->mib[REGION_ANON] = vb_parse_ulong("--size-mib", value, 1, 1UL << 22); break;
	case 'c': o->mib[REGION_COW] = vb_parse_ulong("--cow-mib", value, 0, 1UL << 22); break;
	case 'm': o->mib[REGION_SHMEM] = vb_parse_ulong("--shmem-mib", value, 0, 1UL << 22); break;
	case 'z': o->mib[REGION_SPARSE] = vb_parse_ulong("--sparse-mib", value, 0, 1UL << 30); break;
	case 'v': o->vmas = vb_parse_ulong("--vmas", value, 0, MAX_VMAS); break;
	case 'p': o->vma_pages = vb_parse_ulong("--vma-pages", value, 1, 1UL << 16); break;
	case 'C': o->classes = vb_parse_class_list("--classes", value); break;
	case 'S': o->seed = vb_parse_ulong("--seed", value, 0, ~0UL); break;
	case 'g': o->use_cgroup = 1; break;
	case 'w': o->swapoff_path = value; break;
	case 'f': o->fail_reads = vb_parse_ulong("--fail-reads", value, 0, 1UL << 20); break;
	case 'j': o->json_path = value; break;
	}
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "size-mib", required_argument, NULL, 'a' },
		{ "cow-mib", required_argument, NULL, 'c' },
		{ "shmem-mib", required_argument, NULL, 'm' },
		{ "sparse-mib", required_argument, NULL, 'z' },
		{ "vmas", required_argument, NULL, 'v' },
		{ "vma-pages", required_argument, NULL, 'p' },
		{ "classes", required_argument, NULL, 'C' },
		{ "seed", required_argument, NULL, 'S' },
		{ "cgroup", no_argument, NULL, 'g' },
		{ "swapoff", required_argument, NULL, 'w' },
		{ "fail-reads", required_argument, NULL, 'f' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};

	*o = (struct options){ .mib = { 64, 8, 8, 0 }, .vma_pages = 4, .seed = 1,
			       .classes = (1u << VB_NR_CLASSES) - 1,
			       .swapoff_path = "/usr/sbin/swapoff" };
	vb_parse_args(argc, argv, longopts, handle_option, o, usage);
}

/* Page @i of @r: mappings of r->chunk pages are one guard page apart. */
static char *page_at(const struct region *r, size_t i)
{
	return r->base + (r->chunk ? i + i / r->chunk : i) * VB_PAGE_SIZE;
}

static void map_region(struct region *r, enum region_id id, size_t pages, size_t chunk,
		       size_t first_index)
{
	size_t len, c;
	int fd;

	r->pages = pages;
	r->chunk = chunk;
	r->span = chunk ? pages + pages / chunk : pages;
	r->first_index = first_index;
	if (!pages)
		return;
	len = r->span * VB_PAGE_SIZE;
	if (id == REGION_SHMEM) {
		fd = memfd_create("swapoff-shmem", 0);
		if (fd < 0 || ftruncate(fd, len))
			vb_fail_sys("memfd");
		r->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	} else {
		/*
		 * The vmas region is reserved inaccessible and opened chunk by
		 * chunk below.  The sparse region holds no memory, so it is not
		 * reserved against the commit limit: it may be larger than the
		 * guest's memory and swap together, as the cover letter's
		 * mapping is.
		 */
		r->base = mmap(NULL, len, chunk ? PROT_NONE : PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | (id == REGION_SPARSE ? MAP_NORESERVE : 0),
			       -1, 0);
	}
	if (r->base == MAP_FAILED)
		vb_fail_sys("mmap");
	/* Huge pages as the run's thp setting says (base pages by default). */
	vb_advise_huge_pages(r->base, len);
	/* Only the cow region is the child's business. */
	if (id != REGION_COW && madvise(r->base, len, MADV_DONTFORK))
		vb_fail_sys("madvise(MADV_DONTFORK)");
	for (c = 0; chunk && c < pages / chunk; c++)
		if (mprotect(r->base + c * (chunk + 1) * VB_PAGE_SIZE, chunk * VB_PAGE_SIZE,
			     PROT_READ | PROT_WRITE))
			vb_fail_sys("mprotect of a small mapping (vm.max_map_count?)");
}

static void fill_region(struct region *r, enum region_id id, const struct options *o)
{
	volatile char sum = 0;
	size_t i;

	if (id == REGION_SPARSE) {
		for (i = 0; i < r->pages; i++)
			sum += *page_at(r, i);
		if (r->pages)
			r->base[0] = 0;	/* the anon_vma that makes swapoff walk it */
		return;
	}
	for (i = 0; i < r->pages; i++)
		vb_fill_page(page_at(r, i), vb_page_class_of(o->classes, r->first_index + i),
			     o->seed, r->first_index + i, 0);
}

static sigjmp_buf touch_failed;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(touch_failed, 1);
}

/*
 * Touch every page of @r, the sparse region reading back zeros; returns the
 * pages with other contents and counts in *@lost those whose touch raised
 * SIGBUS (on_sigbus() must be the handler).
 */
static size_t verify_region(const struct region *r, enum region_id id, const struct options *o,
			    size_t *lost)
{
	volatile size_t i, bad = 0, nlost = 0;

	for (i = 0; i < r->pages; i++) {
		const char *page = page_at(r, i);

		if (sigsetjmp(touch_failed, 1)) {
			nlost++;
			continue;
		}
		if (id == REGION_SPARSE)
			bad += page[0] != 0;
		else
			bad += vb_check_page(page, vb_page_class_of(o->classes, r->first_index + i),
					     o->seed, r->first_index + i, 0) >= 0;
	}
	*lost = nlost;
	return bad;
}

/*
 * Write @value to the file @dir/@name of sysfs or debugfs, or fail naming
 * what it is for.
 */
static void write_knob(const char *dir, const char *name, const char *value)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(value, f) < 0 || fclose(f))
		vb_fail_sys(path);
}

#define FAIL_REQUEST_DIR "/sys/kernel/debug/fail_make_request"

/*
 * Fail the next @n requests to every block device in /proc/swaps (a swap
 * file is left alone: its requests go to the root filesystem's disk), or
 * with @n of 0 stop failing them.  Returns the devices armed.
 */
static int fail_swap_device_requests(size_t n)
{
	char name[256], type[32], dir[300], times[32];
	int devices = 0;
	FILE *f;

	if (n) {
		snprintf(times, sizeof(times), "%zu", n);
		write_knob(FAIL_REQUEST_DIR, "probability", "100");
		write_knob(FAIL_REQUEST_DIR, "interval", "1");
		write_knob(FAIL_REQUEST_DIR, "space", "0");
		write_knob(FAIL_REQUEST_DIR, "verbose", "0");
		write_knob(FAIL_REQUEST_DIR, "times", times);
	}
	f = fopen("/proc/swaps", "r");
	if (!f || fscanf(f, "%*[^\n]\n") < 0)
		vb_fail_sys("/proc/swaps");
	while (fscanf(f, "%255s %31s %*[^\n]\n", name, type) == 2) {
		if (strcmp(type, "partition") || strncmp(name, "/dev/", 5))
			continue;
		snprintf(dir, sizeof(dir), "/sys/class/block/%s", name + 5);
		write_knob(dir, "make-it-fail", n ? "1" : "0");
		devices++;
	}
	fclose(f);
	return devices;
}

/* How many of the requests fail_swap_device_requests(@armed) failed. */
static size_t failed_requests(size_t armed)
{
	long left = -1;
	FILE *f = fopen(FAIL_REQUEST_DIR "/times", "r");

	if (!f || fscanf(f, "%ld", &left) != 1 || left < 0 || (size_t)left > armed)
		vb_fail(FAIL_REQUEST_DIR "/times: cannot read what is left of %zu", armed);
	fclose(f);
	return armed - left;
}

/* The child: hold the cow pages until told, then verify them and report. */
static void __attribute__((noreturn)) cow_child(struct region *cow, const struct options *o,
						int go_fd, int report_fd)
{
	struct child_report rep;
	struct vb_faults before;
	char go;

	if (read(go_fd, &go, 1) != 1)
		_exit(2);
	before = vb_faults_now();
	rep.bad_pages = verify_region(cow, REGION_COW, o, &rep.lost_pages);
	rep.faults = vb_faults_since(before);
	_exit(write(report_fd, &rep, sizeof(rep)) == sizeof(rep) ? 0 : 2);
}

/*
 * Reclaim the cgroup down to nothing it can swap: memory.reclaim may stop
 * short (EAGAIN), so it is asked a few times while it makes progress.
 */
static void reclaim_cgroup(void)
{
	long long current = vb_cgroup_read("memory.current"), last = -1;
	char amount[32];
	int round;

	for (round = 0; round < 4 && current != last; round++) {
		snprintf(amount, sizeof(amount), "%lld", current);
		vb_cgroup_write("memory.reclaim", amount);
		last = current;
		current = vb_cgroup_read("memory.current");
	}
}

int main(int argc, char **argv)
{
	struct options o;
	struct region reg[NR_REGIONS] = { 0 };
	struct child_report child = { 0 };
	struct vb_cmd_cost cost;
	struct vb_json j;
	long long cgroup_before = -1, cgroup_after = -1;
	long swap_used_before, swap_used_after;
	size_t index = 0, bad = 0, lost = 0, reads_failed = 0;
	struct sigaction bus = { .sa_handler = on_sigbus };
	double t0, populate_s, pageout_s;
	int go[2], report[2], status, pageout_ok = 1, child_ok;
	char *swapoff_argv[3];
	enum region_id id;
	pid_t pid;

	parse_options(argc, argv, &o);
	if (sigaction(SIGBUS, &bus, NULL))
		vb_fail_sys("sigaction(SIGBUS)");
	/*
	 * Reads that fail must cost pages of the regions only: this process's
	 * own stack and data, swapped out with them, would take the SIGBUS
	 * handler's frame down with a lost page (a SIGSEGV).  The regions,
	 * mapped after this, are not locked.
	 */
	if (o.fail_reads && mlockall(MCL_CURRENT))
		vb_fail_sys("mlockall");
	swapoff_argv[0] = o.swapoff_path;
	swapoff_argv[1] = "-a";
	swapoff_argv[2] = NULL;

	t0 = vb_now();
	for (id = 0; id < NR_REGIONS; id++) {
		if (id == REGION_VMAS)
			map_region(&reg[id], id, o.vmas * o.vma_pages, o.vma_pages, index);
		else
			map_region(&reg[id], id, o.mib[id] << 20 >> 12, 0, index);
		fill_region(&reg[id], id, &o);
		index += reg[id].pages;
	}
	if (pipe(go) || pipe(report))
		vb_fail_sys("pipe");
	pid = fork();
	if (pid < 0)
		vb_fail_sys("fork");
	if (pid == 0)
		cow_child(&reg[REGION_COW], &o, go[0], report[1]);
	populate_s = vb_now() - t0;

	t0 = vb_now();
	for (id = 0; id < NR_REGIONS; id++)
		if (reg[id].pages && vb_page_out(reg[id].base, reg[id].span * VB_PAGE_SIZE))
			pageout_ok = 0;
	if (o.use_cgroup) {
		reclaim_cgroup();
		cgroup_before = vb_cgroup_read("memory.current");
		if (vb_cgroup_write("memory.max", "max"))
			vb_fail_sys("lifting the cgroup's memory.max for swapoff");
	}
	pageout_s = vb_now() - t0;
	for (id = 0; id < NR_REGIONS; id++)
		if (id != REGION_SHMEM && reg[id].pages)
			reg[id].swapped_before = vb_swapped_pages(reg[id].base, reg[id].span);
	swap_used_before = vb_swap_used_kib();

	if (o.fail_reads && !fail_swap_device_requests(o.fail_reads))
		vb_fail("--fail-reads: no swap device is a block device");
	cost = vb_run_timed(swapoff_argv);
	if (o.fail_reads) {
		reads_failed = failed_requests(o.fail_reads);
		fail_swap_device_requests(0);
	}
	swap_used_after = vb_swap_used_kib();
	if (o.use_cgroup)
		cgroup_after = vb_cgroup_read("memory.current");

	for (id = 0; id < NR_REGIONS; id++) {
		struct vb_faults before;

		if (!reg[id].pages)
			continue;
		if (id != REGION_SHMEM)
			reg[id].swapped_after = vb_swapped_pages(reg[id].base, reg[id].span);
		t0 = vb_now();
		before = vb_faults_now();
		reg[id].bad_pages = verify_region(&reg[id], id, &o, &reg[id].lost_pages);
		reg[id].faults = vb_faults_since(before);
		reg[id].verify_s = vb_now() - t0;
		bad += reg[id].bad_pages;
		lost += reg[id].lost_pages;
	}
	child_ok = write(go[1], "g", 1) == 1 &&
		   read(report[0], &child, sizeof(child)) == sizeof(child) &&
		   waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
	bad += child.bad_pages;
	lost += child.lost_pages;

	vb_json_begin(&j, o.json_path);
	vb_json_int(&j, "seed", o.seed);
	vb_json_bool(&j, "madv_pageout", pageout_ok);
	vb_json_real(&j, "populate_s", populate_s);
	vb_json_real(&j, "pageout_s", pageout_s);
	vb_json_int(&j, "cgroup_bytes_before_swapoff", cgroup_before);
	vb_json_int(&j, "cgroup_bytes_after_swapoff", cgroup_after);
	vb_json_int(&j, "swap_used_kib_before", swap_used_before);
	vb_json_int(&j, "swap_used_kib_after", swap_used_after);
	vb_json_object(&j, "swapoff");
	vb_json_real(&j, "wall_s", cost.wall_s);
	vb_json_real(&j, "user_s", cost.user_s);
	vb_json_real(&j, "sys_s", cost.sys_s);
	vb_json_int(&j, "minor_faults", cost.minor_faults);
	vb_json_int(&j, "major_faults", cost.major_faults);
	vb_json_int(&j, "exit_status", cost.exit_status);
	vb_json_int(&j, "fail_reads", o.fail_reads);
	vb_json_int(&j, "reads_failed", reads_failed);
	vb_json_close(&j);
	for (id = 0; id < NR_REGIONS; id++) {
		vb_json_object(&j, region_names[id]);
		if (id == REGION_VMAS) {
			vb_json_int(&j, "mappings", o.vmas);
			vb_json_int(&j, "pages_per_mapping", o.vma_pages);
		} else {
			vb_json_int(&j, "mib", o.mib[id]);
		}
		vb_json_int(&j, "pages", reg[id].pages);
		if (id != REGION_SHMEM) {
			vb_json_int(&j, "swap_ptes_before_swapoff", reg[id].swapped_before);
			vb_json_int(&j, "swap_ptes_after_swapoff", reg[id].swapped_after);
		}
		vb_json_int(&j, "minor_faults_after_swapoff", reg[id].faults.minor);
		vb_json_int(&j, "major_faults_after_swapoff", reg[id].faults.major);
		vb_json_real(&j, "touch_verify_s", reg[id].verify_s);
		vb_json_int(&j, "mismatches", reg[id].bad_pages);
		vb_json_int(&j, "lost_pages", reg[id].lost_pages);
		vb_json_close(&j);
	}
	vb_json_object(&j, "cow_child");
	vb_json_bool(&j, "ok", child_ok);
	vb_json_int(&j, "minor_faults_after_swapoff", child.faults.minor);
	vb_json_int(&j, "major_faults_after_swapoff", child.faults.major);
	vb_json_int(&j, "mismatches", child.bad_pages);
	vb_json_int(&j, "lost_pages", child.lost_pages);
	vb_json_close(&j);
	vb_json_int(&j, "mismatches", bad);
	vb_json_int(&j, "lost_pages", lost);
	vb_json_end(&j);

	if (cost.exit_status)
		fprintf(stderr, "swapoff: %s -a exited with %d\n", o.swapoff_path, cost.exit_status);
	if (bad)
		fprintf(stderr, "swapoff: MISMATCH %zu bad pages\n", bad);
	/* Lost pages are what failed reads may cost, and only then. */
	if (lost && !o.fail_reads)
		fprintf(stderr, "swapoff: %zu pages lost (SIGBUS) with no read failed\n", lost);
	return cost.exit_status || bad || (lost && !o.fail_reads) || !child_ok ? 1 : 0;
}
