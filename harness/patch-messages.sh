#!/usr/bin/env bash
# patch-messages.sh [SERIES_DIR]: check the commit messages of a series
# (default: PATCHES, i.e. kernel-patches/6.12) as a maintainer reads them,
# which checkpatch.pl does not: the subject numbers the patch by its place
# in the series ("[PATCH n/N]", n counted in the series file, N its
# length), every patch has the first patch's author and that author's
# Signed-off-by, and the message names no path of the build machine or of
# this harness and cites no emulator (numbers measured under an emulator
# belong in the project's notes, not in a kernel commit).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/harness/common.sh"
. "$top/tests/lib.sh"

series_dir=${1:-$PATCHES}
patches=$(series_patches "$series_dir") || exit
total=$(grep -c . <<<"$patches")
author_of() { grep -m1 '^From: ' | sed 's/^From: //'; } # author_of <MESSAGE
author=$(author_of <"$(head -n1 <<<"$patches")")
[ -n "$author" ] || die "the first patch of $series_dir has no From: line"

# Absolute paths of a build machine, and this repository's own top-level
# directories, where a kernel path (mm/, include/) would stand.
machine_path='(^|[^[:alnum:]_.-])/(work|tmp|home|root|srv)/'
harness_path='(^|[^[:alnum:]_./-])(harness|workloads|guest-image|analysis|results|campaigns|build)/'
emulator='\b(TCG|icount|QEMU)\b'

n=0
while read -r patch; do
	n=$((n + 1))
	name=$(basename "$patch")
	# The header and message: everything before the diffstat's "---".
	message=$(sed '/^---$/q' "$patch")
	problems=()
	subject=$(grep -m1 '^Subject: ' <<<"$message")
	if [[ $subject =~ ^Subject:\ \[PATCH\ 0*([0-9]+)/0*([0-9]+)\]\  ]]; then
		[ "${BASH_REMATCH[1]}" -eq $n ] && [ "${BASH_REMATCH[2]}" -eq "$total" ] ||
			problems+=("subject numbers it ${BASH_REMATCH[1]}/${BASH_REMATCH[2]}, its place is $n/$total")
	else
		problems+=("subject is not \"[PATCH $n/$total] ...\": ${subject:-none}")
	fi
	from=$(author_of <<<"$message")
	[ "$from" = "$author" ] || problems+=("author \"$from\", the series' is \"$author\"")
	grep -qxF "Signed-off-by: $author" <<<"$message" || problems+=("no \"Signed-off-by: $author\"")
	body=$(sed '1,/^$/d' <<<"$message")
	bad=$(grep -nE "$machine_path|$harness_path" <<<"$body" | head -n2 | tr '\n' ' ')
	[ -z "$bad" ] || problems+=("a path of the build machine or harness: $bad")
	bad=$(grep -niE "$emulator" <<<"$body" | head -n2 | tr '\n' ' ')
	[ -z "$bad" ] || problems+=("an emulator cited: $bad")
	if [ ${#problems[@]} -eq 0 ]; then
		pass "$name"
	else
		joined=$(printf '%s; ' "${problems[@]}")
		fail "$name" "${joined%; }"
	fi
done <<<"$patches"
summary patch-messages
