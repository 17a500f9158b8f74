"""Pair up two sides of a campaign (two kernels, or two campaigns) and compute the statistics of each pair:
per metric the ratio with its interval and p-value, per configuration how many runs finished, failed or were
lost on each side, and which kernel labels are A/A pairs (the same build under two names).

This is the one statistical comparison used by the sys-time table, the gate (verdicts.py) and the forest
plot, so that they can never disagree about a number. It decides nothing: verdicts.py does.
"""
import pandas as pd

from .loader import parse_params
from .metrics import CORE_METRICS
from .schema import STATUS_DONE, STATUS_UNSUPPORTED
from .stats import MIN_REPETITIONS, compare_samples, ratio_of_means, summarize

COMPARISON_COLUMNS = [
    "base_mean", "base_sd", "base_n", "new_mean", "new_sd", "new_n",
    "ratio", "ci_low", "ci_high", "p_value", "ci_excludes_one", "few_repetitions", "unit", "higher_is_better",
]
# Statuses that say the kernel (or the workload on it) failed: a crash, a hang, a workload that exited in
# error. Any other status of a run that started, without data (failed-infra, interrupted, unsupported, an
# unreadable result, no ending), is a lost run: it says nothing about the kernel, but the side it is missing
# from is short (a side whose every run is unsupported is no side at all: pair_runs). A planned run that never started has no kernel or configuration to be counted under: the
# gate judges its campaign incomplete (gate.py).
FAILED_STATUSES = frozenset({"failed-workload", "kernel-crash", "timeout"})
# The accelerator is only known once the runner has probed KVM: a run lost before that has "unknown", so
# run outcomes are paired without it (the metrics, from finished runs, are paired with it).
RUN_MATCH_EXCLUDES = ("accelerator",)


def _compare_group(base_values, new_values) -> dict:
    base, new = summarize(base_values), summarize(new_values)
    estimate = compare_samples(base_values, new_values)
    return {
        "base_mean": base.mean, "base_sd": base.sd, "base_n": base.n,
        "new_mean": new.mean, "new_sd": new.sd, "new_n": new.n,
        **_estimate_columns(estimate, min(base.n, new.n)),
    }


def _estimate_columns(estimate, fewest: int) -> dict:
    return {"ratio": estimate.ratio, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
            "p_value": estimate.p_value, "ci_excludes_one": estimate.ci_excludes_one,
            "few_repetitions": fewest < MIN_REPETITIONS}


def _compare_ratio_group(groups: dict) -> dict:
    """groups: {(side, "numerator" | "denominator"): values} of the four groups of a ratio of ratios."""
    base_n = min(len(groups["base", "numerator"]), len(groups["base", "denominator"]))
    new_n = min(len(groups["new", "numerator"]), len(groups["new", "denominator"]))
    means = {key: summarize(values).mean for key, values in groups.items()}
    side_ratio = {side: means[side, "numerator"] / means[side, "denominator"] if means[side, "denominator"]
                  else float("nan") for side in ("base", "new")}
    estimate = ratio_of_means([groups["new", "numerator"], groups["base", "denominator"]],
                              [groups["new", "denominator"], groups["base", "numerator"]])
    return {"base_mean": side_ratio["base"], "base_sd": float("nan"), "base_n": base_n,
            "new_mean": side_ratio["new"], "new_sd": float("nan"), "new_n": new_n,
            **_estimate_columns(estimate, min(base_n, new_n))}


def _paired_frame(metrics: pd.DataFrame, match_columns, groups_of) -> pd.DataFrame:
    """One row per (match_columns, metric) for which groups_of(group) gives the row's statistics (None: the
    metric is not on every side, or is zero everywhere)."""
    keys = list(match_columns) + ["metric"]
    rows = []
    for key, group in metrics.groupby(keys, sort=True, dropna=False):
        statistics = groups_of(group)
        if statistics is None:
            continue
        rows.append(dict(zip(keys, key)) | statistics | {"unit": group["unit"].iloc[0],
                                                         "higher_is_better": group["higher_is_better"].iloc[0]})
    frame = pd.DataFrame(rows, columns=keys + COMPARISON_COLUMNS)
    # Within a configuration, the timing metrics first (as in the cover letter), then the rest by name.
    rank = frame["metric"].map(lambda name: CORE_METRICS.index(name) if name in CORE_METRICS else len(CORE_METRICS))
    return frame.assign(_rank=rank).sort_values(keys[:-1] + ["_rank", "metric"]).drop(columns="_rank")


def compare_sides(metrics: pd.DataFrame, side_column: str, base: str, new: str, match_columns) -> pd.DataFrame:
    """One row per (match_columns, metric) present on both sides; metrics that are zero everywhere are skipped."""
    def groups_of(group):
        base_values = group.loc[group[side_column] == base, "value"].to_numpy()
        new_values = group.loc[group[side_column] == new, "value"].to_numpy()
        if not len(base_values) or not len(new_values) or not (base_values.any() or new_values.any()):
            return None
        return _compare_group(base_values, new_values)
    return _paired_frame(metrics[metrics[side_column].isin([base, new])], match_columns, groups_of)


def compare_ratio_sides(metrics: pd.DataFrame, side_column: str, base: str, new: str, numerator: str,
                        denominator: str, match_columns) -> pd.DataFrame:
    """Kernel NUMERATOR over kernel DENOMINATOR on side NEW against the same on side BASE (two campaigns), per
    (match_columns, metric) where both kernels have it on both sides: base_mean and new_mean are each side's
    ratio of means, ratio and its interval the ratio of the two."""
    def groups_of(group):
        groups = {(side, role): group.loc[(group[side_column] == side_value) & (group["kernel"] == kernel),
                                          "value"].to_numpy()
                  for side, side_value in (("base", base), ("new", new))
                  for role, kernel in (("numerator", numerator), ("denominator", denominator))}
        if not all(len(values) for values in groups.values()) or not any(v.any() for v in groups.values()):
            return None
        return _compare_ratio_group(groups)
    chosen = metrics[metrics[side_column].isin([base, new]) & metrics["kernel"].isin([numerator, denominator])]
    return _paired_frame(chosen, match_columns, groups_of)


def run_match_columns(match_columns) -> list:
    return [column for column in match_columns if column not in RUN_MATCH_EXCLUDES]


def _status_counts(statuses: pd.Series) -> dict:
    """{"done": n, "failed": {status: n}, "lost": {status: n}} for one side of one configuration."""
    counts = statuses.value_counts().to_dict()
    return {"done": counts.pop(STATUS_DONE, 0),
            "failed": {status: n for status, n in counts.items() if status in FAILED_STATUSES},
            "lost": {status: n for status, n in counts.items() if status not in FAILED_STATUSES}}


def pair_runs(runs: pd.DataFrame, side_column: str, base: str, new: str, match_columns) -> pd.DataFrame:
    """Per configuration with runs on both sides: the run outcomes of each side (see _status_counts).
    Warm-ups and planned runs not started (no kernel yet; see FAILED_STATUSES) are left out."""
    keys = run_match_columns(match_columns)
    placed = runs[(runs["kernel"] != "") & ~runs["warmup"].fillna(False).astype(bool)]
    rows = []
    for key, group in placed[placed[side_column].isin([base, new])].groupby(keys, sort=True, dropna=False):
        sides = {side: group.loc[group[side_column] == side, "status"] for side in (base, new)}
        if sides[base].empty or sides[new].empty:
            continue
        # A kernel that cannot run the configuration at all (the baseline has no zswap without a device) is
        # no side of a comparison: it is a difference of features, which the runs' statuses say.
        if any((statuses == STATUS_UNSUPPORTED).all() for statuses in sides.values()):
            continue
        rows.append(dict(zip(keys, key), base_runs=_status_counts(sides[base]), new_runs=_status_counts(sides[new])))
    return pd.DataFrame(rows, columns=keys + ["base_runs", "new_runs"])


def aa_pairs(metrics: pd.DataFrame) -> list[tuple[str, str]]:
    """Kernel labels that share a kernel_id: A/A pairs (first two labels, sorted)."""
    labels = metrics.groupby("kernel_id")["kernel"].unique()
    return [tuple(sorted(kernels)[:2]) for kernel_id, kernels in labels.items() if kernel_id and len(kernels) > 1]


def split_config(frame: pd.DataFrame, columns) -> tuple[list, dict]:
    """(columns that vary between rows, {column: value} for those that are the same everywhere)."""
    varying = [column for column in columns if frame[column].nunique(dropna=False) > 1]
    common = {column: frame[column].iloc[0] for column in columns if column not in varying and len(frame)}
    return varying, common


def varying_params(frame: pd.DataFrame) -> list[str]:
    """Per row, only the parameters and settings whose value differs between rows of the same workload
    (SIZE_MB=32, ORDER=random or thp=always), so that rows of one workload can be told apart without printing
    every setting."""
    parsed = frame["params"].map(parse_params)
    if "settings" in frame:
        parsed = pd.Series([{**params, **parse_params(settings)} for params, settings in zip(parsed, frame["settings"])],
                           index=frame.index)
    varying = {}
    for workload, rows in parsed.groupby(frame["workload"]):
        keys = sorted({key for params in rows for key in params})
        varying[workload] = [key for key in keys if rows.map(lambda params: params.get(key)).nunique(dropna=False) > 1]
    return [",".join(f"{key}={params[key]}" for key in varying[workload] if key in params)
            for workload, params in zip(frame["workload"], parsed)]
