"""How often the regression gate decides right: repeated trials on synthetic campaigns (issue #37's targets).

    /usr/bin/python3 -m analysis.gate_trials [--trials 200] [--seed 37]

Each trial is an accepted base campaign and a new one, both with the baseline, its A/A group and vswap, 5 runs
each of kernel-build through zswap, decided by gate.decide() as `python3 -m analysis gate` decides them. The
campaigns are written once by the tests' own writer (analysis/tests/synthetic.py, into a temporary directory)
and every trial draws new times for their runs: real and sys normal around 100 s and 20 s with the case's
relative noise, user = real and cpu = real + sys as the writer records them. The cases and their targets:
  regression  vswap +2 % at 0.5 % noise: caught (the gate exits 1) in at least 95 % of trials;
  no change   vswap unchanged at 1 % noise: never fails (the gate exits 0, 3 or 4) in at least 95 % of trials.
A possible regression passes by default and fails with --fail-on-possible-regression: the rates are given for
both. Prints each case's outcomes and rates; exits 0 when the default gate meets both targets, 1 when not.
"""
import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from . import gate, verdicts
from .loader import Campaign, load_campaign
from .tests.synthetic import samples, write_campaign

REAL_S, SYS_S, RUNS = 100.0, 20.0, 5
KERNELS = ("baseline", "baseline-aa", "vswap")
TARGET = 0.95


def template(root: Path, name: str) -> Campaign:
    """A campaign of RUNS runs of each kernel, whose times each trial draws again."""
    return load_campaign(write_campaign(root, name, {(kernel, "zswap"): samples(REAL_S, SYS_S, RUNS, 0.01, seed=1)
                                                     for kernel in KERNELS}))


def drawn(campaign: Campaign, vswap_factor: float, noise: float, rng) -> Campaign:
    """CAMPAIGN with new times for every run: vswap's means times VSWAP_FACTOR, relative sd NOISE."""
    runs = campaign.runs.set_index("run_id")["kernel"]
    factor = np.where(runs == "vswap", vswap_factor, 1.0)
    real = pd.Series(rng.normal(REAL_S * factor, REAL_S * factor * noise), index=runs.index)
    sys_time = pd.Series(rng.normal(SYS_S * factor, SYS_S * factor * noise), index=runs.index)
    times = {"real": real, "user": real, "sys": sys_time, "cpu": real + sys_time}
    metrics = campaign.metrics.copy()
    for metric, values in times.items():
        chosen = metrics["metric"] == metric
        metrics.loc[chosen, "value"] = metrics.loc[chosen, "run_id"].map(values)
    return replace(campaign, metrics=metrics)


def trial_outcomes(base: Campaign, new: Campaign, vswap_factor: float, noise: float, trials: int, rng) -> pd.Series:
    """How many of TRIALS gave each outcome."""
    outcomes = [gate.decide(drawn(new, vswap_factor, noise, rng), drawn(base, 1.0, noise, rng), "baseline",
                            "vswap").outcome for _ in range(trials)]
    return pd.Series(outcomes).value_counts().reindex(list(verdicts.EXIT_STATUS), fill_value=0)


def main(argv=None) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--trials", type=int, default=200)
    options.add_argument("--seed", type=int, default=37)
    args = options.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as root:
        base, new = template(Path(root), "base"), template(Path(root), "new")
        regression = trial_outcomes(base, new, 1.02, 0.005, args.trials, rng)
        unchanged = trial_outcomes(base, new, 1.0, 0.01, args.trials, rng)
    print(f"{args.trials} trials a case, seed {args.seed}, n={RUNS} a kernel with an A/A group; outcomes:")
    print(pd.DataFrame({"+2% at 0.5%": regression, "no change at 1%": unchanged}).to_string())
    rates = {}
    for flag, failing in (("default", [verdicts.REGRESSION]),
                          ("--fail-on-possible-regression", [verdicts.REGRESSION, verdicts.POSSIBLE_REGRESSION])):
        rates[flag] = (regression[failing].sum() / args.trials, 1 - unchanged[failing].sum() / args.trials)
        print(f"{flag}: +2% at 0.5% noise caught in {100 * rates[flag][0]:.1f}%, no change at 1% noise never "
              f"failed in {100 * rates[flag][1]:.1f}% (target {100 * TARGET:.0f}% each)")
    return 0 if min(rates["default"]) >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
