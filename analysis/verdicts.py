"""Turn the paired statistics of pairing.py into one outcome per row, and the rows into an exit status.

Outcomes (a row is a configuration x metric, or a configuration's "runs"):
  regression / improvement    the Benjamini-Hochberg adjusted p (q) of the row is at most FALSE_DISCOVERY_RATE
                              and the change is beyond the row's margin, in the worse / better direction;
                              or, for "runs", a run failed (crash, hang, workload error) on the new side only;
  possible regression /       q is at most FALSE_DISCOVERY_RATE (the interval excludes 1) but the change is
  possible improvement        within the margin: real, and smaller than what matters;
  no change                   not significant, and the 95 % interval lies within ± the no-change zone: the
                              margin declared in metrics.conf, else the larger of the margin and the default
                              (an A/A floor is as wide as the noise, so runs as noisy as the A/A's could never
                              rule out a change of that size: it lets a smaller change be decided, not ruled
                              out);
  inconclusive                anything else, with the reason: fewer than MIN_REPETITIONS runs on a side, a run
                              lost (or failed) on either side, a gated metric without a value on a side, an
                              interval reaching beyond the zone (with about how many runs would decide it);
  descriptive                 not gated: a metric without a direction (metrics.py), or with headlines_only
                              (the regression gate) one that is not its workload's headline; shown, never judged.
The margin of a row is the MARGIN its workload's metrics.conf declares for the metric, else the A/A noise
floor of the configuration where the campaign has one, else the comparison's default. The noise floor comes
from A/A runs of the same configuration (two kernel labels with the same kernel_id: the same build run twice
under different names): the largest distance from 1.0 of either bound of the A/A interval.
The gated rows of each kernel under test are one family for Benjamini-Hochberg: rows of other kernels (the
unchanged controls of a comparison of two campaigns) do not dilute them. A configuration in which nothing is
gated is judged on its runs alone.
"""
import math

import numpy as np
import pandas as pd

from .metrics import CORE_METRICS, declaration, declared_margin, exact_declarations, is_headline
from .pairing import aa_pairs, compare_ratio_sides, compare_sides, pair_runs, run_match_columns, split_config
from .presentation import formatting as fmt
from .schema import CONFIG_COLUMNS
from .stats import MIN_REPETITIONS, benjamini_hochberg

DEFAULT_MARGIN = 0.05  # 5 %: typical run-to-run spread of wall/sys time in a QEMU guest on a busy host
FALSE_DISCOVERY_RATE = 0.05

REGRESSION, POSSIBLE_REGRESSION = "regression", "possible regression"
IMPROVEMENT, POSSIBLE_IMPROVEMENT = "improvement", "possible improvement"
NO_CHANGE, INCONCLUSIVE, DESCRIPTIVE = "no change", "inconclusive", "descriptive"
# What the unchanged control kernel's rows between two campaigns say instead of its own regression or
# improvement: the machine, not the kernel, changed.
DRIFT, POSSIBLE_DRIFT = "environment drift", "possible drift"
# The exit status of `compare` and `gate`: the first of these outcomes that any gated row has decides it.
# Inconclusive is never 0: a CI job must not pass a comparison that could not decide. A possible
# regression passes (the gate does not accept it as a base) unless asked to fail it: then it is 1.
EXIT_STATUS = {REGRESSION: 1, INCONCLUSIVE: 3, POSSIBLE_REGRESSION: 0, IMPROVEMENT: 4, POSSIBLE_IMPROVEMENT: 0,
               NO_CHANGE: 0}
EXIT_ERROR = 2  # a usage error, input that cannot be used, or an error of the analysis itself: never 1
RUNS_METRIC = "runs"
MARGIN_SOURCES = ("metrics.conf", "A/A", "default")
JUDGED_COLUMNS = ["margin", "margin_source", "q_value", "headline", "gated", "outcome", "reason", "runs_needed"]


def noise_floors(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and metric with an A/A interval: noise_floor (a fraction, e.g. 0.03)."""
    return _floors([compare_sides(metrics, "kernel", label_a, label_b, CONFIG_COLUMNS)
                    for label_a, label_b in aa_pairs(metrics)])


def _floors(aa_comparisons: list) -> pd.DataFrame:
    keys = list(CONFIG_COLUMNS) + ["metric"]
    floors = [aa.dropna(subset=["ci_low", "ci_high"]) for aa in aa_comparisons]
    floors = [aa[keys].assign(noise_floor=np.maximum((aa["ci_low"] - 1).abs(), (aa["ci_high"] - 1).abs()))
              for aa in floors]
    if not floors:
        return pd.DataFrame(columns=keys + ["noise_floor"])
    return pd.concat(floors).groupby(keys, dropna=False, as_index=False)["noise_floor"].max()


def is_gated(workload: str, metric: str, higher_is_better, headlines_only: bool) -> bool:
    return higher_is_better in (True, False) and (not headlines_only or is_headline(workload, metric))


def _expected_metrics(workload: str, headlines_only: bool) -> set:
    """The gated metrics every run of the workload gives: its headlines that metrics.conf names one by one (no
    `*`), and, unless headlines_only, the core times."""
    core = set() if headlines_only else set(CORE_METRICS)
    named = {d.name for d in exact_declarations(workload) if d.headline and declaration(workload, d.name) is d}
    return {name for name in core | named
            if is_gated(workload, name, _direction(workload, name), headlines_only)}


def _direction(workload: str, metric: str):
    found = declaration(workload, metric)
    return found.higher_is_better if found else (False if metric in CORE_METRICS else None)


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


def runs_to_decide(ratio: float, ci_low: float, ci_high: float, runs: int, zone: float):
    """About how many runs a side would decide a row at its present spread (the interval narrows as 1/sqrt(n)):
    enough for the interval to exclude 1 or to fit within ±zone, whichever takes fewer; None when neither can."""
    half_width = (math.log(ci_high) - math.log(ci_low)) / 2
    centre = math.log(ratio)
    # A zone of 100 % or more reaches down to a ratio of 0: no lower edge.
    lower = math.log1p(-zone) if zone < 1 else -math.inf
    room = min(math.log1p(zone) - centre, centre - lower)
    target = max(abs(centre), room)
    return math.ceil(runs * (half_width / target) ** 2) if target > 0 else None


def _metric_outcome(row, runs_reason: str, default_margin: float) -> tuple:
    """(outcome, reason, runs a side that would decide it or nan) of one metric row."""
    nan = float("nan")
    if not row.gated:
        directional = row.higher_is_better in (True, False)
        return DESCRIPTIVE, ("not its workload's headline: reported, not gated" if directional else ""), nan
    if runs_reason:
        return INCONCLUSIVE, runs_reason, nan
    fewest = min(row.base_n, row.new_n)
    if fewest < MIN_REPETITIONS:
        return (INCONCLUSIVE, f"n={row.base_n:.0f}/{row.new_n:.0f}, below the minimum of {MIN_REPETITIONS} per side",
                MIN_REPETITIONS)
    if np.isnan(row.q_value):
        return INCONCLUSIVE, "no interval (a mean of 0)", nan
    change, margin = row.ratio - 1, row.margin
    if row.q_value <= FALSE_DISCOVERY_RATE:
        worse, beyond = (change > 0) != row.higher_is_better, abs(change) > margin
        outcome = {(True, True): REGRESSION, (True, False): POSSIBLE_REGRESSION,
                   (False, True): IMPROVEMENT, (False, False): POSSIBLE_IMPROVEMENT}[worse, beyond]
        return outcome, f"{100 * change:+.2f}%, {'beyond' if beyond else 'within'} the {100 * margin:.2f}% margin", nan
    zone = margin if row.margin_source == MARGIN_SOURCES[0] else max(margin, default_margin)
    if 1 - zone <= row.ci_low and row.ci_high <= 1 + zone:
        return NO_CHANGE, f"interval within ±{100 * zone:.2f}%", nan
    needed = runs_to_decide(row.ratio, row.ci_low, row.ci_high, fewest, zone)
    advice = f"about {needed} runs a side would decide it" if needed else "more runs a side would decide it"
    return INCONCLUSIVE, f"interval reaches beyond ±{100 * zone:.2f}%: {advice}", needed or nan


def _config_of(pair: dict) -> dict:
    return {key: value for key, value in pair.items() if key not in ("base_runs", "new_runs")}


def _runs_rows(run_pairs: pd.DataFrame, base: str, new: str, judged_keys: set) -> list:
    """A "runs" row for every configuration where a run has no data, carrying the outcome of the statuses,
    and for every configuration whose runs all gave data but which has no gated metric (judged_keys: the
    run keys that have one)."""
    rows = []
    for pair in run_pairs.to_dict("records"):
        outcome, reason = _runs_outcome(pair["base_runs"], pair["new_runs"], base, new)
        key = tuple(_config_of(pair).values())
        if not outcome and key in judged_keys:
            continue
        if not outcome:
            outcome, reason = NO_CHANGE, (f"{pair['workload']} has no gated metric: its runs alone are judged, "
                                          f"all done")
        rows.append(_config_of(pair) | {"metric": RUNS_METRIC, "unit": "runs", "base_n": pair["base_runs"]["done"],
                                        "new_n": pair["new_runs"]["done"], "gated": True, "outcome": outcome,
                                        "reason": reason})
    return rows


def _missing_rows(counts: pd.DataFrame, run_pairs: pd.DataFrame, runs_keys: list, base: str, new: str,
                  headlines_only: bool) -> list:
    """An inconclusive row for each gated metric that has no value on a side of a configuration whose runs
    gave data on both: a metric gated on one side, or one every run of the workload gives (_expected_metrics)."""
    # A mask as a Series: a bare empty list would select no columns, not no rows.
    gated = counts[pd.Series([is_gated(w, m, h, headlines_only)
                              for w, m, h in zip(counts["workload"], counts["metric"], counts["higher_is_better"])],
                             index=counts.index, dtype=bool)]
    present = {key: dict(zip(zip(group["side"], group["metric"]), group["n"]))
               for key, group in gated.groupby(runs_keys, dropna=False)}
    rows = []
    for pair in run_pairs.to_dict("records"):
        if not (pair["base_runs"]["done"] and pair["new_runs"]["done"]):
            continue
        config = _config_of(pair)
        found = present.get(tuple(config.values()), {})
        expected = {metric for _, metric in found} | _expected_metrics(pair["workload"], headlines_only)
        for metric in sorted(expected):
            lacking = [label for label in (base, new) if (label, metric) not in found]
            if lacking:
                rows.append(config | {
                    "metric": metric, "base_n": found.get((base, metric), 0), "new_n": found.get((new, metric), 0),
                    "higher_is_better": _direction(pair["workload"], metric), "gated": True, "outcome": INCONCLUSIVE,
                    "reason": f"no value of {metric} on {' or '.join(lacking)} ({pair['base_runs']['done']} and "
                              f"{pair['new_runs']['done']} runs done)"})
    return rows


def judge(comparison: pd.DataFrame, run_pairs: pd.DataFrame, floors: pd.DataFrame, counts: pd.DataFrame,
          base: str, new: str, match_columns, default_margin: float = DEFAULT_MARGIN,
          headlines_only: bool = False) -> pd.DataFrame:
    """The comparison with JUDGED_COLUMNS, plus rows for runs and for gated metrics missing on a side.
    counts: run keys, metric, side (base or new), n (values), higher_is_better for every metric with a value."""
    keys = list(CONFIG_COLUMNS) + ["metric"]
    judged = comparison.merge(floors, on=keys, how="left")
    declared = pd.Series([declared_margin(w, m) for w, m in zip(judged["workload"], judged["metric"])],
                         index=judged.index, dtype=float)
    judged["margin_source"] = np.select([declared.notna(), judged["noise_floor"].notna()], MARGIN_SOURCES[:2],
                                        MARGIN_SOURCES[2])
    judged["margin"] = declared.fillna(judged["noise_floor"]).fillna(default_margin)
    judged["gated"] = [is_gated(w, m, h, headlines_only)
                       for w, m, h in zip(judged["workload"], judged["metric"], judged["higher_is_better"])]
    judged["q_value"] = np.nan
    family = judged["kernel"] if "kernel" in match_columns else pd.Series("", index=judged.index)
    for _, rows in judged[judged["gated"]].groupby(family[judged["gated"]]):
        judged.loc[rows.index, "q_value"] = benjamini_hochberg(rows["p_value"])
    runs_keys = run_match_columns(match_columns)
    reasons = {tuple(pair[key] for key in runs_keys): _runs_outcome(pair["base_runs"], pair["new_runs"], base, new)[1]
               for pair in run_pairs.to_dict("records")}
    decided = [_metric_outcome(row, reasons.get(tuple(getattr(row, key) for key in runs_keys), ""), default_margin)
               for row in judged.itertuples()]
    judged[["outcome", "reason", "runs_needed"]] = pd.DataFrame(decided, index=judged.index,
                                                                 columns=["outcome", "reason", "runs_needed"])
    missing = _missing_rows(counts, run_pairs, runs_keys, base, new, headlines_only)
    judged_keys = {tuple(row) for row in judged.loc[judged["gated"], runs_keys].itertuples(index=False)}
    judged_keys |= {tuple(row[key] for key in runs_keys) for row in missing}
    extra = _runs_rows(run_pairs, base, new, judged_keys) + missing
    if extra:
        judged = pd.concat([pd.DataFrame(extra), judged], ignore_index=True) if len(judged) else pd.DataFrame(extra)
    judged["headline"] = [is_headline(workload, metric)
                          for workload, metric in zip(judged["workload"], judged["metric"])]
    judged["gated"] = judged["gated"].astype(bool)
    return judged.reindex(columns=list(comparison.columns) + JUDGED_COLUMNS)


def _counts(metrics: pd.DataFrame, side_column: str, base: str, new: str, runs_keys: list) -> pd.DataFrame:
    """The counts judge() wants: which metrics have a value on each side of each configuration."""
    chosen = metrics[metrics[side_column].isin([base, new])]
    return (chosen.groupby(runs_keys + ["metric", side_column], dropna=False, as_index=False)
            .agg(n=("value", "count"), higher_is_better=("higher_is_better", "first"))
            .rename(columns={side_column: "side"}))


def compare_kernels(metrics: pd.DataFrame, runs: pd.DataFrame, base: str, new: str,
                    default_margin: float = DEFAULT_MARGIN, headlines_only: bool = False) -> pd.DataFrame:
    """Two kernels within one campaign, matched on the experiment configuration."""
    comparison = compare_sides(metrics, "kernel", base, new, CONFIG_COLUMNS)
    run_pairs = pair_runs(runs, "kernel", base, new, CONFIG_COLUMNS)
    counts = _counts(metrics, "kernel", base, new, run_match_columns(CONFIG_COLUMNS))
    return judge(comparison, run_pairs, noise_floors(metrics), counts, base, new, CONFIG_COLUMNS, default_margin,
                 headlines_only)


def _two_campaigns(base_frame: pd.DataFrame, new_frame: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([base_frame.assign(side="base"), new_frame.assign(side="new")], ignore_index=True)


def _wider_floors(base_metrics: pd.DataFrame, new_metrics: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and metric, the wider of two campaigns' A/A floors."""
    floors = pd.concat([noise_floors(base_metrics), noise_floors(new_metrics)])
    return floors.groupby(list(CONFIG_COLUMNS) + ["metric"], dropna=False, as_index=False)["noise_floor"].max()


def compare_campaigns(base_metrics: pd.DataFrame, base_runs: pd.DataFrame, new_metrics: pd.DataFrame,
                      new_runs: pd.DataFrame, default_margin: float = DEFAULT_MARGIN,
                      headlines_only: bool = False) -> pd.DataFrame:
    """The same kernel label and configuration in two campaigns (e.g. before and after a change); the floor of
    a configuration is the wider of the two campaigns' A/A floors, each kernel's rows a family of their own."""
    match_columns = ("kernel",) + CONFIG_COLUMNS
    metrics = _two_campaigns(base_metrics, new_metrics)
    counts = _counts(metrics, "side", "base", "new", run_match_columns(match_columns))
    return judge(compare_sides(metrics, "side", "base", "new", match_columns),
                 pair_runs(_two_campaigns(base_runs, new_runs), "side", "base", "new", match_columns),
                 _wider_floors(base_metrics, new_metrics), counts, "base", "new", match_columns, default_margin,
                 headlines_only)


def _ratio_counts(metrics: pd.DataFrame, test: str, control: str, runs_keys: list) -> pd.DataFrame:
    """Which metrics have a value for both TEST and CONTROL on each side (a ratio has a value only then)."""
    keys = runs_keys + ["metric", "side"]
    tests, controls = (_counts(metrics[metrics["kernel"] == kernel], "side", "base", "new", runs_keys)
                       for kernel in (test, control))
    both = tests.merge(controls[keys + ["n"]], on=keys, suffixes=("", "_control"))
    return both.assign(n=np.minimum(both["n"], both.pop("n_control")))


def compare_over_time(base_metrics: pd.DataFrame, base_runs: pd.DataFrame, new_metrics: pd.DataFrame,
                      new_runs: pd.DataFrame, control: str, test: str, default_margin: float = DEFAULT_MARGIN,
                      headlines_only: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """TEST against its last accepted campaign, as its ratio to CONTROL in each campaign, so that a machine
    faster or slower for every kernel (drift) cancels out; and CONTROL against itself where its kernel_id is the
    same in both campaigns: the drift control, whose moves beyond their margin are DRIFT, never a regression.
    The ratio rows' floor is the A/A label's ratio to CONTROL compared across the campaigns the same way (when
    both have that A/A group), the control rows' the wider of the campaigns' A/A floors."""
    metrics, runs = _two_campaigns(base_metrics, new_metrics), _two_campaigns(base_runs, new_runs)
    runs_keys = run_match_columns(CONFIG_COLUMNS)
    aa_labels = {label for pair in aa_pairs(base_metrics) + aa_pairs(new_metrics) if control in pair
                 for label in pair if label != control}
    floors = _floors([compare_ratio_sides(metrics, "side", "base", "new", label, control, CONFIG_COLUMNS)
                      for label in sorted(aa_labels)])
    ratios = judge(compare_ratio_sides(metrics, "side", "base", "new", test, control, CONFIG_COLUMNS),
                   pair_runs(runs[runs["kernel"] == test], "side", "base", "new", CONFIG_COLUMNS), floors,
                   _ratio_counts(metrics, test, control, runs_keys), "base", "new", CONFIG_COLUMNS, default_margin,
                   headlines_only)
    ratios.loc[ratios["metric"] != RUNS_METRIC, "unit"] = f"{test}/{control}"
    control_columns = ("kernel_id",) + CONFIG_COLUMNS
    controls = metrics[metrics["kernel"] == control]
    drift = judge(compare_sides(controls, "side", "base", "new", control_columns),
                  pair_runs(runs[runs["kernel"] == control], "side", "base", "new", control_columns),
                  _wider_floors(base_metrics, new_metrics),
                  _counts(controls, "side", "base", "new", run_match_columns(control_columns)), "base", "new",
                  control_columns, default_margin, headlines_only)
    # Only the drift of metrics that were compared: a control metric missing on a side says nothing of the machine.
    drift = drift[drift["metric"] != RUNS_METRIC].dropna(subset=["ratio"])
    drift["outcome"] = drift["outcome"].replace({REGRESSION: DRIFT, IMPROVEMENT: DRIFT, POSSIBLE_REGRESSION: POSSIBLE_DRIFT,
                                                 POSSIBLE_IMPROVEMENT: POSSIBLE_DRIFT})
    return ratios, drift


def gated(judged: pd.DataFrame) -> pd.DataFrame:
    return judged[judged["gated"]]


def overall_outcome(judged: pd.DataFrame) -> str:
    """The outcome that sets the exit status; inconclusive when nothing was gated at all."""
    present = set(gated(judged)["outcome"])
    return next((outcome for outcome in EXIT_STATUS if outcome in present), INCONCLUSIVE)


def exit_status(outcome: str, fail_on_possible_regression: bool = False) -> int:
    if fail_on_possible_regression and outcome == POSSIBLE_REGRESSION:
        return EXIT_STATUS[REGRESSION]
    return EXIT_STATUS[outcome]


def outcome_counts(judged: pd.DataFrame) -> dict:
    """{outcome: number of gated rows} in EXIT_STATUS order, every outcome listed."""
    counts = gated(judged)["outcome"].value_counts()
    return {outcome: int(counts.get(outcome, 0)) for outcome in EXIT_STATUS}


def summary_line(judged: pd.DataFrame, fail_on_possible_regression: bool = False) -> str:
    """The outcome, the exit status it gives and the rows per outcome, in one line."""
    counts = ", ".join(f"{outcome}: {n}" for outcome, n in outcome_counts(judged).items() if n)
    outcome = overall_outcome(judged)
    return (f"verdict: {outcome} (exit status {exit_status(outcome, fail_on_possible_regression)}); "
            f"gated rows per outcome: {counts or 'none'}")


def most_runs_needed(judged: pd.DataFrame):
    """The most runs a side that any inconclusive gated row asks for (None when none says)."""
    needed = gated(judged)["runs_needed"].dropna()
    return int(needed.max()) if len(needed) else None


def deciding_rows(judged: pd.DataFrame) -> pd.DataFrame:
    """The gated rows that are not "no change", worst outcome first: what a reader must look at."""
    rows = gated(judged)
    deciding = rows[rows["outcome"] != NO_CHANGE]
    # Ranked after the filter: a Series assigned to an empty frame would lend it its own rows.
    rank = deciding["outcome"].map(list(EXIT_STATUS).index)
    return deciding.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank")


def display_verdicts(judged: pd.DataFrame, base_label: str, new_label: str, config_columns) -> pd.DataFrame:
    """The printed shape: `base ±σ% | %change [CI] mark | new ±σ%`, one row per config x metric.
    Only the configuration columns that differ between rows are shown (print split_config's common part once).
    The mark `*` is q <= FALSE_DISCOVERY_RATE, and means that wherever a table shows it."""
    varying, _ = split_config(judged, config_columns)
    runs_row = judged["metric"] == RUNS_METRIC
    judged_row = judged["gated"] & ~runs_row
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
        "margin": [f"{100 * margin:.1f}% {source}" if shown else ""
                   for margin, source, shown in zip(judged["margin"], judged["margin_source"], judged_row)],
        "outcome": judged["outcome"].replace(DESCRIPTIVE, ""),
        "reason": judged["reason"],
    })
