#!/usr/bin/env bash
# make test: host-side tests, then the integration tests in QEMU.  Prints each
# suite's results and, last, one line with the totals.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp); trap 'rm -f "$log"' EXIT
start=$(date +%s)
rc=0
make -s -C "$top" unit-test 2>&1 | tee -a "$log" || rc=1
# The two kernels and the guest image build side by side (each kernel build
# runs its own make -j$(nproc)), so one's tree preparation, link and
# compression and the image's download fill the cores the other leaves
# idle; the tests then run outside that make's jobserver.
{ make -s -j3 -C "$top" kernels image && make -s -C "$top" integration-test; } 2>&1 | tee -a "$log" || rc=1
make -s -C "$top" checkpatch 2>&1 | tee -a "$log" || rc=1

# Totals from our suites' "N passed, N failed" lines and pytest's summaries.
read -r passed failed < <(awk '
	/^[a-z-]+: [0-9]+ passed, [0-9]+ failed/ { p += $2; f += $4; next }
	/^[0-9]+ (passed|failed)/ { for (i = 1; i < NF; i++) {
		if ($(i + 1) ~ /^passed/) p += $i
		if ($(i + 1) ~ /^(failed|errors?)/) f += $i } }
	END { print p + 0, f + 0 }' "$log")
[ "$failed" = 0 ] || rc=1
echo "make test took $(( ($(date +%s) - start) / 60 )) min"
echo "$passed passed, $failed failed"
exit $rc
