"""Published numbers kept as data in results/reference/ (see results/reference/README.md)."""
from pathlib import Path

import pandas as pd

REFERENCE_DIR = Path(__file__).resolve().parent.parent / "results" / "reference"
SYSTIME_FILE = "kernel-build-systime.csv"
OVERHEAD_FILE = "cover-letter-v3-overhead.csv"


def published_systime(reference_dir: Path = REFERENCE_DIR) -> pd.DataFrame:
    return pd.read_csv(reference_dir / SYSTIME_FILE)


def published_overhead(reference_dir: Path = REFERENCE_DIR) -> pd.DataFrame:
    # Kept as text: the test compares the model against the numbers exactly as printed.
    return pd.read_csv(reference_dir / OVERHEAD_FILE, dtype={"overhead_mib": str})
