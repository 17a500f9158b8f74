// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "pagefill.h"

const char *const vb_class_names[VB_NR_CLASSES] = {
	[VB_CLASS_RANDOM] = "random",
	[VB_CLASS_TEXT] = "text",
	[VB_CLASS_ZERO] = "zero",
	[VB_CLASS_SAME] = "same",
};

uint64_t vb_rand64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t page_key(uint64_t seed, size_t index, uint32_t gen)
{
	uint64_t s = seed ^ ((uint64_t)gen << 48) ^ (uint64_t)index * 0x2545f4914f6cdd1dULL;

	return vb_rand64(&s);
}

unsigned int vb_parse_classes(const char *list)
{
	unsigned int mask = 0;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		int i, found = 0;

		for (i = 0; i < VB_NR_CLASSES; i++) {
			if (strlen(vb_class_names[i]) == len &&
			    !strncmp(p, vb_class_names[i], len)) {
				mask |= 1u << i;
				found = 1;
			}
		}
		if (!found)
			return 0;
		p += len;
		if (*p == ',')
			p++;
	}
	return mask;
}

enum vb_page_class vb_page_class_of(unsigned int mask, size_t index)
{
	int enabled[VB_NR_CLASSES], n = 0, i;

	for (i = 0; i < VB_NR_CLASSES; i++)
		if (mask & (1u << i))
			enabled[n++] = i;
	return (enum vb_page_class)enabled[index % n];
}

/*
 * Text pages are 64-byte lines of a header and letters from a 16-letter
 * alphabet: about 4 bits of entropy per byte, but few repeats for an LZ
 * compressor to find, so lzo only gets them to about 3.5 KiB (measured in the
 * features campaign).  zswap stores them, and its pool fills about as fast as
 * the pages go out.
 */
static void fill_text(unsigned char *p, uint64_t key, size_t index)
{
	static const char alphabet[] = "etaoinshrdlucmfw";
	uint64_t s = key, r = 0;
	int line, i, bits = 0;

	for (line = 0; line < VB_PAGE_SIZE / 64; line++) {
		unsigned char *l = p + line * 64;
		static const char hex[] = "0123456789abcdef";

		for (i = 0; i < 12; i++)
			l[i] = hex[(index >> (44 - 4 * i)) & 0xf];
		l[12] = ':';
		for (i = 13; i < 63; i++) {
			if (!bits) {
				r = vb_rand64(&s);
				bits = 64;
			}
			l[i] = alphabet[r & 0xf];
			r >>= 4;
			bits -= 4;
		}
		l[63] = '\n';
	}
}

void vb_fill_page(void *page, enum vb_page_class cls, uint64_t seed,
		  size_t index, uint32_t gen)
{
	uint64_t key = page_key(seed, index, gen);
	uint64_t *w = page;
	size_t i;

	switch (cls) {
	case VB_CLASS_RANDOM:
		for (i = 0; i < VB_PAGE_SIZE / 8; i++)
			w[i] = vb_rand64(&key);
		break;
	case VB_CLASS_TEXT:
		fill_text(page, key, index);
		break;
	case VB_CLASS_ZERO:
		memset(page, 0, VB_PAGE_SIZE);
		break;
	case VB_CLASS_SAME:
		/* Never zero: that would be the zero class. */
		key |= 1;
		for (i = 0; i < VB_PAGE_SIZE / 8; i++)
			w[i] = key;
		break;
	default:
		break;
	}
}

/* -1 when @got equals @want, else the offset of the first differing byte. */
static long first_difference(const unsigned char *want, const unsigned char *got)
{
	long i;

	if (!memcmp(want, got, VB_PAGE_SIZE))
		return -1;
	for (i = 0; i < VB_PAGE_SIZE; i++)
		if (want[i] != got[i])
			break;
	return i;
}

long vb_check_page(const void *page, enum vb_page_class cls, uint64_t seed,
		   size_t index, uint32_t gen)
{
	unsigned char want[VB_PAGE_SIZE];

	vb_fill_page(want, cls, seed, index, gen);
	return first_difference(want, page);
}

void vb_fill_mixed(void *page, struct vb_mix mix, uint64_t seed, size_t index,
		   uint32_t gen)
{
	uint64_t key = page_key(seed, index, gen), word;
	unsigned char *p = page;
	unsigned int done = 0, n = mix.random_bytes < VB_PAGE_SIZE ? mix.random_bytes : VB_PAGE_SIZE;

	while (done < n) {
		unsigned int chunk = n - done < sizeof(word) ? n - done : sizeof(word);

		word = vb_rand64(&key);
		memcpy(p + done, &word, chunk);
		done += chunk;
	}
	memset(p + n, mix.fill, VB_PAGE_SIZE - n);
}

long vb_check_mixed(const void *page, struct vb_mix mix, uint64_t seed,
		    size_t index, uint32_t gen)
{
	unsigned char want[VB_PAGE_SIZE];

	vb_fill_mixed(want, mix, seed, index, gen);
	return first_difference(want, page);
}
