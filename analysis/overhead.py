"""Memory-overhead tables of the analytic model, per design (the cover letter's shape).

What the overhead workload measured, fitted and set beside the model of the kernels as built, is
analysis/overhead_measured.py's.
"""
import pandas as pd

from .overhead_model import (
    COVER_LETTER_DESIGNS, DEFAULT_SWAP_BYTES, DESIGNS, MIB, SCENARIOS, USAGE_PERCENTS, entries_at, swap_slots,
)
from .reference import published_overhead

def model_table(swap_bytes: int = DEFAULT_SWAP_BYTES, designs=DESIGNS, percents=USAGE_PERCENTS) -> pd.DataFrame:
    """Rows: scenario x usage %, columns: total overhead in MiB per design (cover letter shape)."""
    slots = swap_slots(swap_bytes)
    rows = []
    for scenario in SCENARIOS:
        for percent in percents:
            entries = entries_at(percent, swap_bytes)
            row = {"scenario": scenario, "usage_percent": percent, "entries": entries}
            for design in designs:
                row[design.key] = design.overhead_bytes(design.backend_for(scenario), slots, entries) / MIB
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


