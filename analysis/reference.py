"""Published numbers kept as data in results/reference/ (see results/reference/README.md)."""
from pathlib import Path

import pandas as pd

REFERENCE_DIR = Path(__file__).resolve().parent.parent / "results" / "reference"
TIMES_FILE = "published-times.csv"
CHANGES_FILE = "printed-changes.csv"
OVERHEAD_FILE = "cover-letter-v3-overhead.csv"
# The setups of published-times.csv that the report sets beside its tables.
COVER_LETTER_KERNEL_BUILD = "nhat-kernel-build"
COVER_LETTER_SWAPOFF = "swapoff-32g-half"
# The kernels a printed change is between, as published-times.csv names them.
PUBLISHED_BASE, PUBLISHED_NEW = "baseline", "vswap"
CHANGE_KEYS = ["version", "setup", "backend", "metric"]


def published_times(reference_dir: Path = REFERENCE_DIR) -> pd.DataFrame:
    return pd.read_csv(reference_dir / TIMES_FILE)


def published_ratios(setup: str, reference_dir: Path = REFERENCE_DIR) -> pd.DataFrame:
    """Per version, backend and metric of SETUP, in the file's order: the published base and new mean and sd,
    and new/base computed from those means (the text's own percentages are not always their arithmetic:
    printed_changes)."""
    times = published_times(reference_dir)
    times = times[times["setup"] == setup]
    wide = times.pivot_table(index=CHANGE_KEYS, columns="kernel", values=["mean", "stdev"], aggfunc="first",
                             dropna=False, sort=False)
    if ("mean", PUBLISHED_BASE) not in wide.columns or ("mean", PUBLISHED_NEW) not in wide.columns:
        return pd.DataFrame(columns=CHANGE_KEYS + ["base_mean", "base_sd", "new_mean", "new_sd", "ratio"])
    ratios = pd.DataFrame({
        "base_mean": wide[("mean", PUBLISHED_BASE)], "base_sd": wide[("stdev", PUBLISHED_BASE)],
        "new_mean": wide[("mean", PUBLISHED_NEW)], "new_sd": wide[("stdev", PUBLISHED_NEW)],
    }).dropna(subset=["base_mean", "new_mean"])
    return ratios.assign(ratio=ratios["new_mean"] / ratios["base_mean"]).reset_index()


def _decimals(printed: str) -> int:
    return len(printed.partition(".")[2])


def printed_changes(reference_dir: Path = REFERENCE_DIR) -> pd.DataFrame:
    """Every change a source printed as a percentage, beside the change its own quoted means give:
    printed_percent, computed_percent, and agrees (the computed change rounded as printed is the printed)."""
    changes = pd.read_csv(reference_dir / CHANGES_FILE, dtype={"printed_percent": str})
    ratios = pd.concat([published_ratios(setup, reference_dir) for setup in changes["setup"].unique()])
    merged = changes.merge(ratios, on=CHANGE_KEYS, how="left")
    lacking = merged[merged["ratio"].isna()]
    if len(lacking):
        row = lacking.iloc[0]
        raise ValueError(f"{CHANGES_FILE}: {' '.join(str(row[key]) for key in CHANGE_KEYS)} has no "
                         f"{PUBLISHED_BASE} and {PUBLISHED_NEW} means in {TIMES_FILE}")
    computed = 100 * (merged["ratio"] - 1)
    merged["agrees"] = [round(value, _decimals(text)) == float(text)
                        for value, text in zip(computed, merged["printed_percent"])]
    return merged.assign(printed_percent=merged["printed_percent"].astype(float), computed_percent=computed)


def published_overhead(reference_dir: Path = REFERENCE_DIR) -> pd.DataFrame:
    # Kept as text: the test compares the model against the numbers exactly as printed.
    return pd.read_csv(reference_dir / OVERHEAD_FILE, dtype={"overhead_mib": str})
