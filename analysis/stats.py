"""Statistics for two groups of repetitions: summary, the ratio of means with its interval and p-value, and
the Benjamini-Hochberg correction across the rows of one comparison.

The interval is Welch's t interval of the log of the ratio of means: the variance of each log-mean by the
delta method (sd² / (n·mean²)), the degrees of freedom by Welch-Satterthwaite, and the p-value the same
test's. It replaced a percentile bootstrap, which at n=5 is too narrow (the interval of five values resampled
never reaches beyond their range): in a simulation it excluded 1.0 in 12 % of A/A trials, Welch's in about 5 %
(analysis/tests/test_gate_defects.py). Unlike Mann-Whitney, whose smallest p at 3 vs 3 is 0.10, it can
decide with the default three repetitions.
"""
from typing import NamedTuple

import numpy as np
from scipy import stats as scipy_stats

CONFIDENCE = 0.95
# Fewer repetitions than this on either side give no interval and no p-value: with two, the sample sd is
# one difference and Welch's degrees of freedom can fall to 1, so one lucky pair would look decisive.
MIN_REPETITIONS = 3


class Summary(NamedTuple):
    mean: float
    sd: float
    n: int


class RatioEstimate(NamedTuple):
    ratio: float      # mean(new) / mean(base)
    ci_low: float
    ci_high: float
    p_value: float    # two-sided Welch t on the log ratio; nan without an interval

    @property
    def ci_excludes_one(self) -> bool:
        return bool(self.ci_low > 1 or self.ci_high < 1)


def summarize(values) -> Summary:
    values = np.asarray(values, dtype=float)
    sd = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
    return Summary(float(values.mean()), sd, len(values))


def compare_samples(base, new, confidence: float = CONFIDENCE) -> RatioEstimate:
    base, new = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    base_mean, new_mean = float(base.mean()), float(new.mean())
    ratio = new_mean / base_mean if base_mean else float("nan")
    nan = float("nan")
    # A log ratio needs two positive means (a counter that is 0 on one side has none).
    if min(len(base), len(new)) < MIN_REPETITIONS or base_mean <= 0 or new_mean <= 0:
        return RatioEstimate(ratio, nan, nan, nan)
    base_var = base.var(ddof=1) / (len(base) * base_mean ** 2)
    new_var = new.var(ddof=1) / (len(new) * new_mean ** 2)
    log_ratio, standard_error = float(np.log(ratio)), float(np.sqrt(base_var + new_var))
    if standard_error == 0:
        # Every repetition identical on both sides (an exact count): the difference, if any, is certain.
        return RatioEstimate(ratio, ratio, ratio, 1.0 if ratio == 1 else 0.0)
    freedom = (base_var + new_var) ** 2 / (base_var ** 2 / (len(base) - 1) + new_var ** 2 / (len(new) - 1))
    half_width = scipy_stats.t.ppf((1 + confidence) / 2, freedom) * standard_error
    p_value = float(2 * scipy_stats.t.sf(abs(log_ratio) / standard_error, freedom))
    return RatioEstimate(ratio, float(np.exp(log_ratio - half_width)), float(np.exp(log_ratio + half_width)), p_value)


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q); nan stays nan and is not counted among the tests.

    scipy.stats.false_discovery_control does this from scipy 1.11; Debian 12's scipy is 1.10."""
    p_values = np.asarray(p_values, dtype=float)
    adjusted = np.full(p_values.shape, np.nan)
    tested = np.flatnonzero(~np.isnan(p_values))
    if not tested.size:
        return adjusted
    order = tested[np.argsort(p_values[tested], kind="stable")]
    scaled = p_values[order] * tested.size / np.arange(1, tested.size + 1)
    # q of the k-th smallest p is the smallest scaled value from k on (the step-up procedure).
    adjusted[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return adjusted
