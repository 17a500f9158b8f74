# Shared shell helpers for the vswap-bench harness.  Sourced, not executed.
# shellcheck shell=bash

VB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Absolute: they end up in files that run elsewhere (reproduce.sh, spec).
BUILD_DIR=$(realpath -ms "${BUILD_DIR:-$VB_TOP/build}")
RESULTS_DIR=$(realpath -ms "${RESULTS_DIR:-$VB_TOP/results}")
KERNEL_SRC=${KERNEL_SRC:-/usr/src/linux-source-6.12.tar.xz}
PATCHES=${PATCHES:-$VB_TOP/kernel-patches/6.12}
# The vswap variant's own config fragment: options the series adds, which a
# baseline tree (or a prefix of the series) lacks.  Empty: none.
VSWAP_CONFIG=${VSWAP_CONFIG-$VB_TOP/kernel-patches/configs/vswap.config}

die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit "${VB_DIE_CODE:-1}"; }
warn() { printf '%s: warning: %s\n' "${0##*/}" "$*" >&2; }
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# VB_PACKAGE: the command line of the host package (python3 -m vswap_bench),
# with Debian's python3 whatever is first on PATH, and this BUILD_DIR.
VB_PACKAGE=(env "PYTHONPATH=$VB_TOP${PYTHONPATH:+:$PYTHONPATH}" "BUILD_DIR=$BUILD_DIR" /usr/bin/python3 -P -m vswap_bench)
# exec_vswap_bench COMMAND ...: the package's COMMAND in place of this shell.
exec_vswap_bench() { exec "${VB_PACKAGE[@]}" "$@"; }
vswap_bench() ( exec_vswap_bench "$@" )

sha256_of() { sha256sum "$@" | awk '{print $1}'; }
sha256_str() { printf '%s' "$1" | sha256sum | awk '{print $1}'; }

# prepare_tree PRISTINE KDIR TREE_ID PATCH...: KDIR/src is PRISTINE with the
# patches applied, unless it already is the tree TREE_ID; 1 if a patch does
# not apply exactly (it and its hunks named on standard error; no tree
# left).  Files the patches leave alone are hard links to PRISTINE; GNU
# patch replaces a file it changes rather than writing through the link, so
# PRISTINE is never modified.  KDIR/obj outlives the trees and make rebuilds by mtime: a file
# that an earlier tree in KDIR patched (KDIR/patched-files) gets a copy of
# its own with a new mtime, where a link would carry PRISTINE's old one and
# make would keep the object built from the patched file.  KDIR/obj without
# that record is removed.
prepare_tree() {
	local pristine=$1 kdir=$2 tree_id=$3 p f out
	shift 3
	[ "$(cat "$kdir/src/.vb-tree" 2>/dev/null)" != "$tree_id" ] || return 0
	log "preparing $(basename "$kdir") source tree ($# patches)"
	rm -rf "$kdir/src" && mkdir -p "$kdir"
	# Objects of a tree whose patched files were never recorded: which of
	# them are stale cannot be known.
	[ -f "$kdir/patched-files" ] || rm -rf "$kdir/obj"
	cp -al "$pristine" "$kdir/src"
	rm -f "$kdir/src/.vb-extracted"
	for p in "$@"; do
		# Exactly or not at all: the series is made on this very tree, so
		# each hunk applies at its own lines with all its context.  Fuzz
		# (context lines left out) or an offset (the context found at other
		# lines, which a repeated context can make the wrong place) means
		# another tree, and a kernel that is not exactly the series'.
		if ! out=$(patch -p1 -d "$kdir/src" --forward --batch --no-backup-if-mismatch --fuzz=0 <"$p" 2>&1) ||
			grep -q 'succeeded at [0-9]* (offset' <<<"$out"; then
			printf '%s\n' "$out" >&2
			find "$kdir/src" -name '*.rej' -exec sh -c 'echo "--- $1"; cat "$1"' _ {} \; >&2
			echo "patch $(basename "$p") does not apply exactly (hunks above): neither fuzz nor an offset is taken" >&2
			rm -rf "$kdir/src"
			return 1
		fi
	done
	{ cat "$kdir/patched-files" 2>/dev/null; for p in "$@"; do sed -n 's|^+++ b/||p' "$p"; done; } |
		sort -u >"$kdir/patched-files.new" && mv "$kdir/patched-files.new" "$kdir/patched-files"
	while IFS= read -r f; do
		[ "$kdir/src/$f" -ef "$pristine/$f" ] && cp --remove-destination "$pristine/$f" "$kdir/src/$f"
	done <"$kdir/patched-files"
	echo "$tree_id" >"$kdir/src/.vb-tree"
}

# json_string_field FILE KEY: the string value of KEY in a JSON object;
# empty if absent or unreadable.
json_string_field() { vswap_bench field "$1" "$2" 2>/dev/null; }

# forward_signals CMD...: runs CMD as a child and waits for it, passing INT,
# TERM and HUP on to it as TERM; sets VB_INTERRUPTED=1 when one came.  A
# script waiting for a foreground child runs its traps only once the child
# has exited, and timeout(1) puts QEMU in a process group of its own that a
# terminal's ^C never reaches: without this, ^C on a campaign was ignored
# until the guest finished and the next run started anyway.  TERM, because a
# non-interactive shell starts its background children with INT ignored.
VB_INTERRUPTED=0
forward_signals() {
	local child rc
	# A child that outlived a runner killed outright (kill -9) would go on
	# with nobody waiting for it: it gets TERM when its parent dies.  It runs
	# in a process group of its own, which the signal stops whole: whatever
	# it started that does not pass signals on (a workload's prepare script
	# and its make) stops with it.  (setsid keeps the child's pid because a
	# script's background child is no group leader: scripts have no job
	# control.)  A signal after the child has ended is still noted: the caller
	# stops at its next look at VB_INTERRUPTED (a ^C the moment a run ended
	# once killed run.sh without a word).
	setpriv --pdeathsig TERM setsid "$@" &
	child=$!
	trap 'VB_INTERRUPTED=1; kill -TERM -- -$child 2>/dev/null' INT TERM HUP
	while :; do
		wait "$child"
		rc=$?
		# A trapped signal ends wait early; the child may still run.
		kill -0 "$child" 2>/dev/null || break
	done
	trap 'VB_INTERRUPTED=1' INT TERM HUP
	return "$rc"
}

# warnings_in FILES: the compiler warnings on stdin that are about one of
# FILES (paths from the kernel tree's top, a line each), wherever the tree
# was built from (kbuild names a source by a path relative to its object
# directory, or absolute).
warnings_in() {
	awk 'NR == FNR { if ($0 != "") files[$0] = 1; next }
	     / warning: / {
		path = $0; sub(/:.*/, "", path)
		for (f in files)
			if (path == f || substr(path, length(path) - length(f)) == "/" f) { print; next }
	     }' <(printf '%s\n' "$1") -
}

# series_sources PATCH...: the files the patches change (paths from the
# kernel tree's top, sorted, a line each).
series_sources() {
	local p
	for p in "$@"; do sed -n 's|^+++ b/\(.*\)$|\1|p' "$p"; done | sort -u
}

# kcsan_switches FILE.c...: the make arguments that turn KCSAN's
# instrumentation off everywhere but in FILEs (paths from the tree's top), a
# line each.  kbuild's per-object switch (scripts/Makefile.lib) is
# KCSAN_SANITIZE_<stem>.o, ahead of the directory's KCSAN_SANITIZE, and it is
# keyed by the stem alone: a stem may also name boot code that cannot call
# KCSAN (arch/x86/boot/memory.c beside mm/memory.c).  So each switch is "y"
# only in the directories of the FILEs of its stem, which kbuild's $(obj)
# names where the switch is expanded.
kcsan_switches() {
	local f stem
	declare -A dirs_of=()
	for f in "$@"; do
		stem=${f##*/}; stem=${stem%.c}
		dirs_of[$stem]+="${dirs_of[$stem]:+ }${f%/*}"
	done
	echo KCSAN_SANITIZE=n
	for stem in "${!dirs_of[@]}"; do
		printf 'KCSAN_SANITIZE_%s.o=$(if $(filter %s,$(obj)),y,n)\n' "$stem" "${dirs_of[$stem]}"
	done | sort
}

# series_patches DIR: the patch files of a quilt series, in order.
series_patches() {
	local dir=$1 line
	[ -f "$dir/series" ] || die "no series file in $dir"
	while IFS= read -r line; do
		line=${line%%#*}
		read -r line _ <<<"$line" || true
		[ -n "$line" ] || continue
		[ -f "$dir/$line" ] || die "series in $dir lists a missing patch: $line"
		printf '%s\n' "$dir/$line"
	done <"$dir/series"
}
