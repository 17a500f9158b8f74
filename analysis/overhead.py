"""Memory-overhead tables: the analytic model per design, and measured per-entry bytes beside it.

Measured values come from a workload that writes, in its result.json "output":
    {"overhead": {"swap_slots": S, "entries": N, "static_bytes": B-A, "dynamic_bytes": C-B}}
where A, B, C are the snapshots of docs/vswap-6.12-design.md section 5 (before swapon, after swapon,
with N entries held swapped out) and S is the size of the swapfile it used, in 4 KiB slots.
The loader flattens these into the metrics below; no other part of the analysis needs to know them.
"""
import pandas as pd

from .overhead_model import (
    COVER_LETTER_DESIGNS, DEFAULT_SWAP_BYTES, DESIGNS, MIB, SCENARIOS, USAGE_PERCENTS,
    design_for_kernel, entries_at, swap_slots,
)
from .reference import published_overhead

MEASURED_FIELDS = {
    "swap_slots": "output.overhead.swap_slots",
    "entries": "output.overhead.entries",
    "static_bytes": "output.overhead.static_bytes",
    "dynamic_bytes": "output.overhead.dynamic_bytes",
}


def model_table(swap_bytes: int = DEFAULT_SWAP_BYTES, designs=DESIGNS, percents=USAGE_PERCENTS) -> pd.DataFrame:
    """Rows: scenario x usage %, columns: total overhead in MiB per design (cover letter shape)."""
    slots = swap_slots(swap_bytes)
    rows = []
    for scenario in SCENARIOS:
        for percent in percents:
            entries = entries_at(percent, swap_bytes)
            row = {"scenario": scenario, "usage_percent": percent, "entries": entries}
            for design in designs:
                row[design.key] = design.overhead_bytes(scenario, slots, entries) / MIB
            rows.append(row)
    return pd.DataFrame(rows)


def components_table(designs=DESIGNS) -> pd.DataFrame:
    return pd.DataFrame([
        {"design": design.key, "component": cost.name, "paid per": cost.per, "bytes": cost.bytes,
         "scenarios": "+".join(sorted(cost.scenarios))}
        for design in designs for cost in design.costs
    ])


def cover_letter_check() -> pd.DataFrame:
    """Every printed cover-letter number next to the model's, both formatted as printed (2 decimals)."""
    published = published_overhead()
    designs = {design.key: design for design in COVER_LETTER_DESIGNS}
    slots = swap_slots(DEFAULT_SWAP_BYTES)
    published["model_mib"] = [
        f"{designs[row.design].overhead_bytes(row.scenario, slots, row.entries) / MIB:.2f}"
        for row in published.itertuples()
    ]
    published["matches"] = published["model_mib"] == published["overhead_mib"]
    return published.drop(columns="source")


def measured_runs(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per run that reported overhead fields: measured bytes per slot/entry and the model's."""
    wanted = metrics[metrics["metric"].isin(MEASURED_FIELDS.values())]
    if wanted.empty:
        return pd.DataFrame()
    wide = wanted.pivot_table(index=["run_id", "kernel", "backend"], columns="metric", values="value").reset_index()
    wide = wide.rename(columns={metric: name for name, metric in MEASURED_FIELDS.items()})
    wide["static_bytes_per_slot"] = wide["static_bytes"] / wide["swap_slots"]
    wide["bytes_per_entry"] = wide["dynamic_bytes"] / wide["entries"].where(wide["entries"] > 0)
    models = [design_for_kernel(kernel) for kernel in wide["kernel"]]
    wide["model"] = [design.key if design else "" for design in models]
    wide["model_static_bytes_per_slot"] = [
        design.static_bytes_per_slot(backend) if design and backend in SCENARIOS else float("nan")
        for design, backend in zip(models, wide["backend"])
    ]
    wide["model_bytes_per_entry"] = [
        design.bytes_per_entry(backend) if design and backend in SCENARIOS else float("nan")
        for design, backend in zip(models, wide["backend"])
    ]
    return wide


def measured_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Measured vs model per kernel and backend (mean over runs)."""
    runs = measured_runs(metrics)
    if runs.empty:
        return runs
    columns = ["static_bytes_per_slot", "model_static_bytes_per_slot", "bytes_per_entry", "model_bytes_per_entry"]
    table = runs.groupby(["kernel", "backend", "model"])[columns].mean()
    table["runs"] = runs.groupby(["kernel", "backend", "model"]).size()
    return table.reset_index()
