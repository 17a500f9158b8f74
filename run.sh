#!/usr/bin/env bash
# run.sh [CAMPAIGN] [key=value ...] [--dry-run] [--resume]
#
# The main job: plans CAMPAIGN (a file, or a name in campaigns/; default
# "standard", 75 min under TCG on 2 cores; "first-look" takes minutes), builds
# the kernels and the guest image it needs, runs every run in a fresh guest
# and writes results/<campaign>/.  --dry-run prints the plan only; --resume
# keeps finished runs and retries infrastructure failures and timeouts once.
# Exit 0 when every run is done (or unsupported by its kernel), 1 otherwise,
# 130 when interrupted (the run in progress is stopped and left to --resume).
# The body is one brace group, so bash reads the whole file before running
# any of it: editing run.sh while a campaign runs cannot derail that campaign.
{
set -uo pipefail
. "$(dirname "$0")/harness/common.sh"
. "$VB_TOP/harness/params.sh"

campaign=standard dry_run=0 resume=0 overrides=()
for arg in "$@"; do
	case $arg in
	--dry-run) dry_run=1 ;;
	--resume) resume=1 ;;
	--help|-h) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$arg' (--dry-run, --resume)" ;;
	*=*) overrides+=("$arg") ;;
	*) campaign=$arg ;;
	esac
done
file=$campaign
[ -f "$file" ] || file=$VB_TOP/campaigns/$campaign.conf
[ -f "$file" ] || die "no campaign '$campaign' (campaigns: $(cd "$VB_TOP/campaigns" && ls | sed 's/\.conf$//' | tr '\n' ' '))"
name=$(basename "$file" .conf)
out=$RESULTS_DIR/$name

"$VB_TOP/harness/setup.sh" --check || exit 1
if compgen -G "$out/runs/*/status.json" >/dev/null && [ $resume = 0 ] && [ $dry_run = 0 ]; then
	stamp=$(date +%Y%m%d-%H%M%S)
	log "moving the previous $out aside to $out.$stamp (use --resume to continue it)"
	mv "$out" "$out.$stamp"
fi
# A dry run plans into a scratch folder: it must not rewrite the plan of a
# campaign that is running or waiting to be resumed.
plan_out=$out
if [ $dry_run = 1 ]; then plan_out=$(mktemp -d) && trap 'rm -rf "$plan_out"' EXIT; fi
nruns=$("$VB_TOP/harness/plan.sh" "$file" "$plan_out" "${overrides[@]}") || exit 1
mapfile -t plan <"$plan_out/plan"

kernels_needed=$(for id in "${plan[@]}"; do sed -n 's/^kernel=//p' "$plan_out/runs/$id/params"; done | sort -u)
# past_seconds: "workload config-hash seconds" for every finished run under
# RESULTS_DIR and under build/test-results (where make test runs its
# campaigns), the measure the estimates below are made from.  The config hash
# is the run id's last part: the same on every kernel and repetition.
past_seconds() {
	local root st id roots=("$RESULTS_DIR")
	[ "$BUILD_DIR/test-results" -ef "$RESULTS_DIR" ] || roots+=("$BUILD_DIR/test-results")
	for root in "${roots[@]}"; do
		for st in "$root"/*/runs/*/status.json; do
			grep -q '"status": "done"' "$st" 2>/dev/null || continue
			id=${st%/status.json}; id=${id##*/}
			printf '%s %s %s\n' "$(sed -n 's/^workload=//p' "${st%/*}/params")" "${id##*-}" \
				"$(sed -n 's/.*"host_seconds": \([0-9.]*\).*/\1/p' "$st")"
		done
	done
}
hms() { printf '%dh%02dm' $(($1 / 3600)) $(($1 % 3600 / 60)); }

# estimate ID: sets est to the seconds run ID is expected to take and est_by
# to where that came from: the mean of finished runs of its configuration,
# else of its workload (other sizes: rougher), else its timeout.  Reads the
# run's params into P.
declare -A mean_s=()
load_estimates() {
	local key s
	mean_s=()
	while read -r key s; do mean_s[$key]=$s; done < <(past_seconds |
		awk '$3 != "" { n[$1]++; t[$1] += $3; n["@" $2]++; t["@" $2] += $3 }
		     END { for (k in n) printf "%s %d\n", k, t[k] / n[k] }')
}
estimate() {
	params_read "$plan_out/runs/$1/params"
	if est=${mean_s[@${1##*-}]:-} && [ -n "$est" ]; then est_by=config
	elif est=${mean_s[${P[workload]}]:-} && [ -n "$est" ]; then est_by=workload
	else est=${P[timeout]} est_by=timeout
	fi
}
load_estimates

if [ $dry_run = 1 ]; then
	total=0 same=0 workload=0 guessed=0
	printf '%-60s %-10s %-12s %-10s %s\n' RUN KERNEL WORKLOAD BACKEND EST
	for id in "${plan[@]}"; do
		estimate "$id"
		case $est_by in config) same=$((same + 1)) ;; workload) workload=$((workload + 1)) ;; *) guessed=$((guessed + 1)) ;; esac
		total=$((total + est))
		printf '%-60s %-10s %-12s %-10s %ss\n' "$id" "${P[kernel]}" "${P[workload]}" "${P[backend]}" "$est"
	done
	echo "$nruns runs; kernels: $(echo $kernels_needed); estimated $(hms $total) under this host's accelerator" \
		"from finished runs in $RESULTS_DIR and $BUILD_DIR/test-results: $same runs by their configuration's" \
		"mean, $workload by their workload's, $guessed without history counted at their timeout"
	exit 0
fi

for k in $kernels_needed; do
	# The -debug kernels add kernel-patches/configs/debug.config (make
	# kernels-debug), the -kasan ones kasan.config as well.
	case $k in
	baseline|vswap|baseline-debug|vswap-debug|baseline-kasan|vswap-kasan)
		make -s -C "$VB_TOP" "kernel-$k" || die "building the $k kernel failed" ;;
	esac
done
make -s -C "$VB_TOP" image || die "building the guest image failed"

# The kernels and the image in build/ follow the checkout: a test, another
# campaign or an edit of the series or of a workload rebuilds them, and a
# new image replaces the old one.  So the runs of a campaign boot copies
# kept with it, in results/<campaign>/inputs/ (the image hard-linked when it
# can be), and a resumed campaign boots the same ones again.
pin_inputs() {
	local dst=$out/inputs k image
	if [ $resume = 1 ] && [ -f "$dst/guest.json" ]; then
		log "resuming with the campaign's own kernels and image ($dst)"
	else
		rm -rf "$dst" && mkdir -p "$dst/kernels" || die "cannot create $dst"
		image=$(json_string_field "$BUILD_DIR/image/guest.json" image)
		ln -f "$image" "$dst/guest.ext4" 2>/dev/null || cp "$image" "$dst/guest.ext4" ||
			die "cannot copy the guest image into $dst"
		sed "s|\"image\": \".*\"|\"image\": \"$dst/guest.ext4\"|" "$BUILD_DIR/image/guest.json" >"$dst/guest.json"
	fi
	for k in $kernels_needed; do
		[ -f "$dst/kernels/$k/bzImage" ] && continue
		mkdir -p "$dst/kernels/$k" &&
			cp "$BUILD_DIR/kernels/$k/bzImage" "$BUILD_DIR/kernels/$k/kernel.json" "$dst/kernels/$k/" ||
			die "cannot copy the $k kernel into $dst"
	done
	export VB_KERNELS_DIR=$dst/kernels VB_IMAGE_JSON=$dst/guest.json
}
pin_inputs

done_status() { json_string_field "$1/status.json" status; }
finished_status() { case $1 in done|unsupported|failed-workload|kernel-crash) return 0 ;; esac; return 1; }
# eta_from N: the estimated time of plan runs N.. that are not finished, from
# the runs finished so far (this campaign's included: load_estimates again).
eta_from() {
	local j total=0 guessed=0
	load_estimates
	for ((j = $1 - 1; j < ${#plan[@]}; j++)); do
		finished_status "$(done_status "$out/runs/${plan[j]}")" && continue
		estimate "${plan[j]}"
		total=$((total + est))
		[ "$est_by" = timeout ] && guessed=$((guessed + 1))
	done
	printf '%s' "$(hms $total)"
	[ $guessed = 0 ] || printf ' (%d runs without history at their timeout)' $guessed
}
failed=0 i=0
for id in "${plan[@]}"; do
	i=$((i + 1))
	dir=$out/runs/$id
	st=$(done_status "$dir")
	if [ $resume = 1 ]; then
		# A timeout is retried like an infrastructure failure: on a busy
		# host a guest can run out of time through no fault of its kernel;
		# a second timeout stands.
		finished_status "$st" && continue
		case $st in failed-infra|timeout)
			[ -f "$dir/.retried" ] && continue
			touch "$dir/.retried" ;;
		esac
	fi
	eta=$(eta_from $i)
	params_read "$dir/params"
	log "run $i/${#plan[@]} kernel=${P[kernel]} wl=${P[workload]} backend=${P[backend]} rep ${P[repetition]} ETA $eta"
	forward_signals "$VB_TOP/harness/run-one.sh" "$dir/params" "$dir"
	log "run $i: $(done_status "$dir")"
	if [ "$VB_INTERRUPTED" = 1 ]; then
		log "interrupted in run $i/${#plan[@]}; '$(printf '%s ' "$0" "$campaign" "${overrides[@]}")--resume' goes on from there"
		exit 130
	fi
done
# Counted over the whole plan: a resumed campaign's earlier failures stand.
for id in "${plan[@]}"; do
	case $(done_status "$out/runs/$id") in done|unsupported) ;; *) failed=$((failed + 1)) ;; esac
done

if [ -f "$VB_TOP/analysis/__main__.py" ]; then
	(cd "$VB_TOP" && /usr/bin/python3 -m analysis report "$out") || warn "the report could not be built"
fi
log "campaign $name: ${#plan[@]} runs, $failed failed; results in $out"
[ $failed = 0 ]
exit
}
