"""Regression verdicts for a comparison, with per-metric noise floors, and the mmtests/LKP-style table.

A metric regresses when all of these hold:
  - it has a direction (higher_is_better is True or False; descriptive counters are never judged),
  - the 95% bootstrap CI of new/base excludes 1.0,
  - it moved in the worse direction by more than its noise floor,
  - both sides have at least MIN_REPETITIONS runs (fewer are reported as "regression?" but not counted:
    two or three runs cannot separate a 5 % change from QEMU noise).
The noise floor of a metric comes from A/A runs when the campaign has them: two kernel labels with the same
kernel_id (the same build run twice under different names). It is the largest distance from 1.0 of any
A/A CI bound for that metric. Without A/A runs it is DEFAULT_NOISE_FLOOR.
"""
import numpy as np
import pandas as pd

from . import formatting as fmt
from .comparison import compare_sides, split_config
from .schema import CONFIG_COLUMNS

DEFAULT_NOISE_FLOOR = 0.05  # 5 %: typical run-to-run spread of wall/sys time in a QEMU guest on a busy host


def aa_pairs(metrics: pd.DataFrame) -> list[tuple[str, str]]:
    """Kernel labels that share a kernel_id: A/A pairs (first two labels, sorted)."""
    labels = metrics.groupby("kernel_id")["kernel"].unique()
    return [tuple(sorted(kernels)[:2]) for kernel_id, kernels in labels.items() if kernel_id and len(kernels) > 1]


def noise_floors(metrics: pd.DataFrame) -> pd.Series:
    """Per metric, the A/A noise floor (a fraction, e.g. 0.03); empty when there are no A/A runs."""
    floors = []
    for label_a, label_b in aa_pairs(metrics):
        aa = compare_sides(metrics, "kernel", label_a, label_b, CONFIG_COLUMNS)
        floors.append(pd.Series(np.maximum((aa["ci_low"] - 1).abs(), (aa["ci_high"] - 1).abs()).to_numpy(),
                                index=aa["metric"]))
    if not floors:
        return pd.Series(dtype=float)
    return pd.concat(floors).groupby(level=0).max()


def _verdict(row, floor: float) -> str:
    if row.higher_is_better not in (True, False) or not row.ci_excludes_one:
        return ""
    change = row.ratio - 1
    worse = change < 0 if row.higher_is_better else change > 0
    if abs(change) <= floor:
        return "within noise"
    if not worse:
        return "improvement"
    return "regression?" if row.few_repetitions else "REGRESSION"


def judge(comparison: pd.DataFrame, floors: pd.Series, default_floor: float = DEFAULT_NOISE_FLOOR) -> pd.DataFrame:
    judged = comparison.copy()
    judged["noise_floor"] = [floors.get(metric, default_floor) for metric in judged["metric"]]
    judged["noise_floor_source"] = ["A/A" if metric in floors.index else "default" for metric in judged["metric"]]
    judged["verdict"] = [_verdict(row, floor) for row, floor in zip(judged.itertuples(), judged["noise_floor"])]
    return judged


def regressions(judged: pd.DataFrame) -> pd.DataFrame:
    return judged[judged["verdict"] == "REGRESSION"]


def display_compare(judged: pd.DataFrame, base_label: str, new_label: str, config_columns) -> pd.DataFrame:
    """The printed shape: `base ±σ% | %change [CI] mark | new ±σ%`, one row per config x metric.
    Only the configuration columns that differ between rows are shown (print split_config's common part once)."""
    varying, _ = split_config(judged, config_columns)
    directional = judged["higher_is_better"].isin([True, False])
    return pd.DataFrame({
        **{column: judged[column] for column in varying},
        "metric": judged["metric"],
        "unit": judged["unit"],
        f"{base_label} ±σ%": [fmt.mean_sd_percent(m, s) for m, s in zip(judged.base_mean, judged.base_sd)],
        "%change [95% CI]": [fmt.percent_change_ci(*v) for v in zip(judged.ratio, judged.ci_low, judged.ci_high)],
        "mark": np.where(judged["ci_excludes_one"], "*", ""),
        f"{new_label} ±σ%": [fmt.mean_sd_percent(m, s) for m, s in zip(judged.new_mean, judged.new_sd)],
        "n": judged["base_n"].astype(str) + "/" + judged["new_n"].astype(str),
        "p": judged["p_value"].map(fmt.p_value),
        "floor": [f"{100 * floor:.1f}%" if judged_metric else "" for floor, judged_metric
                  in zip(judged["noise_floor"], directional)],
        "verdict": judged["verdict"] + np.where(judged["few_repetitions"], " (n<5)", ""),
    })


def compare_kernels(metrics: pd.DataFrame, base: str, new: str, default_floor: float = DEFAULT_NOISE_FLOOR):
    """Two kernels within one campaign, matched on the experiment configuration."""
    comparison = compare_sides(metrics, "kernel", base, new, CONFIG_COLUMNS)
    return judge(comparison, noise_floors(metrics), default_floor)


def compare_campaigns(base_metrics: pd.DataFrame, new_metrics: pd.DataFrame,
                      default_floor: float = DEFAULT_NOISE_FLOOR):
    """The same kernel label and configuration in two campaigns (e.g. before and after a change)."""
    both = pd.concat([base_metrics.assign(side="base"), new_metrics.assign(side="new")], ignore_index=True)
    comparison = compare_sides(both, "side", "base", "new", ("kernel",) + CONFIG_COLUMNS)
    floors = pd.concat([noise_floors(base_metrics), noise_floors(new_metrics)])
    return judge(comparison, floors.groupby(level=0).max(), default_floor)
