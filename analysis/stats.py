"""Statistics for two groups of repetitions: summary, ratio of means with a bootstrap CI, Mann-Whitney U.

The bootstrap uses a fixed seed so that a report rebuilt from the same data prints the same interval.
"""
import warnings
from typing import NamedTuple

import numpy as np
from scipy import stats as scipy_stats

BOOTSTRAP_SEED = 20260208  # the v3 cover letter's date; any fixed value would do
BOOTSTRAP_RESAMPLES = 10_000
CONFIDENCE = 0.95
# Below this many repetitions per side, the interval and the p-value are too coarse to trust:
# with n=4 vs 4 the smallest two-sided Mann-Whitney p-value is 0.029, with n=2 vs 2 it is 0.33.
MIN_REPETITIONS = 5


class Summary(NamedTuple):
    mean: float
    sd: float
    n: int


class RatioEstimate(NamedTuple):
    ratio: float      # mean(new) / mean(base)
    ci_low: float
    ci_high: float
    p_value: float    # two-sided Mann-Whitney U

    @property
    def ci_excludes_one(self) -> bool:
        return bool(self.ci_low > 1 or self.ci_high < 1)


def summarize(values) -> Summary:
    values = np.asarray(values, dtype=float)
    sd = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
    return Summary(float(values.mean()), sd, len(values))


def bootstrap_ratio_ci(base, new, *, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED, confidence=CONFIDENCE):
    """Percentile bootstrap CI of mean(new)/mean(base), resampling each group independently."""
    base, new = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    rng = np.random.default_rng(seed)
    base_means = rng.choice(base, size=(resamples, len(base))).mean(axis=1)
    new_means = rng.choice(new, size=(resamples, len(new))).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = new_means / base_means
    # A resample whose base mean is 0 (a counter that was 0 in some runs) has no ratio.
    ratios = ratios[np.isfinite(ratios)]
    if not ratios.size:
        return float("nan"), float("nan")
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


def mann_whitney_p(base, new) -> float:
    base, new = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    if np.unique(np.concatenate([base, new])).size < 2:
        return 1.0  # every value identical: no evidence of any difference (scipy would return nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns about ties at tiny n; the p-value is still defined
        return float(scipy_stats.mannwhitneyu(new, base, alternative="two-sided").pvalue)


def compare_samples(base, new) -> RatioEstimate:
    base_mean = float(np.mean(base))
    ratio = float(np.mean(new)) / base_mean if base_mean else float("nan")
    if min(len(base), len(new)) < 2:
        # Resampling one value gives that value back: a zero-width "interval" that would look
        # significant.  With a single repetition there is no interval at all.
        low = high = float("nan")
    else:
        low, high = bootstrap_ratio_ci(base, new)
    return RatioEstimate(ratio, low, high, mann_whitney_p(base, new))
