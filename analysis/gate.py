"""The regression gate: one campaign, one decision, one exit status (`python3 -m analysis gate`).

It judges the kernel under test against the control kernel within the campaign, and against the last
accepted campaign over time as its ratio to the control in each (so that a slower or faster machine cancels
out; the control against itself is the drift control), on each workload's headline metrics. The campaign
becomes the next base (accepted) only when the gate passes or finds an improvement, never on a regression,
a possible regression or an inconclusive row.  A campaign some of whose planned runs did not run or did not
end (stopped by ^C, or run.sh died) is incomplete: inconclusive at best, never a base.
"""
from dataclasses import dataclass
from typing import Optional

import pandas as pd

from vswap_bench.status import has_ended

from . import verdicts
from .loader import Campaign
from .schema import STATUS_NOT_STARTED, STATUS_UNREADABLE_RESULT

ACCEPTED_OUTCOMES = (verdicts.NO_CHANGE, verdicts.POSSIBLE_IMPROVEMENT, verdicts.IMPROVEMENT)
NAMED_RUNS = 5  # the run ids an incomplete campaign's line names of each kind; the report's runs table has all


@dataclass
class Decision:
    within: pd.DataFrame     # the test kernel against the control in this campaign
    over_time: pd.DataFrame  # its ratio to the control against the base's (empty without a base)
    drift: pd.DataFrame      # the control against itself in the base (the same kernel_id only)
    incomplete: str          # what did not run or end of the campaign's plan; "" when every planned run ended
    outcome: str
    exit_status: int
    accepted: bool


def _named(run_ids: pd.Series) -> str:
    more = len(run_ids) - NAMED_RUNS
    return ", ".join(run_ids.iloc[:NAMED_RUNS]) + (f" and {more} more" if more > 0 else "")


def incomplete(runs: pd.DataFrame) -> str:
    """"" when every planned run of the campaign ended; else a line naming the runs that did not run and those
    that started and have no ending.  Neither kind can be paired: a run that never started has no kernel or
    configuration yet, so a configuration none of whose runs started would vanish from every comparison."""
    status = runs["status"]
    # An unreadable result ended (done): the pairing counts it lost.
    ended = status.map(has_ended) | (status == STATUS_UNREADABLE_RESULT)
    kinds = [("did not run", runs.loc[status == STATUS_NOT_STARTED, "run_id"]),
             ("did not end", runs.loc[~ended & (status != STATUS_NOT_STARTED), "run_id"])]
    said = [f"{len(run_ids)} {kind} ({_named(run_ids)})" for kind, run_ids in kinds if len(run_ids)]
    return f"incomplete: of {len(runs)} planned runs, {'; '.join(said)}" if said else ""


def decide(campaign: Campaign, base: Optional[Campaign], control: str, test: str,
           default_margin: float = verdicts.DEFAULT_MARGIN, fail_on_possible_regression: bool = False) -> Decision:
    within = verdicts.compare_kernels(campaign.metrics, campaign.runs, control, test, default_margin,
                                      headlines_only=True)
    over_time = drift = within.iloc[:0]
    if base is not None:
        over_time, drift = verdicts.compare_over_time(base.metrics, base.runs, campaign.metrics, campaign.runs,
                                                      control, test, default_margin, headlines_only=True)
    outcome = verdicts.overall_outcome(pd.concat([within, over_time], ignore_index=True))
    missing = incomplete(campaign.runs)
    if missing:
        # What did not run could have decided anything: only a regression among the runs that did stands.
        outcome = next(o for o in verdicts.EXIT_STATUS if o in (outcome, verdicts.INCONCLUSIVE))
    return Decision(within, over_time, drift, missing, outcome,
                    verdicts.exit_status(outcome, fail_on_possible_regression), outcome in ACCEPTED_OUTCOMES)
