"""The gate: turn the paired statistics of pairing.py into one outcome per row, and the rows into an exit status.

Outcomes (a row is a configuration x metric, or a configuration's "runs" when a run has no data):
  regression / improvement  the Benjamini-Hochberg adjusted p (q) of the row is at most FALSE_DISCOVERY_RATE
                            and the change is beyond the noise floor, in the worse / better direction;
                            or, for "runs", a run failed (crash, hang, workload error) on the new side only;
  no change                 the 95 % interval lies within ± the larger of the noise floor and the default floor
                            (an A/A floor is as wide as the noise, so runs as noisy as the A/A's could never
                            rule out a change of that size: it lets a smaller change be decided, not ruled out);
  inconclusive              anything else, with the reason: fewer than MIN_REPETITIONS runs on a side, a run
                            lost (or failed) on either side, an interval wider than the floor;
  descriptive               a metric no workload declared with a direction (metrics.py): shown, never judged.
All gated rows of one comparison are corrected together (their p-values through Benjamini-Hochberg).

The noise floor of a row comes from A/A runs of the same configuration when the campaign has them (two kernel
labels with the same kernel_id: the same build run twice under different names): the largest distance from 1.0
of either bound of the A/A interval. Without an A/A interval for the configuration (none, or one run on a
side) it is DEFAULT_NOISE_FLOOR.
"""
import numpy as np
import pandas as pd

from .metrics import is_headline
from .pairing import aa_pairs, compare_sides, pair_runs, run_match_columns, split_config
from .presentation import formatting as fmt
from .schema import CONFIG_COLUMNS
from .stats import MIN_REPETITIONS, benjamini_hochberg

DEFAULT_NOISE_FLOOR = 0.05  # 5 %: typical run-to-run spread of wall/sys time in a QEMU guest on a busy host
FALSE_DISCOVERY_RATE = 0.05

REGRESSION, IMPROVEMENT, NO_CHANGE, INCONCLUSIVE = "regression", "improvement", "no change", "inconclusive"
DESCRIPTIVE = "descriptive"
# The exit status of `compare`: the first of these outcomes that any gated row has decides it.
# Inconclusive is never 0: a CI job must not pass a comparison that could not decide.
EXIT_STATUS = {REGRESSION: 1, INCONCLUSIVE: 3, IMPROVEMENT: 4, NO_CHANGE: 0}
EXIT_ERROR = 2  # a usage error, input that cannot be used, or an error of the analysis itself: never 1
RUNS_METRIC = "runs"


def noise_floors(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and metric with an A/A interval: noise_floor (a fraction, e.g. 0.03)."""
    keys = list(CONFIG_COLUMNS) + ["metric"]
    floors = []
    for label_a, label_b in aa_pairs(metrics):
        aa = compare_sides(metrics, "kernel", label_a, label_b, CONFIG_COLUMNS).dropna(subset=["ci_low", "ci_high"])
        floors.append(aa[keys].assign(noise_floor=np.maximum((aa["ci_low"] - 1).abs(), (aa["ci_high"] - 1).abs())))
    if not floors:
        return pd.DataFrame(columns=keys + ["noise_floor"])
    return pd.concat(floors).groupby(keys, dropna=False, as_index=False)["noise_floor"].max()


def _counted(counts: dict) -> str:
    return ", ".join(f"{status}: {n}" for status, n in sorted(counts.items()))


def _runs_outcome(base_runs: dict, new_runs: dict, base: str, new: str) -> tuple[str, str]:
    """(outcome, reason) of a configuration's run statuses; ("", "") when every run on both sides is done."""
    if new_runs["failed"] and not base_runs["failed"]:
        failed = new_runs["failed"]
        return REGRESSION, f"{sum(failed.values())} run(s) failed on {new} ({_counted(failed)}), none on {base}"
    problems = [f"{kind} on {label} ({_counted(runs[kind])})"
                for kind in ("failed", "lost") for label, runs in ((base, base_runs), (new, new_runs)) if runs[kind]]
    return (INCONCLUSIVE, "runs " + "; ".join(problems)) if problems else ("", "")


def _metric_outcome(row, runs_reason: str, default_floor: float) -> tuple[str, str]:
    if row.higher_is_better not in (True, False):
        return DESCRIPTIVE, ""
    if runs_reason:
        return INCONCLUSIVE, runs_reason
    if min(row.base_n, row.new_n) < MIN_REPETITIONS:
        return INCONCLUSIVE, f"n={row.base_n}/{row.new_n}, below the minimum of {MIN_REPETITIONS} per side"
    if np.isnan(row.q_value):
        return INCONCLUSIVE, "no interval (a mean of 0)"
    change, floor = row.ratio - 1, row.noise_floor
    if row.q_value <= FALSE_DISCOVERY_RATE and abs(change) > floor:
        better = (change > 0) == row.higher_is_better
        return (IMPROVEMENT if better else REGRESSION), f"{100 * change:+.2f}% beyond the {100 * floor:.2f}% floor"
    margin = max(floor, default_floor)
    if 1 - margin <= row.ci_low and row.ci_high <= 1 + margin:
        # A significant change under the floor is no change, but the reader is told: an A/A group of this
        # configuration would give the floor that decides it.
        significant = f"{100 * change:+.2f}% significant, " if row.q_value <= FALSE_DISCOVERY_RATE else ""
        return NO_CHANGE, f"{significant}interval within ±{100 * margin:.2f}%"
    return INCONCLUSIVE, f"interval reaches beyond ±{100 * margin:.2f}%"


def _runs_rows(run_pairs: pd.DataFrame, base: str, new: str) -> pd.DataFrame:
    """A "runs" row for every configuration where a run has no data, carrying the outcome of the statuses."""
    rows = []
    for pair in run_pairs.to_dict("records"):
        outcome, reason = _runs_outcome(pair["base_runs"], pair["new_runs"], base, new)
        if outcome:
            rows.append(pair | {"metric": RUNS_METRIC, "unit": "runs", "base_n": pair["base_runs"]["done"],
                                "new_n": pair["new_runs"]["done"], "outcome": outcome, "reason": reason})
    return pd.DataFrame(rows)


def judge(comparison: pd.DataFrame, run_pairs: pd.DataFrame, floors: pd.DataFrame, base: str, new: str,
          match_columns, default_floor: float = DEFAULT_NOISE_FLOOR) -> pd.DataFrame:
    """The comparison with noise_floor, noise_floor_source, q_value, headline, outcome and reason; plus runs rows."""
    keys = list(CONFIG_COLUMNS) + ["metric"]
    judged = comparison.merge(floors, on=keys, how="left")
    judged["noise_floor_source"] = np.where(judged["noise_floor"].notna(), "A/A", "default")
    judged["noise_floor"] = judged["noise_floor"].fillna(default_floor)
    gated = judged["higher_is_better"].isin([True, False])
    judged["q_value"] = np.nan
    judged.loc[gated, "q_value"] = benjamini_hochberg(judged.loc[gated, "p_value"])
    runs_keys = run_match_columns(match_columns)
    reasons = {tuple(pair[key] for key in runs_keys): _runs_outcome(pair["base_runs"], pair["new_runs"], base, new)[1]
               for pair in run_pairs.to_dict("records")}
    decided = [_metric_outcome(row, reasons.get(tuple(getattr(row, key) for key in runs_keys), ""), default_floor)
               for row in judged.itertuples()]
    judged["outcome"] = [outcome for outcome, _ in decided]
    judged["reason"] = [reason for _, reason in decided]
    judged = pd.concat([_runs_rows(run_pairs, base, new).drop(columns=["base_runs", "new_runs"], errors="ignore"),
                        judged], ignore_index=True)
    judged["headline"] = [is_headline(workload, metric)
                          for workload, metric in zip(judged["workload"], judged["metric"])]
    return judged.reindex(columns=list(comparison.columns) + [
        "noise_floor", "noise_floor_source", "q_value", "headline", "outcome", "reason"])


def compare_kernels(metrics: pd.DataFrame, runs: pd.DataFrame, base: str, new: str,
                    default_floor: float = DEFAULT_NOISE_FLOOR) -> pd.DataFrame:
    """Two kernels within one campaign, matched on the experiment configuration."""
    comparison = compare_sides(metrics, "kernel", base, new, CONFIG_COLUMNS)
    run_pairs = pair_runs(runs, "kernel", base, new, CONFIG_COLUMNS)
    return judge(comparison, run_pairs, noise_floors(metrics), base, new, CONFIG_COLUMNS, default_floor)


def compare_campaigns(base_metrics: pd.DataFrame, base_runs: pd.DataFrame, new_metrics: pd.DataFrame,
                      new_runs: pd.DataFrame, default_floor: float = DEFAULT_NOISE_FLOOR) -> pd.DataFrame:
    """The same kernel label and configuration in two campaigns (e.g. before and after a change); the floor of
    a configuration is the wider of the two campaigns' A/A floors."""
    match_columns = ("kernel",) + CONFIG_COLUMNS
    metrics = pd.concat([base_metrics.assign(side="base"), new_metrics.assign(side="new")], ignore_index=True)
    runs = pd.concat([base_runs.assign(side="base"), new_runs.assign(side="new")], ignore_index=True)
    floors = pd.concat([noise_floors(base_metrics), noise_floors(new_metrics)])
    floors = floors.groupby(list(CONFIG_COLUMNS) + ["metric"], dropna=False, as_index=False)["noise_floor"].max()
    return judge(compare_sides(metrics, "side", "base", "new", match_columns),
                 pair_runs(runs, "side", "base", "new", match_columns), floors, "base", "new", match_columns,
                 default_floor)


def gated(judged: pd.DataFrame) -> pd.DataFrame:
    return judged[judged["outcome"] != DESCRIPTIVE]


def overall_outcome(judged: pd.DataFrame) -> str:
    """The outcome that sets the exit status; inconclusive when nothing was gated at all."""
    present = set(gated(judged)["outcome"])
    return next((outcome for outcome in EXIT_STATUS if outcome in present), INCONCLUSIVE)


def exit_status(judged: pd.DataFrame) -> int:
    return EXIT_STATUS[overall_outcome(judged)]


def outcome_counts(judged: pd.DataFrame) -> dict:
    """{outcome: number of rows} in EXIT_STATUS order, every outcome listed."""
    counts = gated(judged)["outcome"].value_counts()
    return {outcome: int(counts.get(outcome, 0)) for outcome in EXIT_STATUS}


def summary_line(judged: pd.DataFrame) -> str:
    """The outcome, the exit status it gives and the rows per outcome, in one line."""
    counts = ", ".join(f"{outcome}: {n}" for outcome, n in outcome_counts(judged).items())
    outcome = overall_outcome(judged)
    return f"verdict: {outcome} (exit status {EXIT_STATUS[outcome]}); rows per outcome: {counts}"


def deciding_rows(judged: pd.DataFrame) -> pd.DataFrame:
    """The gated rows that are not "no change", worst outcome first: what a reader must look at."""
    rows = gated(judged)
    rank = rows["outcome"].map(list(EXIT_STATUS).index)
    deciding = rows[rows["outcome"] != NO_CHANGE].assign(_rank=rank)
    return deciding.sort_values("_rank", kind="stable").drop(columns="_rank")


def display_verdicts(judged: pd.DataFrame, base_label: str, new_label: str, config_columns) -> pd.DataFrame:
    """The printed shape: `base ±σ% | %change [CI] mark | new ±σ%`, one row per config x metric.
    Only the configuration columns that differ between rows are shown (print split_config's common part once)."""
    varying, _ = split_config(judged, config_columns)
    runs_row = judged["metric"] == RUNS_METRIC
    return pd.DataFrame({
        **{column: judged[column] for column in varying},
        "metric": judged["metric"] + np.where(judged["headline"], " (headline)", ""),
        "unit": judged["unit"],
        f"{base_label} ±σ%": np.where(runs_row, judged["base_n"].map("{:.0f} done".format),
                                     [fmt.mean_sd_percent(m, s) for m, s in zip(judged.base_mean, judged.base_sd)]),
        "%change [95% CI]": [fmt.percent_change_ci(*v) for v in zip(judged.ratio, judged.ci_low, judged.ci_high)],
        "mark": np.where(judged["q_value"] <= FALSE_DISCOVERY_RATE, "*", ""),
        f"{new_label} ±σ%": np.where(runs_row, judged["new_n"].map("{:.0f} done".format),
                                    [fmt.mean_sd_percent(m, s) for m, s in zip(judged.new_mean, judged.new_sd)]),
        "n": judged["base_n"].map("{:.0f}".format) + "/" + judged["new_n"].map("{:.0f}".format),
        "p (Welch t)": judged["p_value"].map(fmt.p_value),
        "q (BH)": judged["q_value"].map(fmt.p_value),
        "floor": [f"{100 * floor:.1f}%" if outcome != DESCRIPTIVE and not is_runs else ""
                  for floor, outcome, is_runs in zip(judged["noise_floor"], judged["outcome"], runs_row)],
        "outcome": judged["outcome"].replace(DESCRIPTIVE, ""),
        "reason": judged["reason"],
    })
