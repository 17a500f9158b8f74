// SPDX-License-Identifier: GPL-2.0
/*
 * usemem: anonymous-memory swap throughput and free latency, after the
 * usemem/memhog runs the vswap series' reviewers reported.
 *
 * NPROC worker processes each map SIZE/NPROC of private anonymous memory and
 * go through the phases together (the parent releases every phase and times
 * it from the release to the last worker's report):
 *   touch    write every page (first-touch faults; the cgroup limit pushes
 *            the pages out as they are written)
 *   retouch  verify every page, then rewrite it (swap-in and swap-out)
 *   read     verify every page again (swap-in of the rewritten pages)
 *   free     munmap the memory (--free munmap), then exit; or exit with the
 *            memory still mapped (--free exit), so the exit path frees it
 * Pages are visited in address order (--order seq) or in a fixed shuffled
 * order (--order random).  Page contents are pagefill's mixed pages: the
 * first RANDOM-PCT percent of each page random (fixed seed), the rest the
 * --fill byte, so compressibility and same-filled pages are knobs.
 *
 * Output: JSON (--json FILE or stdout) with MB/s per phase, the free and
 * exit latencies and the number of bad pages.  Exit 0 when every page
 * verified, 1 on a mismatch, 2 on a usage or system error.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pagefill.h"
#include "vbutil.h"

/* Each worker has a pipe the parent holds open: stay well below 1024 fds. */
#define MAX_NPROC 512

enum phase { PHASE_TOUCH, PHASE_RETOUCH, PHASE_READ, PHASE_FREE, NR_PHASES };

static const char *const phase_names[NR_PHASES] = { "touch", "retouch", "read", "free" };

struct options {
	size_t size_mib;
	unsigned int nproc;
	int random_order;
	int free_by_exit;
	unsigned int random_pct;
	uint64_t seed;
	const char *json_path;
	struct vb_mix mix;
};

/* What a worker sends the parent at the end of each phase. */
struct phase_report {
	unsigned int worker;
	size_t bad_pages;
	long first_bad_page;	/* -1: none */
	long first_bad_offset;
};

struct worker {
	const struct options *o;
	unsigned int id;
	size_t first_index, pages;
	uint32_t *order;	/* page visiting order, offsets into the region */
	char *base;
	int go_fd, done_fd;
};

static const char usage[] =
	"usage: usemem [--size-mib N] [--nproc P] [--order seq|random] [--random-pct R]\n"
	"              [--fill BYTE] [--free munmap|exit] [--seed S] [--json FILE]\n";

static void handle_option(int opt, char *value, void *ctx)
{
	static const char *const orders[] = { "seq", "random", NULL };
	static const char *const frees[] = { "munmap", "exit", NULL };
	struct options *o = ctx;

	switch (opt) {
	case 's': o->size_mib = vb_parse_ulong("--size-mib", value, 1, 1UL << 22); break;
	case 'n': o->nproc = vb_parse_ulong("--nproc", value, 1, MAX_NPROC); break;
	case 'o': o->random_order = vb_parse_choice("--order", value, orders); break;
	case 'r': o->random_pct = vb_parse_ulong("--random-pct", value, 0, 100); break;
	case 'f': o->mix.fill = vb_parse_ulong("--fill", value, 0, 255); break;
	case 'F': o->free_by_exit = vb_parse_choice("--free", value, frees); break;
	case 'S': o->seed = vb_parse_ulong("--seed", value, 0, ~0UL); break;
	case 'j': o->json_path = value; break;
	}
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "size-mib", required_argument, NULL, 's' },
		{ "nproc", required_argument, NULL, 'n' },
		{ "order", required_argument, NULL, 'o' },
		{ "random-pct", required_argument, NULL, 'r' },
		{ "fill", required_argument, NULL, 'f' },
		{ "free", required_argument, NULL, 'F' },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};

	*o = (struct options){ .size_mib = 96, .nproc = 1, .random_pct = 25, .seed = 1 };
	vb_parse_args(argc, argv, longopts, handle_option, o, usage);
	o->mix.random_bytes = o->random_pct * VB_PAGE_SIZE / 100;
}

/* The region's pages in visiting order: identity, or a seeded shuffle. */
static uint32_t *visiting_order(const struct options *o, size_t pages, unsigned int worker)
{
	uint32_t *order = malloc(pages * sizeof(*order));
	uint64_t state = o->seed ^ (0x5eedULL << 32) ^ worker;
	size_t i;

	if (!order)
		vb_fail_sys("malloc");
	for (i = 0; i < pages; i++)
		order[i] = i;
	if (!o->random_order)
		return order;
	for (i = pages - 1; i > 0; i--) {
		size_t j = vb_rand64(&state) % (i + 1);
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	return order;
}

static void verify_page(struct worker *w, size_t offset, uint32_t gen, struct phase_report *r)
{
	long bad = vb_check_mixed(w->base + offset * VB_PAGE_SIZE, w->o->mix, w->o->seed,
				  w->first_index + offset, gen);

	if (bad < 0)
		return;
	if (!r->bad_pages++) {
		r->first_bad_page = w->first_index + offset;
		r->first_bad_offset = bad;
	}
}

static void run_phase(struct worker *w, enum phase p, struct phase_report *r)
{
	size_t i;

	for (i = 0; i < w->pages; i++) {
		size_t offset = w->order[i];
		char *page = w->base + offset * VB_PAGE_SIZE;

		switch (p) {
		case PHASE_TOUCH:
			vb_fill_mixed(page, w->o->mix, w->o->seed, w->first_index + offset, 0);
			break;
		case PHASE_RETOUCH:
			verify_page(w, offset, 0, r);
			vb_fill_mixed(page, w->o->mix, w->o->seed, w->first_index + offset, 1);
			break;
		case PHASE_READ:
			verify_page(w, offset, 1, r);
			break;
		default:
			break;
		}
	}
}

static void wait_for_release(struct worker *w)
{
	char go;

	if (read(w->go_fd, &go, 1) != 1)
		_exit(2);	/* the parent died: nothing left to report to */
}

static void __attribute__((noreturn)) worker_main(struct worker *w)
{
	struct phase_report r = { .worker = w->id, .first_bad_page = -1 };
	enum phase p;
	size_t len = w->pages * VB_PAGE_SIZE;

	w->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->base == MAP_FAILED)
		vb_fail_sys("mmap");
	/* Huge pages as the run's thp setting says (base pages by default). */
	vb_advise_huge_pages(w->base, len);
	w->order = visiting_order(w->o, w->pages, w->id);
	for (p = PHASE_TOUCH; p < NR_PHASES; p++) {
		if (p == PHASE_FREE && w->o->free_by_exit)
			break;
		wait_for_release(w);
		if (p == PHASE_FREE)
			munmap(w->base, len);
		else
			run_phase(w, p, &r);
		if (write(w->done_fd, &r, sizeof(r)) != sizeof(r))
			_exit(2);
	}
	/* Exit when released, so the parent times the exit itself. */
	wait_for_release(w);
	_exit(0);
}

struct phase_result {
	double seconds;
	size_t bad_pages;
	struct phase_report first_bad;
};

/*
 * Release every worker into the next phase: one byte down each worker's own
 * pipe, so a fast worker cannot take a slow one's turn.
 */
static double release_all(const int *go_fds, unsigned int nproc)
{
	/* Before the writes: a worker may finish before the parent runs again. */
	double start = vb_now();
	unsigned int i;

	for (i = 0; i < nproc; i++)
		if (write(go_fds[i], "g", 1) != 1)
			vb_fail_sys("releasing the workers");
	return start;
}

static void collect_phase(int done_fd, unsigned int nproc, double start, struct phase_result *res)
{
	struct phase_report r;
	unsigned int n;

	res->first_bad.first_bad_page = -1;
	for (n = 0; n < nproc; n++) {
		if (read(done_fd, &r, sizeof(r)) != sizeof(r))
			vb_fail("a worker died (out of memory or swap?)");
		res->bad_pages += r.bad_pages;
		if (r.bad_pages && res->first_bad.first_bad_page < 0)
			res->first_bad = r;
	}
	res->seconds = vb_now() - start;
}

static void write_json(const struct options *o, const struct phase_result *res,
		       double exit_s, size_t bad_pages)
{
	struct vb_json j;
	enum phase p;
	double mib = o->size_mib;

	vb_json_begin(&j, o->json_path);
	vb_json_int(&j, "size_mib", o->size_mib);
	vb_json_int(&j, "nproc", o->nproc);
	vb_json_str(&j, "order", o->random_order ? "random" : "seq");
	vb_json_int(&j, "random_pct", o->random_pct);
	vb_json_int(&j, "fill", o->mix.fill);
	vb_json_str(&j, "free", o->free_by_exit ? "exit" : "munmap");
	vb_json_int(&j, "seed", o->seed);
	for (p = PHASE_TOUCH; p < PHASE_FREE; p++) {
		vb_json_object(&j, phase_names[p]);
		vb_json_real(&j, "seconds", res[p].seconds);
		vb_json_real(&j, "mb_per_s", res[p].seconds > 0 ? mib * 1.048576 / res[p].seconds : 0);
		vb_json_close(&j);
	}
	if (!o->free_by_exit)
		vb_json_real(&j, "munmap_s", res[PHASE_FREE].seconds);
	vb_json_real(&j, "exit_s", exit_s);
	vb_json_real(&j, "free_s", res[PHASE_FREE].seconds + exit_s);
	vb_json_int(&j, "pages_verified", 2 * (o->size_mib << 20) / VB_PAGE_SIZE);
	vb_json_int(&j, "mismatches", bad_pages);
	for (p = PHASE_TOUCH; p < NR_PHASES; p++) {
		if (!res[p].bad_pages)
			continue;
		vb_json_object(&j, "first_bad");
		vb_json_str(&j, "phase", phase_names[p]);
		vb_json_int(&j, "worker", res[p].first_bad.worker);
		vb_json_int(&j, "page", res[p].first_bad.first_bad_page);
		vb_json_int(&j, "offset", res[p].first_bad.first_bad_offset);
		vb_json_close(&j);
		break;
	}
	vb_json_end(&j);
}

int main(int argc, char **argv)
{
	struct options o;
	struct phase_result res[NR_PHASES] = { 0 };
	int go_fds[MAX_NPROC], done[2], status;
	size_t total_pages, bad_pages = 0;
	unsigned int i;
	enum phase p;
	double start, exit_s;

	parse_options(argc, argv, &o);
	total_pages = (o.size_mib << 20) / VB_PAGE_SIZE;
	if (total_pages % o.nproc)
		vb_fail("--size-mib %zu is not a whole number of pages per process for --nproc %u",
			o.size_mib, o.nproc);
	if (pipe(done))
		vb_fail_sys("pipe");
	/* A worker that dies must not kill the parent with SIGPIPE; read() reports it. */
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < o.nproc; i++) {
		struct worker w = { .o = &o, .id = i, .first_index = i * (total_pages / o.nproc),
				    .pages = total_pages / o.nproc, .done_fd = done[1] };
		int go[2];
		pid_t pid;

		if (pipe(go))
			vb_fail_sys("pipe");
		pid = fork();
		if (pid < 0)
			vb_fail_sys("fork");
		if (pid == 0) {
			close(done[0]);
			w.go_fd = go[0];
			worker_main(&w);
		}
		close(go[0]);
		go_fds[i] = go[1];
	}
	close(done[1]);

	for (p = PHASE_TOUCH; p < NR_PHASES; p++) {
		if (p == PHASE_FREE && o.free_by_exit)
			break;
		start = release_all(go_fds, o.nproc);
		collect_phase(done[0], o.nproc, start, &res[p]);
		bad_pages += res[p].bad_pages;
	}
	start = release_all(go_fds, o.nproc);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			vb_fail("a worker failed at exit (status %#x)", status);
	exit_s = vb_now() - start;

	write_json(&o, res, exit_s, bad_pages);
	if (bad_pages)
		fprintf(stderr, "usemem: MISMATCH %zu bad pages\n", bad_pages);
	return bad_pages ? 1 : 0;
}
