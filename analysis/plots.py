"""PNG plots. Every plot of measurements shows each repetition (no bare bars): a mean hides bimodal runs.

Each function writes one or more files into out_dir and returns their paths ([] when there is no data).
"""
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on the build host
import matplotlib.pyplot as plt  # noqa: E402  (must follow the backend choice)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .overhead_model import (  # noqa: E402
    BUILT_DESIGNS, BUILT_SCENARIOS, COVER_LETTER_DESIGNS, DESIGNS, PLANNED_DESIGNS, SCENARIOS,
)
from .headline import SWAPOFF_METRICS  # noqa: E402
from .history import ACCEPTED, NOT_GATED, REJECTED  # noqa: E402
from .metrics import is_headline  # noqa: E402
from .pairing import varying_params  # noqa: E402

DPI = 100
JITTER_SEED = 1  # fixed, so a rebuilt report gives identical images
# What workloads/swapoff writes beside its times (headline.SWAPOFF_METRICS, a panel each): the anonymous memory
# it swapped out (its SIZE_MB; the device's "used" would count only what reached the device, which differs by
# kernel).
SWAPPED_MIB = "output.anon.mib"


def _kernel_colors(kernels) -> dict:
    return {kernel: f"C{i}" for i, kernel in enumerate(sorted(kernels))}


def _save(figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def better(higher_is_better) -> str:
    """Which way is better, for an axis label."""
    return {True: "higher is better", False: "lower is better"}.get(higher_is_better, "neither is better")


def repetition_plots(metrics: pd.DataFrame, out_dir: Path, metric_names=("real", "sys")) -> list[Path]:
    """Per workload and metric (METRIC_NAMES and the workload's headlines with a direction, which its verdict
    uses): a box per parameter set x backend x kernel (only the parameters that vary within the workload are
    named), with every repetition drawn on top."""
    paths = []
    rng = np.random.default_rng(JITTER_SEED)
    colors = _kernel_colors(metrics["kernel"].unique())
    kinds = metrics[["workload", "metric", "higher_is_better"]].drop_duplicates()
    plotted = {(workload, metric) for workload, metric, direction in kinds.itertuples(index=False)
             if metric in metric_names or (direction in (True, False) and is_headline(workload, metric))}
    for (workload, metric), data in metrics.groupby(["workload", "metric"]):
        if (workload, metric) not in plotted or not data["value"].any():
            continue
        data = data.assign(shown=varying_params(data))
        groups = list(data.groupby(["shown", "backend", "kernel"]))
        figure, axes = plt.subplots(figsize=(max(4, 1.2 * len(groups)), 4))
        for position, ((_, backend, kernel), group) in enumerate(groups):
            values = group["value"].to_numpy()
            axes.boxplot(values, positions=[position], widths=0.6, showfliers=False,
                         medianprops={"color": colors[kernel]})
            axes.scatter(position + rng.uniform(-0.15, 0.15, len(values)), values, s=18, color=colors[kernel],
                         alpha=0.8, zorder=3)
        axes.set_xticks(range(len(groups)), [f"{shown}\n{backend}\n{kernel}\nn={len(g)}".lstrip()
                                             for (shown, backend, kernel), g in groups])
        axes.set_ylabel(f"{metric} ({data['unit'].iloc[0]}), {better(data['higher_is_better'].iloc[0])}")
        role = "the verdict's headline, " if is_headline(workload, metric) else ""
        axes.set_title(f"{workload}: {metric}\n{role}every repetition", fontsize="medium")
        paths.append(_save(figure, out_dir / f"reps-{_slug(workload)}-{_slug(metric)}.png"))
    return paths


def forest_plot(table: pd.DataFrame, out_dir: Path, base: str, new: str) -> list[Path]:
    """Ratio new/base with its 95% CI per row of the sys-time table; published v3 ratios as open diamonds."""
    if table.empty:
        return []
    params = pd.Series(varying_params(table), index=table.index).map(lambda text: f" {text}" if text else "")
    labels = (table["workload"] + params + " " + table["backend"] + " " + table["metric"]
              + " (" + table["accelerator"] + ")")
    y = np.arange(len(table))[::-1]
    figure, axes = plt.subplots(figsize=(9, 1.3 + 0.45 * len(table)))
    # A row without an interval (one repetition) is drawn as a bare point.
    errors = np.vstack([table["ratio"] - table["ci_low"], table["ci_high"] - table["ratio"]])
    errors = np.nan_to_num(errors, nan=0.0)
    axes.errorbar(table["ratio"], y, xerr=errors, fmt="o", color="C0", capsize=3, label=f"ours: {new}/{base}, 95% CI")
    if "pub_ratio" in table and table["pub_ratio"].notna().any():
        axes.scatter(table["pub_ratio"], y, marker="D", facecolors="none", edgecolors="C3", zorder=3,
                     label="v3 cover letter (6.19)")
    axes.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    axes.set_yticks(y, labels)
    axes.set_xlabel(f"{new}/{base}: below 1 {new} takes less time (better)")
    axes.set_title(f"{new}/{base} of real and sys; the sys rows decide the sys-time table", fontsize="medium")
    axes.legend(loc="best", fontsize="small")
    return [_save(figure, out_dir / "forest-ratios.png")]


def overhead_plot(model: pd.DataFrame, swap_bytes: int, out_dir: Path) -> list[Path]:
    """Modelled overhead vs usage for every design, in the cover letter's two scenarios."""
    figure, all_axes = plt.subplots(1, len(SCENARIOS), figsize=(11, 4.5), sharey=True)
    for axes, scenario in zip(all_axes, SCENARIOS):
        rows = model[model["scenario"] == scenario]
        for design in DESIGNS:
            # 6.19 reference dashed, the plan dotted, the 6.12 code we run solid.
            style = "--" if design in COVER_LETTER_DESIGNS else ":" if design in PLANNED_DESIGNS else "-"
            axes.plot(rows["usage_percent"], rows[design.key], style, marker=".", label=design.label)
        axes.set_title(f"{scenario}, {swap_bytes / (1 << 30):g} GiB swap")
        axes.set_xlabel("swap usage (%)")
    all_axes[0].set_ylabel("metadata overhead (MiB), lower is better")
    all_axes[-1].legend(fontsize="small")
    return [_save(figure, out_dir / "overhead-vs-usage.png")]


def overhead_measured_plot(scaled: pd.DataFrame, points: pd.DataFrame, swap_bytes: int, out_dir: Path) -> list[Path]:
    """Per backend: each built kernel's model line (dotted: without the swap cache's shadow nodes, which
    drop_caches may free), its measured fit after drop_caches (dashed, 95 % band) and every measured point
    scaled to the same swap size (markers)."""
    if points.empty and not any(column.endswith("measured (MiB)") and scaled[column].notna().any()
                                for column in scaled.columns):
        return []
    figure, all_axes = plt.subplots(1, len(BUILT_SCENARIOS), figsize=(14, 4.5), sharey=True)
    names = [design.key.removeprefix("built:") for design in BUILT_DESIGNS]
    colors = _kernel_colors(names)
    for axes, backend in zip(all_axes, BUILT_SCENARIOS):
        rows = scaled[scaled["backend"] == backend]
        for name in names:
            color = colors[name]
            axes.plot(rows["usage_percent"], rows[f"{name} model (MiB)"], "-", color=color, label=f"{name} model")
            axes.plot(rows["usage_percent"], rows[f"{name} model without shadow nodes (MiB)"], ":", color=color,
                      label=f"{name} model without shadow nodes")
            if rows[f"{name} measured (MiB)"].notna().any():
                axes.plot(rows["usage_percent"], rows[f"{name} measured (MiB)"], "--", color=color,
                          label=f"{name} measured fit")
                axes.fill_between(rows["usage_percent"], rows[f"{name} measured low"],
                                  rows[f"{name} measured high"], color=color, alpha=0.2)
            mine = points[(points["backend"] == backend) & (points["kernel"] == name)] if len(points) else points
            if len(mine):
                axes.scatter(mine["usage_percent"], mine["mib"], marker="x", color=color, zorder=3,
                             label=f"{name} measured points")
        axes.set_title(f"{backend}, {swap_bytes / (1 << 30):g} GiB swap")
        axes.set_xlabel("swap usage (%)")
    all_axes[0].set_ylabel("swap metadata (MiB), lower is better")
    legend = {}
    for axes in all_axes:  # every kernel's entries, whichever panel has them
        for handle, label in zip(*axes.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    all_axes[0].legend(legend.values(), legend.keys(), fontsize="small")
    return [_save(figure, out_dir / "overhead-measured.png")]


def swapoff_plot(metrics: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Swapoff wall and system time vs swapped size, per kernel and backend, from the swapoff workload's runs."""
    swapoff = metrics[metrics["workload"] == "swapoff"]
    sizes = swapoff[swapoff["metric"] == SWAPPED_MIB][["run_id", "value"]].rename(columns={"value": "swapped_mib"})
    times = swapoff[swapoff["metric"].isin(list(SWAPOFF_METRICS))]
    if times.empty or sizes.empty:
        return []
    points = times[["run_id", "kernel", "backend", "metric", "value"]].merge(sizes, on="run_id")
    colors = _kernel_colors(points["kernel"].unique())
    figure, all_axes = plt.subplots(1, len(SWAPOFF_METRICS), figsize=(11, 4))
    for axes, (metric, word) in zip(all_axes, SWAPOFF_METRICS.items()):
        for (kernel, backend), group in points[points["metric"] == metric].groupby(["kernel", "backend"]):
            axes.scatter(group["swapped_mib"], group["value"], color=colors[kernel],
                         marker="o" if backend == "disk" else "^", label=f"{kernel} {backend}")
        axes.set_xlabel("swapped out at swapoff (MiB)")
        axes.set_ylabel(f"swapoff {word} time (s), lower is better")
        axes.set_title(f"{metric}" + (", the verdict's headline" if is_headline("swapoff", metric) else ""),
                       fontsize="medium")
        axes.set_ylim(bottom=0)
    all_axes[0].legend(fontsize="small")
    return [_save(figure, out_dir / "swapoff-time.png")]


def contention_plot(waits: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Lock contentions per 1000 pages swapped out against the guest's vCPUs, per kernel and backend
    (analysis/contention.py's waits table)."""
    if waits.empty:
        return []
    colors = _kernel_colors(waits["kernel"].unique())
    figure, axes = plt.subplots(figsize=(7, 4))
    for (kernel, backend), group in waits.groupby(["kernel", "backend"]):
        group = group.sort_values("vcpus")
        axes.plot(group["vcpus"], group["contentions_per_kpage"], color=colors[kernel],
                  marker="o" if backend == "disk" else "^", linestyle="-" if backend == "disk" else "--",
                  label=f"{kernel} {backend}")
    axes.set_xscale("log", base=2)
    axes.set_xticks(sorted(waits["vcpus"].unique()), [str(v) for v in sorted(waits["vcpus"].unique())])
    axes.set_xlabel("guest vCPUs (one workload process each)")
    axes.set_ylabel("lock contentions per 1000 pages swapped out")
    axes.set_ylim(bottom=0)
    axes.legend(fontsize="small")
    return [_save(figure, out_dir / "contention.png")]


# The history plot's mark and legend of each campaign by what the gate made of it.
GATE_MARKERS = {ACCEPTED: {"marker": "o"}, REJECTED: {"marker": "X", "markersize": 9},
                NOT_GATED: {"marker": "o", "fillstyle": "none"}}
GATE_LABELS = {ACCEPTED: "accepted", REJECTED: "rejected by the gate", NOT_GATED: "not gated"}


def campaign_positions(rows: pd.DataFrame) -> pd.Series:
    """The x of each row: a place of its own for each campaign (history's entry), in date order, so that two
    campaigns of one day stand apart."""
    order = rows.drop_duplicates("entry").sort_values(["date", "entry"], kind="stable")["entry"]
    return rows["entry"].map({entry: x for x, entry in enumerate(order)})


def history_plot(rows: pd.DataFrame, path: Path) -> Path:
    """One panel per configuration and metric: mean ± sd per campaign in date order, a line per kernel, each
    campaign marked accepted, rejected by the gate or not gated."""
    panels = list(rows.groupby(["configuration", "metric"], sort=True))
    figure, all_axes = plt.subplots(len(panels), 1, figsize=(8, 3 * len(panels)), squeeze=False)
    for axes, ((configuration, metric), panel) in zip(all_axes[:, 0], panels):
        x = campaign_positions(panel)
        colors = _kernel_colors(panel["kernel"].unique())
        for kernel, line in panel.groupby("kernel"):
            axes.errorbar(x[line.index], line["mean"], yerr=line["sd"].fillna(0), fmt="-", capsize=3,
                          color=colors[kernel], label=kernel)
            for gate, points in line.groupby("gate"):
                axes.plot(x[points.index], points["mean"], linestyle="none", color=colors[kernel], **GATE_MARKERS[gate])
        for gate in sorted(set(panel["gate"])):
            axes.plot([], [], linestyle="none", color="grey", label=GATE_LABELS[gate], **GATE_MARKERS[gate])
        ticks = panel.drop_duplicates("entry").assign(x=x).sort_values("x")
        axes.set_xticks(ticks["x"], [f"{name}\n{date[:16]}" for name, date in zip(ticks["campaign"], ticks["date"])],
                        rotation=20, fontsize="small")
        axes.set_ylabel(f"{metric} ({panel['unit'].iloc[0]})")
        first = panel.iloc[0]
        axes.set_title(f"{first['workload']} {first['backend']}: {metric}", fontsize="medium")
        axes.legend(fontsize="small")
    return _save(figure, path)
