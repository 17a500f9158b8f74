"""The regression gate: one campaign, one decision, one exit status (`python3 -m analysis gate`).

It judges the kernel under test against the control kernel within the campaign, and against the last
accepted campaign over time as its ratio to the control in each (so that a slower or faster machine cancels
out; the control against itself is the drift control), on each workload's headline metrics. The campaign
becomes the next base (accepted) only when the gate passes or finds an improvement, never on a regression,
a possible regression or an inconclusive row.
"""
from dataclasses import dataclass
from typing import Optional

import pandas as pd

from . import verdicts
from .loader import Campaign

ACCEPTED_OUTCOMES = (verdicts.NO_CHANGE, verdicts.POSSIBLE_IMPROVEMENT, verdicts.IMPROVEMENT)


@dataclass
class Decision:
    within: pd.DataFrame     # the test kernel against the control in this campaign
    over_time: pd.DataFrame  # its ratio to the control against the base's (empty without a base)
    drift: pd.DataFrame      # the control against itself in the base (the same kernel_id only)
    outcome: str
    exit_status: int
    accepted: bool


def decide(campaign: Campaign, base: Optional[Campaign], control: str, test: str,
           default_margin: float = verdicts.DEFAULT_MARGIN, fail_on_possible_regression: bool = False) -> Decision:
    within = verdicts.compare_kernels(campaign.metrics, campaign.runs, control, test, default_margin,
                                      headlines_only=True)
    over_time = drift = within.iloc[:0]
    if base is not None:
        over_time, drift = verdicts.compare_over_time(base.metrics, base.runs, campaign.metrics, campaign.runs,
                                                      control, test, default_margin, headlines_only=True)
    outcome = verdicts.overall_outcome(pd.concat([within, over_time], ignore_index=True))
    return Decision(within, over_time, drift, outcome,
                    verdicts.exit_status(outcome, fail_on_possible_regression), outcome in ACCEPTED_OUTCOMES)
