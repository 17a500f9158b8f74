// SPDX-License-Identifier: GPL-2.0
/*
 * rewrite-race: pages that change between zero-filled and not while they
 * are being paged out, to catch a swap entry whose backing and contents
 * disagree.
 *
 * A region of private anonymous memory is split between REWRITERS threads.
 * Each one goes round its own pages for DURATION seconds: it reads a page
 * (which faults it back in, from the swap cache if reclaim has not finished
 * with it yet) and checks it, then rewrites it, alternately with zeroes and
 * with a mixed page of a new generation, and every BATCH pages it asks for
 * the batch it just wrote to be paged out (MADV_PAGEOUT).  One more thread
 * pages out the whole region in a loop, so reclaim and faults on the same
 * pages overlap all the time.  A page that reads back anything but what its
 * owner last wrote is a bad page.
 *
 * The window this aims at: a folio that went to zswap (or a device) is
 * still in the swap cache when it is faulted back in and rewritten, and is
 * then written out again with other contents, so the entry's old copy must
 * be dropped whatever the new backing is.
 *
 * Output: JSON (--json FILE or stdout): pages, rewrites, reads, page-out
 * calls, bad pages and the first bad page.  Exit 0 when every read verified,
 * 1 on a mismatch, 2 on a usage or system error.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagefill.h"
#include "vbutil.h"

#define MAX_REWRITERS 64

struct options {
	size_t size_mib;
	unsigned int rewriters;
	unsigned int duration_s;
	unsigned int min_passes;
	unsigned int batch;
	unsigned int random_pct;
	uint64_t seed;
	const char *json_path;
	struct vb_mix mix;
};

/* What each page holds now: zeroes, or the mixed page of generation gen. */
struct page_state {
	uint32_t gen;
	uint8_t zero;
};

struct rewriter {
	const struct options *o;
	char *base;
	struct page_state *state;
	size_t first, pages;
	double deadline;
	/* Results, read by main once the thread is joined. */
	size_t reads, rewrites, pageouts, bad_pages;
	long first_bad_page;
};

static atomic_int stop_pageout;

static const char usage[] =
	"usage: rewrite-race [--size-mib N] [--rewriters T] [--duration-s D] [--min-passes P]\n"
	"                    [--batch B] [--random-pct R] [--seed S] [--json FILE]\n";

static void handle_option(int opt, char *value, void *ctx)
{
	struct options *o = ctx;

	switch (opt) {
	case 's': o->size_mib = vb_parse_ulong("--size-mib", value, 1, 1UL << 20); break;
	case 't': o->rewriters = vb_parse_ulong("--rewriters", value, 1, MAX_REWRITERS); break;
	case 'd': o->duration_s = vb_parse_ulong("--duration-s", value, 1, 86400); break;
	case 'p': o->min_passes = vb_parse_ulong("--min-passes", value, 0, 1U << 20); break;
	case 'b': o->batch = vb_parse_ulong("--batch", value, 1, 1U << 16); break;
	case 'r': o->random_pct = vb_parse_ulong("--random-pct", value, 1, 100); break;
	case 'S': o->seed = vb_parse_ulong("--seed", value, 0, ~0UL); break;
	case 'j': o->json_path = value; break;
	}
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "size-mib", required_argument, NULL, 's' },
		{ "rewriters", required_argument, NULL, 't' },
		{ "duration-s", required_argument, NULL, 'd' },
		{ "min-passes", required_argument, NULL, 'p' },
		{ "batch", required_argument, NULL, 'b' },
		{ "random-pct", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};

	*o = (struct options){ .size_mib = 64, .rewriters = 2, .duration_s = 60,
			       .batch = 16, .random_pct = 25, .seed = 1 };
	vb_parse_args(argc, argv, longopts, handle_option, o, usage);
	/* The non-zero pages must never be zero-filled: at least one random byte. */
	o->mix.random_bytes = o->random_pct * VB_PAGE_SIZE / 100;
}

/* -1 if page @i holds what its state says, else the first byte that differs. */
static long check_page(const struct rewriter *w, size_t i)
{
	const unsigned char *page = (const unsigned char *)w->base + i * VB_PAGE_SIZE;
	size_t off;

	if (!w->state[i].zero)
		return vb_check_mixed(page, w->o->mix, w->o->seed, i, w->state[i].gen);
	for (off = 0; off < VB_PAGE_SIZE; off++)
		if (page[off])
			return off;
	return -1;
}

static void rewrite_page(struct rewriter *w, size_t i)
{
	char *page = w->base + i * VB_PAGE_SIZE;
	struct page_state *s = &w->state[i];

	if (s->zero) {
		s->gen++;
		vb_fill_mixed(page, w->o->mix, w->o->seed, i, s->gen);
	} else {
		memset(page, 0, VB_PAGE_SIZE);
	}
	s->zero = !s->zero;
	w->rewrites++;
}

static void *rewriter_main(void *arg)
{
	struct rewriter *w = arg;
	size_t i, batch_start = w->first;
	unsigned int passes = 0;

	/*
	 * For the duration, and past it until every page was rewritten
	 * min_passes times: how much churn a run gets must not depend on
	 * how fast the host runs the guest.
	 */
	while (vb_now() < w->deadline || passes < w->o->min_passes) {
		for (i = w->first; i < w->first + w->pages; i++) {
			long bad = check_page(w, i);

			w->reads++;
			if (bad >= 0) {
				if (!w->bad_pages++)
					w->first_bad_page = i;
				fprintf(stderr, "rewrite-race: page %zu (%s, gen %u) differs at byte %ld\n",
					i, w->state[i].zero ? "zero" : "mixed", w->state[i].gen, bad);
			}
			rewrite_page(w, i);
			if (i + 1 - batch_start == w->o->batch || i + 1 == w->first + w->pages) {
				if (vb_page_out(w->base + batch_start * VB_PAGE_SIZE,
						(i + 1 - batch_start) * VB_PAGE_SIZE) == 0)
					w->pageouts++;
				batch_start = i + 1;
			}
		}
		batch_start = w->first;
		passes++;
	}
	return NULL;
}

struct pageout_loop {
	char *base;
	size_t len, calls;
};

static void *pageout_main(void *arg)
{
	struct pageout_loop *p = arg;

	while (!atomic_load(&stop_pageout)) {
		if (vb_page_out(p->base, p->len))
			break;
		p->calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct rewriter w[MAX_REWRITERS];
	struct pageout_loop pl;
	pthread_t tids[MAX_REWRITERS], pageout_tid;
	struct page_state *state;
	struct options o;
	size_t pages, i, reads = 0, rewrites = 0, pageouts = 0, bad_pages = 0;
	long first_bad_page = -1;
	struct vb_json j;
	double start;
	char *base;
	int err;

	parse_options(argc, argv, &o);
	pages = (o.size_mib << 20) / VB_PAGE_SIZE;
	if (pages < o.rewriters)
		vb_fail("--size-mib %zu has fewer pages than --rewriters %u", o.size_mib, o.rewriters);
	base = mmap(NULL, pages * VB_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		vb_fail_sys("mmap");
	state = calloc(pages, sizeof(*state));
	if (!state)
		vb_fail_sys("calloc");
	for (i = 0; i < pages; i++)
		vb_fill_mixed(base + i * VB_PAGE_SIZE, o.mix, o.seed, i, 0);

	start = vb_now();
	pl = (struct pageout_loop){ .base = base, .len = pages * VB_PAGE_SIZE };
	err = pthread_create(&pageout_tid, NULL, pageout_main, &pl);
	if (err)
		vb_fail("pthread_create: %s", strerror(err));
	for (i = 0; i < o.rewriters; i++) {
		size_t share = pages / o.rewriters;

		w[i] = (struct rewriter){ .o = &o, .base = base, .state = state,
					  .first = i * share,
					  .pages = i + 1 == o.rewriters ? pages - i * share : share,
					  .deadline = start + o.duration_s, .first_bad_page = -1 };
		err = pthread_create(&tids[i], NULL, rewriter_main, &w[i]);
		if (err)
			vb_fail("pthread_create: %s", strerror(err));
	}
	for (i = 0; i < o.rewriters; i++) {
		pthread_join(tids[i], NULL);
		reads += w[i].reads;
		rewrites += w[i].rewrites;
		pageouts += w[i].pageouts;
		bad_pages += w[i].bad_pages;
		if (w[i].bad_pages && first_bad_page < 0)
			first_bad_page = w[i].first_bad_page;
	}
	atomic_store(&stop_pageout, 1);
	pthread_join(pageout_tid, NULL);

	vb_json_begin(&j, o.json_path);
	vb_json_int(&j, "pages", pages);
	vb_json_int(&j, "rewriters", o.rewriters);
	vb_json_real(&j, "seconds", vb_now() - start);
	vb_json_int(&j, "reads", reads);
	vb_json_int(&j, "rewrites", rewrites);
	vb_json_int(&j, "batch_pageouts", pageouts);
	vb_json_int(&j, "region_pageouts", pl.calls);
	vb_json_int(&j, "swapped_pages_at_end", vb_swapped_pages(base, pages));
	vb_json_int(&j, "bad_pages", bad_pages);
	vb_json_int(&j, "first_bad_page", first_bad_page);
	vb_json_end(&j);
	if (bad_pages)
		fprintf(stderr, "rewrite-race: MISMATCH %zu bad pages\n", bad_pages);
	return bad_pages ? 1 : 0;
}
