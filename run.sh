#!/usr/bin/env bash
# run.sh [CAMPAIGN] [key=value ...] [--dry-run] [--resume [--replan]] [--shard K/N]
#
# The main job: plans CAMPAIGN (a file, or a name in campaigns/; default
# "cover-letter", the v3 cover letter's three tables; "first-look" takes
# minutes), builds the kernels and the guest image it needs, runs every run
# in a fresh guest and writes results/<campaign>/.  --dry-run prints the plan
# only; --resume keeps finished runs and retries infrastructure failures and
# timeouts once, on the plan the folder holds (its key=value overrides unless
# others are given; a plan that changed is refused unless --replan is given
# too).
# --shard K/N runs only this host's share K of N (whole configurations); the
# shares' folders merge into one with /usr/bin/python3 -m vswap_bench merge.
# Exit 0 when every run is done (or unsupported by its kernel), 1 otherwise,
# 64 on bad input (nothing touched), 74 when the campaign folder cannot be
# written, 130 when interrupted (the run in progress is stopped and left to
# --resume).
# The body is one brace group, so bash reads the whole file before running
# any of it: editing run.sh while a campaign runs cannot derail that campaign.
{
set -uo pipefail
. "$(dirname "$0")/harness/common.sh"
usage_error() { VB_DIE_CODE=64 die "$@"; }
# Until the first run (forward_signals sets the traps from there on), a
# signal stops run.sh with one line once the step in progress has ended.
trap 'VB_DIE_CODE=130 die "interrupted before any run started; nothing of the campaign ran"' INT TERM HUP

campaign= dry_run=0 resume=0 replan=0 overrides=() shard=()
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry_run=1 ;;
	--resume) resume=1 ;;
	--replan) replan=1 ;;
	--shard)
		[ $# -ge 2 ] || usage_error "--shard needs K/N"
		[ ${#shard[@]} = 0 ] || usage_error "--shard is given twice"
		shard=(--shard "$2"); shift ;;
	--help|-h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) usage_error "unknown option '$1' (--dry-run, --resume, --replan, --shard K/N)" ;;
	*=*) overrides+=("$1") ;;
	*) [ -z "$campaign" ] || usage_error "two campaigns, '$campaign' and '$1': one at a time"; campaign=$1 ;;
	esac
	shift
done
campaign=${campaign:-cover-letter}
[ $replan = 0 ] || [ $resume = 1 ] || usage_error "--replan goes with --resume (a new campaign is planned anyway)"
file=$campaign
[ -f "$file" ] || file=$VB_TOP/campaigns/$campaign.conf
[ -f "$file" ] || usage_error "no campaign '$campaign' (campaigns: $(cd "$VB_TOP/campaigns" && ls | sed 's/\.conf$//' | tr '\n' ' '))"
name=$(basename "$file" .conf)
# The name is a folder of RESULTS_DIR and part of shell patterns and
# messages: letters, digits and . _ - only, not starting with a dot (".."
# would be RESULTS_DIR's parent).
[[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
	usage_error "campaign name '$name' (from $file): letters, digits, '.', '_' and '-' only, starting with a letter or digit"
out=$RESULTS_DIR/$name

"$VB_TOP/harness/setup.sh" --check || exit 1
if [ $dry_run = 0 ]; then
	# One run.sh per campaign: a second would move the first one's results
	# aside or run its runs twice.  The lock is beside the campaign folder,
	# which may be moved aside below, and is not passed on to the runs.
	mkdir -p "$RESULTS_DIR" && exec 9>"$RESULTS_DIR/.$name.lock" || die "cannot write in $RESULTS_DIR"
	flock -n 9 || die "campaign $name ($out) is being run by another run.sh; wait for it, or stop it and use --resume"
fi

# A resumed campaign runs the plan its folder holds: the overrides it was
# planned with (in any order), unless others are asked for with --replan;
# --replan without overrides keeps the recorded ones.
if [ $resume = 1 ] && [ -f "$out/campaign.json" ]; then
	recorded=$(vswap_bench overrides "$out/campaign.json") ||
		[ $replan = 1 ] || die "cannot read the plan of $out; '--resume --replan' plans it again"
	if [ ${#overrides[@]} = 0 ]; then
		[ -z "$recorded" ] || mapfile -t overrides <<<"$recorded"
		[ ${#overrides[@]} = 0 ] || log "resuming $out with the overrides it was planned with: ${overrides[*]}"
	elif [ $replan = 0 ] && [ "$(printf '%s\n' "${overrides[@]}" | sort)" != "$(sort <<<"$recorded")" ]; then
		usage_error "$out was planned with overrides '$(echo $recorded)', not '${overrides[*]}': resume it with" \
			"the same (or none), or add --replan to plan it again (its finished runs in the new plan are kept)"
	fi
fi

# Everything is checked before anything is touched: the campaign file, the
# overrides and the share are planned into a scratch folder first (the share
# by read_progress below).
scratch=$(mktemp -d) && trap 'rm -rf "$scratch"' EXIT || die "cannot make a scratch folder"
nruns=$("$VB_TOP/harness/plan.sh" "$file" "$scratch" "${overrides[@]}") || exit
if [ $resume = 1 ] && [ -f "$out/plan" ] && [ $replan = 0 ] && ! cmp -s "$scratch/plan" "$out/plan"; then
	usage_error "$file now plans other runs than $out holds ($(comm -13 <(sort "$out/plan") <(sort "$scratch/plan") | wc -l)" \
		"new, $(comm -23 <(sort "$out/plan") <(sort "$scratch/plan") | wc -l) no longer planned): add --replan to" \
		"plan it again (its finished runs in the new plan are kept)"
fi

# read_progress: every planned run of $plan_out: its kernel label, workload, backend,
# repetition, status, whether it is finished, its estimated seconds (and from
# what: its configuration's finished runs, its workload's or its timeout) and
# the kernel build it boots (baseline for an A/A run labelled baseline-aa), in plan
# order (this host's share of it with --shard), from vswap_bench (progress.py).  Finished runs are looked
# for under RESULTS_DIR and build/test-results, where make test runs its campaigns.
read_progress() {
	local roots=("$RESULTS_DIR") id k w b r s again ended passed e by kb lines
	[ "$BUILD_DIR/test-results" -ef "$RESULTS_DIR" ] || roots+=("$BUILD_DIR/test-results")
	# Its error is vswap_bench's one line and exit code (64 for a bad --shard).
	lines=$(vswap_bench progress "${shard[@]}" "$plan_out" "${roots[@]}") || exit
	plan=() run_kernel=() run_workload=() run_backend=() run_rep=() run_status=() run_resume=() run_ended=() run_passed=()
	run_est=() run_est_by=() run_build=()
	[ -n "$lines" ] || return 0
	while read -r id k w b r s again ended passed e by kb; do
		plan+=("$id") run_kernel+=("$k") run_workload+=("$w") run_backend+=("$b") run_rep+=("$r")
		run_status+=("$s") run_resume+=("$again") run_ended+=("$ended") run_passed+=("$passed")
		run_est+=("$e") run_est_by+=("$by") run_build+=("$kb")
	done <<<"$lines"
}
plan_out=$scratch
read_progress
if [ ${#plan[@]} = 0 ]; then
	log "share ${shard[1]} of campaign $name has no runs (its plan has $nruns runs in fewer configurations than shares); nothing to do"
	exit 0
fi
# Builds, not labels: an A/A label boots a kernel the campaign builds and pins once.
kernels_needed=$(printf '%s\n' "${run_build[@]}" | sort -u)
hms() { printf '%dh%02dm' $(($1 / 3600)) $(($1 % 3600 / 60)); }

if [ $dry_run = 1 ]; then
	total=0 same=0 workload=0 guessed=0
	printf '%-60s %-12s %-12s %-10s %s\n' RUN KERNEL WORKLOAD BACKEND EST
	for i in "${!plan[@]}"; do
		case ${run_est_by[i]} in config) same=$((same + 1)) ;; workload) workload=$((workload + 1)) ;; *) guessed=$((guessed + 1)) ;; esac
		total=$((total + run_est[i]))
		printf '%-60s %-12s %-12s %-10s %ss\n' "${plan[i]}" "${run_kernel[i]}" "${run_workload[i]}" "${run_backend[i]}" "${run_est[i]}"
	done
	echo "$nruns runs; kernels: $(echo $kernels_needed); estimated $(hms $total) under this host's accelerator" \
		"from finished runs in $RESULTS_DIR and $BUILD_DIR/test-results: $same runs by their configuration's" \
		"mean, $workload by their workload's, $guessed without history counted at their timeout"
	exit 0
fi

# VB_INPUTS=DIR boots the kernels and the image of DIR, laid out as a
# campaign's inputs/ (kernels/NAME/{bzImage,kernel.json}, guest.json), instead
# of building them here: another host's, or a test's.
if [ -n "${VB_INPUTS:-}" ]; then
	kernels_from=$VB_INPUTS/kernels image_from=$VB_INPUTS/guest.json
else
	kernels_from=$BUILD_DIR/kernels image_from=$BUILD_DIR/image/guest.json
	# The planner accepts only the kernels make builds (kernel-NAME; the
	# -debug ones add kernel-patches/configs/debug.config, -kasan kasan.config).
	for k in $kernels_needed; do
		make -s -C "$VB_TOP" "kernel-$k" || die "building the $k kernel failed"
	done
	make -s -C "$VB_TOP" image || die "building the guest image failed"
fi

# Only now, with the plan checked and the kernels and the image built, is the
# campaign folder touched.
if [ $resume = 0 ] && [ -d "$out/runs" ] && [ -n "$(find "$out/runs" -mindepth 2 -maxdepth 2 -name status.json -print -quit)" ]; then
	stamp=$(date +%Y%m%d-%H%M%S)
	log "moving the previous $out aside to $out.$stamp (use --resume to continue it)"
	mv -T "$out" "$out.$stamp" ||
		die "cannot move the previous $out aside to $out.$stamp; nothing was run (move it yourself, or --resume it)"
fi
plan_out=$out
# A new campaign's record is its own: what a folder without finished runs
# held (a plan that never ran, its commits) goes, as its inputs do below.
[ $resume = 1 ] || rm -f "$out/campaign.json"
"$VB_TOP/harness/plan.sh" "$file" "$out" "${overrides[@]}" >/dev/null || exit
read_progress

# The kernels and the image in build/ follow the checkout: a test, another
# campaign or an edit of the series or of a workload rebuilds them, and a
# new image replaces the old one.  So the runs of a campaign boot copies
# kept with it, in results/<campaign>/inputs/ (the image hard-linked when it
# can be), and a resumed campaign boots the same ones again.
pin_inputs() {
	local dst=$out/inputs k
	if [ $resume = 1 ] && [ -f "$dst/guest.json" ]; then
		log "resuming with the campaign's own kernels and image ($dst)"
	else
		rm -rf "$dst" && mkdir -p "$dst/kernels" || die "cannot create $dst"
		vswap_bench pin-image "$image_from" "$dst" || die "cannot copy the guest image into $dst"
	fi
	for k in $kernels_needed; do
		[ -f "$dst/kernels/$k/bzImage" ] && continue
		mkdir -p "$dst/kernels/$k" &&
			cp "$kernels_from/$k/bzImage" "$kernels_from/$k/kernel.json" "$dst/kernels/$k/" ||
			die "cannot copy the $k kernel into $dst"
		# Its symbols, for an instruction profile (profile=insn).
		if [ -f "$kernels_from/$k/System.map" ]; then
			cp "$kernels_from/$k/System.map" "$dst/kernels/$k/" || die "cannot copy the $k kernel's System.map into $dst"
		fi
	done
	export VB_KERNELS_DIR=$dst/kernels VB_IMAGE_JSON=$dst/guest.json
}
pin_inputs

# eta_from I: the estimated time of plan runs I.. (from 0) that are not
# finished, from the runs finished so far, this campaign's included.
eta_from() {
	local j total=0 guessed=0
	read_progress
	for ((j = $1; j < ${#plan[@]}; j++)); do
		[ "${run_resume[j]}" = keep ] && continue
		total=$((total + run_est[j]))
		[ "${run_est_by[j]}" = timeout ] && guessed=$((guessed + 1))
	done
	printf '%s' "$(hms $total)"
	[ $guessed = 0 ] || printf ' (%d runs without history at their timeout)' $guessed
}
# stop_if_interrupted N: once a signal came (in run N of the plan or after
# it), exit 130 with the way to go on.
stop_if_interrupted() {
	[ "$VB_INTERRUPTED" = 1 ] || return 0
	log "interrupted in run $1/${#plan[@]}; '$(printf '%s ' "$0" "$campaign" "${overrides[@]}" "${shard[@]}")--resume' goes on from there"
	exit 130
}
failed=0
for ((i = 0; i < ${#plan[@]}; i++)); do
	id=${plan[i]}
	dir=$out/runs/$id
	if [ $resume = 1 ]; then
		# A timeout is retried like an infrastructure failure: on a busy
		# host a guest can run out of time through no fault of its kernel;
		# a second timeout stands.
		case ${run_resume[i]} in
		keep) continue ;;
		retry-once)
			[ -f "$dir/.retried" ] && continue
			touch "$dir/.retried" ;;
		esac
	fi
	eta=$(eta_from $i)
	log "run $((i + 1))/${#plan[@]} kernel=${run_kernel[i]} wl=${run_workload[i]} backend=${run_backend[i]} rep ${run_rep[i]} ETA $eta"
	stop_if_interrupted $i
	forward_signals "${VB_PACKAGE[@]}" run-one "$dir/params" "$dir" 9>&-
	runner_exit=$?
	read_progress
	# 75 (status.py's LOCK_HELD_EXIT): a process of an earlier run holds the
	# folder; the run did not start and keeps its retry (the runner said which).
	if [ $runner_exit = 75 ]; then
		rm -f "$dir/.retried"
		log "run $((i + 1)): not run, left ${run_status[i]}"
		stop_if_interrupted $((i + 1))
		continue
	fi
	log "run $((i + 1)): ${run_status[i]}"
	stop_if_interrupted $((i + 1))
	# A run whose outcome could not be written (a full disk, a results folder
	# that became unwritable) would fail the same way for every run after it:
	# the runner exits 74 (status.py's RECORD_EXIT), or was stopped before it
	# could write an ending at all.
	if [ $runner_exit = 74 ] || [ "${run_ended[i]}" = 0 ]; then
		die "the outcome of run $((i + 1)) could not be recorded in $dir (see above); stopping the campaign"
	fi
done
stop_if_interrupted ${#plan[@]}
# Counted over the whole plan: a resumed campaign's earlier failures stand.
for passed in "${run_passed[@]}"; do
	[ "$passed" = 1 ] || failed=$((failed + 1))
done

if [ -f "$VB_TOP/analysis/__main__.py" ]; then
	# As a run: a ^C stops the report and run.sh says how to finish it.
	forward_signals env -C "$VB_TOP" /usr/bin/python3 -m analysis report "$out" 9>&- ||
		[ "$VB_INTERRUPTED" = 1 ] || warn "the report could not be built"
	if [ "$VB_INTERRUPTED" = 1 ]; then
		log "interrupted while writing the report; 'make report CAMPAIGN=$out' writes it"
		exit 130
	fi
fi
log "campaign $name: ${#plan[@]} runs, $failed failed; results in $out"
[ $failed = 0 ]
exit
}
