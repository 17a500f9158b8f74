"""Pair up two sides of a tidy metrics frame (two kernels, or two campaigns) and compare every metric.

This is the one statistical comparison used by the sys-time table, the compare command and the forest plot,
so that they can never disagree about a number.
"""
import numpy as np
import pandas as pd

from .loader import parse_params
from .metrics import CORE_METRICS
from .stats import MIN_REPETITIONS, compare_samples, summarize

COMPARISON_COLUMNS = [
    "base_mean", "base_sd", "base_n", "new_mean", "new_sd", "new_n",
    "ratio", "ci_low", "ci_high", "p_value", "ci_excludes_one", "few_repetitions", "unit", "higher_is_better",
]


def _compare_group(base_values, new_values) -> dict:
    base, new = summarize(base_values), summarize(new_values)
    estimate = compare_samples(base_values, new_values)
    return {
        "base_mean": base.mean, "base_sd": base.sd, "base_n": base.n,
        "new_mean": new.mean, "new_sd": new.sd, "new_n": new.n,
        "ratio": estimate.ratio, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
        "p_value": estimate.p_value, "ci_excludes_one": estimate.ci_excludes_one,
        "few_repetitions": min(base.n, new.n) < MIN_REPETITIONS,
    }


def compare_sides(metrics: pd.DataFrame, side_column: str, base: str, new: str, match_columns) -> pd.DataFrame:
    """One row per (match_columns, metric) present on both sides; metrics that are zero everywhere are skipped."""
    keys = list(match_columns) + ["metric"]
    rows = []
    for key, group in metrics[metrics[side_column].isin([base, new])].groupby(keys, sort=True, dropna=False):
        base_values = group.loc[group[side_column] == base, "value"].to_numpy()
        new_values = group.loc[group[side_column] == new, "value"].to_numpy()
        if not len(base_values) or not len(new_values):
            continue
        if not np.any(base_values) and not np.any(new_values):
            continue
        row = dict(zip(keys, key))
        row.update(_compare_group(base_values, new_values))
        row["unit"] = group["unit"].iloc[0]
        row["higher_is_better"] = group["higher_is_better"].iloc[0]
        rows.append(row)
    frame = pd.DataFrame(rows, columns=keys + COMPARISON_COLUMNS)
    # Within a configuration, the timing metrics first (as in the cover letter), then the rest by name.
    rank = frame["metric"].map(lambda name: CORE_METRICS.index(name) if name in CORE_METRICS else len(CORE_METRICS))
    return frame.assign(_rank=rank).sort_values(keys[:-1] + ["_rank", "metric"]).drop(columns="_rank")


def split_config(frame: pd.DataFrame, columns) -> tuple[list, dict]:
    """(columns that vary between rows, {column: value} for those that are the same everywhere)."""
    varying = [column for column in columns if frame[column].nunique(dropna=False) > 1]
    common = {column: frame[column].iloc[0] for column in columns if column not in varying and len(frame)}
    return varying, common


def varying_params(frame: pd.DataFrame) -> list[str]:
    """Per row, only the parameters whose value differs between rows of the same workload (SIZE_MB=32 or
    ORDER=random), so that rows of one workload can be told apart without printing every setting."""
    parsed = frame["params"].map(parse_params)
    varying = {}
    for workload, rows in parsed.groupby(frame["workload"]):
        keys = sorted({key for params in rows for key in params})
        varying[workload] = [key for key in keys if rows.map(lambda params: params.get(key)).nunique(dropna=False) > 1]
    return [",".join(f"{key}={params[key]}" for key in varying[workload] if key in params)
            for workload, params in zip(frame["workload"], parsed)]
