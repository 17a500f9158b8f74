# vswap-bench: build two guest kernels, a guest image, run workloads in QEMU,
# analyse.  `make help` lists the targets.
BUILD_DIR ?= $(CURDIR)/build
export BUILD_DIR
CAMPAIGN ?= results/cover-letter
CFLAGS ?= -O2 -g -Wall -Wextra -Werror
PYTHON ?= /usr/bin/python3

GUEST_BIN_DIR := $(BUILD_DIR)/guest-bin
# The guest binaries go into the image and its id: -g must not embed this
# checkout's path, or two checkouts sharing BUILD_DIR rebuild each other's
# binaries into other bytes, another image id, and delete each other's image.
REPRODUCIBLE := -ffile-prefix-map=$(CURDIR)=.
HOST_TEST_DIR := $(BUILD_DIR)/host-tests
WORKLOAD_LIB := $(wildcard workloads/lib/*.c)
# workloads/NAME/NAME.c is the in-guest binary NAME.
GUEST_PROGS := $(foreach d,$(wildcard workloads/*/),$(if $(wildcard $(d)$(notdir $(d:/=)).c),$(notdir $(d:/=))))
GUEST_BINS := $(addprefix $(GUEST_BIN_DIR)/,$(GUEST_PROGS))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(HOST_TEST_DIR)/%,$(wildcard tests/unit/*.c))

.PHONY: help setup kernels kernel-baseline kernel-vswap kernels-debug kernel-baseline-debug kernel-vswap-debug \
	kernels-kasan kernel-baseline-kasan kernel-vswap-kasan \
	kernels-kcsan kernel-baseline-kcsan kernel-vswap-kcsan kernels-kcsan-strict \
	kernel-baseline-kcsan-strict kernel-vswap-kcsan-strict kernels-lockstat kernel-baseline-lockstat \
	kernel-vswap-lockstat kernel-layout \
	guest-bin image \
	test unit-test integration-test checkpatch build-check report clean distclean

help:
	@echo "The benchmark is ./run.sh [CAMPAIGN]: campaigns/cover-letter.conf by default (both"
	@echo "kernels: the v3 cover letter's sys-time, memory-overhead and swapoff tables), first-look"
	@echo "for a few minutes; ./run.sh CAMPAIGN --dry-run shows the plan and its time."
	@echo "vswap-bench targets:"
	@echo "  setup         install the Debian packages the harness needs (root)"
	@echo "  kernels       build the baseline and vswap guest kernels (build/kernels/)"
	@echo "  kernels-debug the same two kernels with kernel-patches/configs/debug.config"
	@echo "                (build/kernels/{baseline,vswap}-debug; a campaign's kernel=vswap-debug)"
	@echo "  kernels-kasan the debug kernels plus KASAN (kernel-patches/configs/kasan.config;"
	@echo "                a build of about an hour on 2 cores; kernel=vswap-kasan)"
	@echo "  kernels-kcsan the debug kernels plus KCSAN on the C files of PATCHES, in both"
	@echo "                (kernel-patches/configs/kcsan.config; kernel=vswap-kcsan)"
	@echo "  kernels-kcsan-strict  the same with KCSAN's strict rules (configs/kcsan-strict.config;"
	@echo "                kernel=vswap-kcsan-strict)"
	@echo "  kernels-lockstat  both kernels with lock statistics (configs/lockstat.config;"
	@echo "                kernel=vswap-lockstat; campaigns/contention.conf)"
	@echo "  kernel-layout the swap structure sizes of the built kernels (from their obj/ trees,"
	@echo "                nothing rebuilt) into build/kernels/NAME/layout.json and analysis/layouts/"
	@echo "  image         build the guest image (build/image/)"
	@echo "  test          unit tests, analysis tests, then the QEMU integration tests"
	@echo "  checkpatch    checkpatch.pl of the extracted tree on every patch of PATCHES, and"
	@echo "                their commit messages (numbering, author, sign-off, no machine paths)"
	@echo "  build-check   every prefix of PATCHES builds; the series builds without"
	@echo "                debugfs, without swap (mm/), on i386 and parisc64 (mm/), and with W=1 in mm/"
	@echo "                (build/build-check;"
	@echo "                minutes a prefix on 2 cores; FROM=N starts at patch N,"
	@echo "                TO=M stops at patch M and skips the whole-series builds;"
	@echo "                BOOT=1 also boots each prefix and runs swap-verify on it through"
	@echo "                zswap and the disk)"
	@echo "  report        rebuild the report of CAMPAIGN=results/<name>"
	@echo "  clean         remove build outputs but keep the extracted tree and images"
	@echo "  distclean     remove build/ entirely"
	@echo "Variables: BUILD_DIR KERNEL_SRC PATCHES CAMPAIGN VB_ACCEL=auto|kvm|tcg"

setup:
	harness/setup.sh

kernels: kernel-baseline kernel-vswap
kernel-baseline kernel-vswap: kernel-%:
	harness/setup.sh --check
	harness/build-kernel.sh $*

# A campaign names these kernel=baseline-debug, vswap-kasan, ...
kernels-debug: kernel-baseline-debug kernel-vswap-debug
kernels-kasan: kernel-baseline-kasan kernel-vswap-kasan
kernels-kcsan: kernel-baseline-kcsan kernel-vswap-kcsan
kernels-kcsan-strict: kernel-baseline-kcsan-strict kernel-vswap-kcsan-strict
kernels-lockstat: kernel-baseline-lockstat kernel-vswap-lockstat
kernel-baseline-debug kernel-vswap-debug kernel-baseline-kasan kernel-vswap-kasan \
kernel-baseline-kcsan kernel-vswap-kcsan kernel-baseline-kcsan-strict kernel-vswap-kcsan-strict \
kernel-baseline-lockstat kernel-vswap-lockstat:
	harness/setup.sh --check
	harness/build-kernel.sh $(patsubst kernel-%,%,$@)

# The overhead model (analysis/overhead_model.py) reads analysis/layouts/NAME.json:
# the sizes of the kernels as built, refreshed here from each built kernel.
LAYOUT_KERNELS ?= baseline vswap
kernel-layout:
	@for k in $(LAYOUT_KERNELS); do \
		harness/kernel-layout.sh $(BUILD_DIR)/kernels/$$k && \
		cp $(BUILD_DIR)/kernels/$$k/layout.json analysis/layouts/$$k.json || exit 1; \
	done

guest-bin: $(GUEST_BINS)
.SECONDEXPANSION:
$(GUEST_BIN_DIR)/%: $$(wildcard workloads/%/*.c) $(WORKLOAD_LIB) $(wildcard workloads/lib/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(REPRODUCIBLE) -Iworkloads/lib -o $@ $(filter %.c,$^)

image: guest-bin
	harness/setup.sh --check
	guest-image/build-image.sh $(GUEST_BIN_DIR)

$(HOST_TEST_DIR)/%: tests/unit/%.c $(WORKLOAD_LIB) $(wildcard workloads/lib/*.h) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iworkloads/lib -o $@ $< $(WORKLOAD_LIB)

unit-test: $(UNIT_TESTS) guest-bin
	tests/run-unit.sh $(UNIT_TESTS)
	$(PYTHON) -m pytest -q analysis/tests
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/host

integration-test: kernels image
	tests/integration.sh

# The extracted tree comes with the kernel builds.  Both checks run, whichever fails.
checkpatch: kernel-vswap
	harness/checkpatch.sh; rc=$$?; harness/patch-messages.sh && exit $$rc

build-check: kernel-baseline $(if $(BOOT),image)
	harness/build-check.sh --from $(or $(FROM),1) $(if $(TO),--to $(TO)) $(if $(BOOT),--boot)

test:
	harness/setup.sh --check
	tests/run-all.sh

report:
	$(PYTHON) -m analysis report $(CAMPAIGN)

clean:
	rm -rf $(GUEST_BIN_DIR) $(HOST_TEST_DIR) $(BUILD_DIR)/kernels/*/obj

distclean:
	rm -rf $(BUILD_DIR)
