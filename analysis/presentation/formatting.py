"""Number formatting shared by every table, so the text, Markdown and HTML outputs agree."""
import math

MISSING = "–"  # an en dash: where a table has no number to show


def missing(*values) -> bool:
    """Any of VALUES none or NaN."""
    return any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values)


def significant(value: float, digits: int = 4) -> str:
    """A measurement with `digits` significant figures, without scientific notation for ordinary sizes."""
    if missing(value):
        return ""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(value)))))
    return f"{value:,.{decimals}f}"


def fixed(value: float, digits: int) -> str:
    """VALUE to DIGITS decimals, MISSING for none."""
    return MISSING if missing(value) else f"{value:.{digits}f}"


def mean_sd(mean: float, sd: float) -> str:
    return significant(mean) if missing(sd) else f"{significant(mean)} ± {significant(sd, 2)}"


def mean_sd_percent(mean: float, sd: float) -> str:
    """mmtests style: mean and stdev as a percentage of the mean."""
    if missing(sd) or not mean:
        return significant(mean)
    return f"{significant(mean)} ±{100 * sd / abs(mean):.1f}%"


def percent_change(ratio: float) -> str:
    return "" if missing(ratio) else f"{100 * (ratio - 1):+.2f}%"


def ratio_ci(ratio: float, low: float, high: float) -> str:
    if missing(ratio):
        return ""
    return f"{ratio:.3f} [no CI]" if missing(low) else f"{ratio:.3f} [{low:.3f}, {high:.3f}]"


def percent_change_ci(ratio: float, low: float, high: float) -> str:
    if missing(ratio):
        return ""
    if missing(low):
        return f"{percent_change(ratio)} [no CI]"
    return f"{percent_change(ratio)} [{percent_change(low)}, {percent_change(high)}]"


def p_value(p: float) -> str:
    if missing(p):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"
