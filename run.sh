#!/usr/bin/env bash
# run.sh [CAMPAIGN] [key=value ...] [--dry-run] [--resume]
#
# The main job: plans CAMPAIGN (a file, or a name in campaigns/; default
# "default"), builds the kernels and the guest image it needs, runs every run
# in a fresh guest and writes results/<campaign>/.  --dry-run prints the plan
# only; --resume keeps finished runs and retries infrastructure failures once.
# Exit 0 when every run is done (or unsupported by its kernel), 1 otherwise.
# The body is one brace group, so bash reads the whole file before running
# any of it: editing run.sh while a campaign runs cannot derail that campaign.
{
set -uo pipefail
. "$(dirname "$0")/harness/common.sh"
. "$VB_TOP/harness/params.sh"

campaign=default dry_run=0 resume=0 overrides=()
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
nruns=$("$VB_TOP/harness/plan.sh" "$file" "$out" "${overrides[@]}") || exit 1
mapfile -t plan <"$out/plan"

kernels_needed=$(for id in "${plan[@]}"; do sed -n 's/^kernel=//p' "$out/runs/$id/params"; done | sort -u)
# past_seconds: "workload seconds" for every finished run under RESULTS_DIR,
# the measure the estimates below are made from.
past_seconds() {
	local st
	for st in "$RESULTS_DIR"/*/runs/*/status.json; do
		grep -q '"status": "done"' "$st" 2>/dev/null || continue
		printf '%s %s\n' "$(sed -n 's/^workload=//p' "${st%/*}/params")" \
			"$(sed -n 's/.*"host_seconds": \([0-9.]*\).*/\1/p' "$st")"
	done
}
hms() { printf '%dh%02dm' $(($1 / 3600)) $(($1 % 3600 / 60)); }

if [ $dry_run = 1 ]; then
	declare -A mean_s=()
	while read -r w s; do mean_s[$w]=$s; done < <(past_seconds |
		awk '$2 != "" { n[$1]++; t[$1] += $2 } END { for (w in n) printf "%s %d\n", w, t[w] / n[w] }')
	total=0 guessed=0
	printf '%-60s %-10s %-12s %-10s %s\n' RUN KERNEL WORKLOAD BACKEND EST
	for id in "${plan[@]}"; do
		params_read "$out/runs/$id/params"
		est=${mean_s[${P[workload]}]:-}
		[ -n "$est" ] || { est=${P[timeout]}; guessed=$((guessed + 1)); }
		total=$((total + est))
		printf '%-60s %-10s %-12s %-10s %ss\n' "$id" "${P[kernel]}" "${P[workload]}" "${P[backend]}" "$est"
	done
	echo "$nruns runs; kernels: $(echo $kernels_needed); estimated $(hms $total) under this host's accelerator" \
		"(mean of finished runs per workload in $RESULTS_DIR; $guessed runs without history counted at their timeout)"
	exit 0
fi

for k in $kernels_needed; do
	case $k in baseline|vswap) make -s -C "$VB_TOP" "kernel-$k" || die "building the $k kernel failed" ;; esac
done
make -s -C "$VB_TOP" image || die "building the guest image failed"

done_status() { sed -n 's/.*"status": "\(.*\)".*/\1/p' "$1/status.json" 2>/dev/null; }
failed=0 i=0 spent=0 timed=0
for id in "${plan[@]}"; do
	i=$((i + 1))
	dir=$out/runs/$id
	st=$(done_status "$dir")
	if [ $resume = 1 ]; then
		case $st in done|unsupported|failed-workload|kernel-crash|timeout) continue ;; esac
		[ "$st" = failed-infra ] && [ -f "$dir/.retried" ] && continue
		[ "$st" = failed-infra ] && touch "$dir/.retried"
	fi
	params_read "$dir/params"
	eta=""
	[ $timed -gt 0 ] && eta=" ETA $(hms $((spent / timed * (${#plan[@]} - i + 1))))"
	log "run $i/${#plan[@]} kernel=${P[kernel]} wl=${P[workload]} backend=${P[backend]} rep ${P[repetition]}$eta"
	t0=$(date +%s)
	"$VB_TOP/harness/run-one.sh" "$dir/params" "$dir"
	rc=$?
	spent=$((spent + $(date +%s) - t0)) timed=$((timed + 1))
	case $rc in 0|5) ;; *) failed=$((failed + 1)) ;; esac
	log "run $i: $(done_status "$dir")"
done

if [ -f "$VB_TOP/analysis/__main__.py" ]; then
	(cd "$VB_TOP" && /usr/bin/python3 -m analysis report "$out") || warn "the report could not be built"
fi
log "campaign $name: ${#plan[@]} runs, $failed failed; results in $out"
[ $failed = 0 ]
exit
}
