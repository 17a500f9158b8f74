"""The cover letter's sys-time table: per backend, baseline vs vswap, real and sys, with what it lacks
(ratio with its Welch interval, p-value, n) and the published numbers beside ours."""
import numpy as np
import pandas as pd

from .presentation import formatting as fmt
from .pairing import compare_sides, varying_params
from .reference import COVER_LETTER_KERNEL_BUILD, published_ratios
from .schema import CONFIG_COLUMNS
from .stats import MIN_REPETITIONS

SYSTIME_METRICS = ("real", "sys")
PUBLISHED_VERSION = "v3"  # the cover letter we reproduce; other versions are listed as ratios only
# Every published sys-time number is a kernel build: set beside any other workload, it would suggest a
# comparison that was never made.
PUBLISHED_WORKLOAD = "kernel-build"


def _direction(row) -> str:
    """Does our significant change go the same way as v3's published one?"""
    if np.isnan(row.pub_ratio):
        return ""
    if not row.ci_excludes_one:
        return "ours n.s."
    return "same" if np.sign(row.ratio - 1) == np.sign(row.pub_ratio - 1) else "opposite"


def systime_table(metrics: pd.DataFrame, base: str = "baseline", new: str = "vswap") -> pd.DataFrame:
    """Numeric table (one row per config x metric); see display_systime for the printed shape."""
    ours = compare_sides(metrics[metrics["metric"].isin(SYSTIME_METRICS)], "kernel", base, new, CONFIG_COLUMNS)
    ratios = (published_ratios(COVER_LETTER_KERNEL_BUILD).drop(columns="setup")
              .rename(columns=lambda column: column if column in ("version", "backend", "metric") else f"pub_{column}")
              .assign(workload=PUBLISHED_WORKLOAD))
    v3 = ratios[ratios["version"] == PUBLISHED_VERSION].drop(columns="version")
    table = ours.merge(v3, on=["workload", "backend", "metric"], how="left")
    others = ratios[ratios["version"] != PUBLISHED_VERSION]
    later = (others.assign(text=others["version"] + " " + others["pub_ratio"].map("{:.3f}".format))
             .groupby(["workload", "backend", "metric"], sort=False)["text"].agg("; ".join)
             .rename("later_versions_ratio"))
    table = table.merge(later.reset_index(), on=["workload", "backend", "metric"], how="left")
    table["direction_vs_v3"] = [_direction(row) for row in table.itertuples()]
    return table


def display_systime(table: pd.DataFrame, base: str = "baseline", new: str = "vswap") -> pd.DataFrame:
    """The printed shape: strings, one row per workload x backend x metric."""
    return pd.DataFrame({
        "workload": table["workload"], "params": varying_params(table), "backend": table["backend"],
        "memory.max": table["memory_max"],
        "accel": table["accelerator"], "metric": table["metric"],
        f"{base} mean ± sd (s)": [fmt.mean_sd(m, s) for m, s in zip(table.base_mean, table.base_sd)],
        f"{base} n": table["base_n"],
        f"{new} mean ± sd (s)": [fmt.mean_sd(m, s) for m, s in zip(table.new_mean, table.new_sd)],
        f"{new} n": table["new_n"],
        f"{new}/{base} [95% CI]": [fmt.ratio_ci(*v) for v in zip(table.ratio, table.ci_low, table.ci_high)],
        "p (Welch t)": table["p_value"].map(fmt.p_value),
        "warning": np.where(table["few_repetitions"], f"n<{MIN_REPETITIONS}", ""),
        f"{PUBLISHED_VERSION} {base}": [fmt.mean_sd(m, s) for m, s in zip(table.pub_base_mean, table.pub_base_sd)],
        f"{PUBLISHED_VERSION} {new}": [fmt.mean_sd(m, s) for m, s in zip(table.pub_new_mean, table.pub_new_sd)],
        f"{PUBLISHED_VERSION} ratio": table["pub_ratio"].map(lambda r: "" if np.isnan(r) else f"{r:.3f}"),
        "later versions": table["later_versions_ratio"],
        "direction vs v3": table["direction_vs_v3"],
    })
