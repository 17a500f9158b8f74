#!/usr/bin/env bash
# The integration tests: run the test campaigns on real kernels in QEMU, then
# check what they wrote (tests/integration/).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export RESULTS_DIR=${BUILD_DIR:-$top/build}/test-results
rm -rf "$RESULTS_DIR"

"$top/run.sh" "$top/tests/campaigns/integration.conf"
echo "integration campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/verify.conf"
echo "verify campaign: run.sh exit $? (1 expected: test_zswap has a case failing on every kernel here)"
"$top/run.sh" "$top/tests/campaigns/crash.conf"
echo "crash campaign: run.sh exit $? (1 expected: it has crashed runs)"
"$top/run.sh" "$top/tests/campaigns/resume.conf"
echo "resume campaign: run.sh exit $? (1 expected: a run times out)"
for pass in 1 2; do
	"$top/run.sh" "$top/tests/campaigns/resume.conf" --resume 2>&1 | tee "$RESULTS_DIR/resume-$pass.log"
done
# ^C once the guest's agent is up: QEMU is stopped, run.sh exits 130 and
# --resume runs the interrupted run again.  Job control gives run.sh a
# process group of its own, as a terminal does, so the INT sent to that group
# is what ^C sends (a background job without it would ignore INT).  env
# restores INT's default for run.sh: when make test itself was started in the
# background (nohup make test &), everything below inherits INT ignored, and
# a shell cannot trap a signal ignored on entry.
set -m
env --default-signal=INT "$top/run.sh" "$top/tests/campaigns/interrupt.conf" >"$RESULTS_DIR/interrupt.log" 2>&1 &
runner=$!
set +m
for _ in $(seq 900); do
	grep -qs '^@@VB-END boot' "$RESULTS_DIR"/interrupt/runs/*/channel.raw && break
	sleep 1
done
kill -INT -- -"$runner"
wait "$runner"
echo "run.sh exit $?; QEMU left running: $(pgrep -fc "$RESULTS_DIR/interrupt/")" >>"$RESULTS_DIR/interrupt.log"
cp "$RESULTS_DIR"/interrupt/runs/*/status.json "$RESULTS_DIR/interrupted-status.json"
"$top/run.sh" "$top/tests/campaigns/interrupt.conf" --resume 2>&1 | tee "$RESULTS_DIR/interrupt-resume.log"
"$top/run.sh" quick
echo "quick campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/pressure.conf"
echo "pressure campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/features.conf"
echo "features campaign: run.sh exit $? (1 expected: the baseline's zswap-only run is OOM-killed)"
"$top/run.sh" "$top/tests/campaigns/memcg.conf"
echo "memcg campaign: run.sh exit $? (1 expected: runs with swap.max=0 and zswap.max=0 are OOM-killed)"
"$top/run.sh" "$top/tests/campaigns/no-backend.conf"
echo "no-backend campaign: run.sh exit $? (1 expected: every run is OOM-killed)"
"$top/run.sh" "$top/tests/campaigns/space.conf"
echo "space campaign: run.sh exit $? (1 expected: the run with a full virtual swap space is OOM-killed)"
"$top/run.sh" "$top/tests/campaigns/space-boot.conf"
echo "space-boot campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/overhead.conf"
echo "overhead campaign: run.sh exit $? (5 runs done, the baseline's zswap-only unsupported)"
"$top/run.sh" "$top/tests/campaigns/profile.conf"
echo "profile campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/ram-disk.conf"
echo "ram-disk campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/readahead.conf"
echo "readahead campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/swapoff.conf"
echo "swapoff campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/swapoff-lost.conf"
echo "swapoff-lost campaign: run.sh exit $?"
"$top/run.sh" "$top/tests/campaigns/thp.conf"
echo "thp campaign: run.sh exit $? (7 runs done, the baseline's zswap-only unsupported)"
"$top/run.sh" "$top/tests/campaigns/thrash.conf"
echo "thrash campaign: run.sh exit $? (1 expected: its run ends at its limit or by the OOM killer)"

first=$(head -n1 "$RESULTS_DIR/crash/plan")
"$RESULTS_DIR/crash/runs/$first/reproduce.sh" "$RESULTS_DIR/reproduced"
echo "reproduce.sh of $first: exit $?"

VB_TEST_RESULTS=$RESULTS_DIR /usr/bin/python3 -m pytest -q -p no:cacheprovider "$top/tests/integration"
