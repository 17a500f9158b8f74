#!/usr/bin/env bash
# checkpatch.sh [SERIES_DIR]: run the extracted kernel tree's checkpatch.pl
# on every patch of a series (default: PATCHES, i.e. kernel-patches/6.12).
# A patch passes when checkpatch finds no error and, if it finds warnings,
# the commit message says why they stand (it mentions "checkpatch").
# --strict CHECKs are printed for the reader but do not fail a patch.
#
# The patch is fed on stdin: given a path that git tracks, checkpatch.pl
# checks the file as source code instead of as a patch, and then reports
# every blank context line of the diff as trailing whitespace.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/harness/common.sh"
. "$top/tests/lib.sh"

series_dir=${1:-$PATCHES}
[ -f "$series_dir/series" ] || die "no series file in $series_dir"
checkpatch=$(ls "$BUILD_DIR"/src/*/scripts/checkpatch.pl 2>/dev/null | head -n1)
[ -n "$checkpatch" ] || die "no extracted kernel tree under $BUILD_DIR/src (run 'make kernels' first)"

while read -r name; do
	case $name in '' | '#'*) continue ;; esac
	patch=$series_dir/$name
	[ -f "$patch" ] || { fail "$name" "listed in the series but missing"; continue; }
	report=$(cd / && perl "$checkpatch" --no-tree --strict --terse --show-types - <"$patch" 2>/dev/null)
	errors=$(grep -c ': ERROR:' <<<"$report")
	warnings=$(grep -c ': WARNING:' <<<"$report")
	checks=$(grep -c ': CHECK:' <<<"$report")
	message=$(sed '/^---$/q' "$patch")
	if [ "$errors" -gt 0 ]; then
		fail "$name" "$errors checkpatch error(s): $(grep ': ERROR:' <<<"$report" | head -n3 | tr '\n' ' ')"
	elif [ "$warnings" -gt 0 ] && ! grep -qi checkpatch <<<"$message"; then
		fail "$name" "$warnings checkpatch warning(s) not explained in the commit message: $(grep ': WARNING:' <<<"$report" | tr '\n' ' ')"
	else
		pass "$name ($warnings explained warning(s), $checks strict check(s))"
	fi
done <"$series_dir/series"
summary checkpatch
