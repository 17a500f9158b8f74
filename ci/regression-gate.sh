#!/usr/bin/env bash
# ci/regression-gate.sh [--history DB] CAMPAIGN [key=value ...]
#
# The regression gate a CI job runs, as one command.  CAMPAIGN is either a
# campaign folder already run (results/NAME-...), which is reported and gated
# as it is, or a campaign file or name (campaigns/NAME.conf), which run.sh
# runs first (with the overrides) in a folder of the job's own, then moved to
# results/NAME-<UTC time>: the history finds every accepted campaign where it
# ran, so each job's campaign needs a folder of its own.  DB is the history
# (the results index), by default index.sqlite beside the campaign folder:
# keep it, and the accepted campaign folders, from one job to the next.
#
# Exit status, the gate's: 0 pass, 1 regression, 3 inconclusive (it says about
# how many runs a side would decide it), 4 improvement; 2 the job itself is
# broken (usage, a campaign or history that cannot be read, run.sh stopped
# other than with 1, or with 1 before any run).  run.sh exits 1 when a run
# failed and also when it died (a build, a record it could not write): the
# gate judges what ran, and a campaign with runs that did not run or end is
# incomplete, 3 at best.  The campaign is accepted as the next base on 0 and
# 4 only.
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
	# run.sh runs the campaign with a RESULTS_DIR of this job's own: another
	# job or run.sh of the same campaign on the same results folder has its
	# own folder and lock, and run.sh's report indexes the campaign there, not
	# in the history under a path the move below leaves.  The job's folder is
	# inside the results folder (harness/common.sh: RESULTS_DIR, default
	# results/), so that the move is a rename on one file system.
	results=${RESULTS_DIR:-$top/results} name=$(basename "$campaign" .conf)
	job=$(mkdir -p "$results" && mktemp -d "$results/.$name.job.XXXXXX") || fail "cannot make a job folder in $results"
	RESULTS_DIR=$job "$top/run.sh" "$@"
	status=$?
	moved=
	if [ -d "$job/$name/runs" ]; then
		moved=$results/$name-$(date -u +%Y%m%dT%H%M%SZ)
		mv -T "$job/$name" "$moved" || fail "cannot move $job/$name to $moved: the campaign is left there"
		printf '%s: the campaign is %s\n' "$me" "$moved" >&2
	fi
	rm -rf "$job"
	[ -n "$moved" ] || fail "run.sh $* exited $status without a campaign to gate"
	[ $status -le 1 ] || fail "run.sh $* exited $status; its campaign, not gated, is $moved"
	campaign=$moved
fi
# The report is for the reader of a failed gate; a report that cannot be built does not hide the verdict.
analysis report "$campaign" "${index[@]}" >&2 || printf '%s: warning: no report of %s\n' "$me" "$campaign" >&2
analysis gate "$campaign" "${history[@]}"
