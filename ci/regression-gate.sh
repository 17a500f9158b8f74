#!/usr/bin/env bash
# ci/regression-gate.sh [--history DB] CAMPAIGN [key=value ...]
#
# The regression gate a CI job runs, as one command.  CAMPAIGN is either a
# campaign folder already run (results/NAME-...), which is reported and gated
# as it is, or a campaign file or name (campaigns/NAME.conf), which run.sh
# runs first (with the overrides), renaming its folder results/NAME-<UTC time>
# afterwards: the history finds every accepted campaign where it ran, so each
# job's campaign needs a folder of its own.  DB is the history (the results
# index), by default index.sqlite beside the campaign folder: keep it, and the
# accepted campaign folders, from one job to the next.
#
# Exit status, the gate's: 0 pass, 1 regression, 3 inconclusive (it says about
# how many runs a side would decide it), 4 improvement; 2 the job itself is
# broken (usage, a campaign or history that cannot be read, run.sh stopped).
# The campaign is accepted as the next base on 0 and 4 only.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
me=${0##*/}
fail() { printf '%s: %s\n' "$me" "$*" >&2; exit 2; }
analysis() { PYTHONPATH="$top${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 -m analysis "$@"; }

history=() index=()
if [ "${1:-}" = --history ]; then
	[ $# -ge 2 ] || fail "--history needs the results index (a .sqlite file)"
	history=(--history "$2") index=(--index "$2")
	shift 2
fi
[ $# -ge 1 ] || fail "usage: $me [--history DB] CAMPAIGN_FOLDER | CAMPAIGN [key=value ...]"
campaign=$1
if [ ! -d "$campaign/runs" ]; then
	# run.sh's folder for the campaign (harness/common.sh: RESULTS_DIR, default results/).
	out=${RESULTS_DIR:-$top/results}/$(basename "$campaign" .conf)
	[ ! -e "$out" ] || fail "$out exists (left by a job that did not finish?): move it away, or gate it: $me $out"
	"$top/run.sh" "$@"
	status=$?
	# 1: some run did not end done, which the gate judges (a crash on vswap is a regression).
	[ $status -le 1 ] && [ -d "$out/runs" ] || fail "run.sh $* exited $status without a campaign to gate"
	campaign=$out-$(date -u +%Y%m%dT%H%M%SZ)
	mv "$out" "$campaign" || fail "cannot rename $out to $campaign"
fi
# The report is for the reader of a failed gate; a report that cannot be built does not hide the verdict.
analysis report "$campaign" "${index[@]}" >&2 || printf '%s: warning: no report of %s\n' "$me" "$campaign" >&2
analysis gate "$campaign" "${history[@]}"
