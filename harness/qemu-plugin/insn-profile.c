// SPDX-License-Identifier: GPL-2.0
/*
 * insn-profile: a QEMU TCG plugin that counts the guest instructions run in
 * the kernel, per translation block, for a per-function profile that does
 * not change what the guest runs (no mcount, no sampling interrupt).
 *
 *   qemu-system-x86_64 ... -plugin PATH/insn-profile.so,out=FILE
 *
 * (the runner adds this for profile=insn, vswap_bench/qemu.py). *
 * At QEMU's exit FILE gets one line per block that ran at a kernel address,
 * "VADDR INSNS EXECS" (hex address, instructions in the block, times it
 * ran), and a last line "user 1 N": the N instructions run below the
 * kernel's half of the address space.  A block ends at a branch, so it lies
 * within one function: analysis/insn_profile.py sums the blocks by symbol.
 * An exception in the middle of a block counts the whole block: an
 * overcount of a few instructions a fault.
 *
 * Counting is an inline add in the translated code; run the guest with one
 * vCPU (or -icount, which runs one thread) so that no two threads add at
 * once.  The few declarations of QEMU's plugin API used here are written
 * out below, as Debian ships no qemu-plugin.h; QEMU checks the version.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* QEMU's plugin API, version 1 (QEMU 4.2 to 8.x), the parts used here. */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *data);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *data);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

EXPORT int qemu_plugin_version = 1;

#define KERNEL_HALF 0xffff800000000000ULL

struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;
};

/* Open addressing on (vaddr, insns); a block translated again adds to its slot. */
static struct block *blocks;
static size_t nr_slots = 1 << 20, nr_used;
static uint64_t user_insns;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char out_path[4096];

static struct block *find(uint64_t vaddr, uint64_t insns)
{
	size_t i = (vaddr * 0x9e3779b97f4a7c15ULL + insns) & (nr_slots - 1);

	while (blocks[i].insns && (blocks[i].vaddr != vaddr || blocks[i].insns != insns))
		i = (i + 1) & (nr_slots - 1);
	return &blocks[i];
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb), insns = qemu_plugin_tb_n_insns(tb);
	struct block *b;

	(void)id;
	if (vaddr < KERNEL_HALF) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &user_insns, insns);
		return;
	}
	pthread_mutex_lock(&lock);
	b = find(vaddr, insns);
	if (!b->insns) {
		if (2 * ++nr_used > nr_slots) {
			/* Growing would move counters the translated code adds to. */
			fprintf(stderr, "insn-profile: more than %zu kernel blocks\n", nr_slots / 2);
			abort();
		}
		b->vaddr = vaddr;
		b->insns = insns;
	}
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->execs, 1);
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	FILE *f = fopen(out_path, "w");
	size_t i;

	(void)id;
	(void)data;
	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < nr_slots; i++)
		if (blocks[i].insns && blocks[i].execs)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				blocks[i].vaddr, blocks[i].insns, blocks[i].execs);
	fprintf(f, "user 1 %" PRIu64 "\n", user_insns);
	if (fclose(f))
		perror(out_path);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	(void)info;
	if (argc != 1 || strncmp(argv[0], "out=", 4) || !argv[0][4] || strlen(argv[0] + 4) >= sizeof(out_path)) {
		fprintf(stderr, "insn-profile: usage: -plugin insn-profile.so,out=FILE\n");
		return -1;
	}
	strcpy(out_path, argv[0] + 4);
	blocks = calloc(nr_slots, sizeof(*blocks));
	if (!blocks)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
