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
    """mean(new) / mean(base) with its interval."""
    return ratio_of_means([new], [base], confidence)


def ratio_of_means(numerators, denominators, confidence: float = CONFIDENCE) -> RatioEstimate:
    """The product of the numerator groups' means over the product of the denominator groups' means, with
    Welch's interval of its logarithm: one group a side is new over base; two a side, (new / its control) over
    (base / its control), is a ratio of ratios, in which whatever slowed both kernels of a campaign cancels."""
    groups = [np.asarray(group, dtype=float) for group in (*numerators, *denominators)]
    means = np.array([group.mean() for group in groups])
    above, below = means[:len(numerators)], means[len(numerators):]
    ratio = float(np.prod(above) / np.prod(below)) if below.all() else float("nan")
    nan = float("nan")
    # A log ratio needs positive means (a counter that is 0 on one side has none).
    if min(len(group) for group in groups) < MIN_REPETITIONS or (means <= 0).any():
        return RatioEstimate(ratio, nan, nan, nan)
    variances = np.array([group.var(ddof=1) / (len(group) * mean ** 2) for group, mean in zip(groups, means)])
    log_ratio, standard_error = float(np.log(ratio)), float(np.sqrt(variances.sum()))
    if standard_error == 0:
        # Every repetition identical in every group (an exact count): the difference, if any, is certain.
        return RatioEstimate(ratio, ratio, ratio, 1.0 if ratio == 1 else 0.0)
    freedom = variances.sum() ** 2 / sum(variance ** 2 / (len(group) - 1)
                                         for variance, group in zip(variances, groups))
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
