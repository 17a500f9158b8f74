"""python3 -m vswap_bench COMMAND ...: the host side's commands (harness/*.sh and run.sh call them).

  plan CAMPAIGN_FILE OUT_DIR [key=value ...]   expand a campaign into OUT_DIR; prints the number of runs
  params PARAMS                                the run a params file describes, every setting resolved and
                                               checked, as sorted key=value lines
  progress OUT_DIR ROOT...                     a line per planned run of OUT_DIR, in plan order: RUN_ID
                                               KERNEL WORKLOAD BACKEND REPETITION STATUS FINISHED(0/1)
                                               ESTIMATE_S ESTIMATE_BY, from the finished runs under ROOTs
  run-record PARAMS RUN_DIR KERNEL_JSON IMAGE_JSON
                                               write RUN_DIR/run.json for the run PARAMS describes
Exit 0; 64 on bad input (nothing written); 4 when a file cannot be written.
"""
import sys
from pathlib import Path

from . import campaign, record, runfiles
from .record import RecordError
from .progress import FINISHED, planned_runs
from .runspec import read_params
from .settings import UsageError
from .status import USAGE_EXIT, Status


def plan(arguments):
    if len(arguments) < 2:
        raise UsageError("usage: plan CAMPAIGN_FILE OUT_DIR [key=value ...]")
    path, out, overrides = Path(arguments[0]), Path(arguments[1]), arguments[2:]
    if not path.is_file():
        raise UsageError(f"campaign file '{path}' not found (see campaigns/)")
    parsed = campaign.parse_campaign(path)
    campaign.apply_overrides(parsed, overrides)
    runs = campaign.plan_runs(parsed)
    campaign.write_plan(parsed, runs, out)
    print(len(runs))


def params(arguments):
    if len(arguments) != 1:
        raise UsageError("usage: params PARAMS")
    print(read_params(Path(arguments[0])).params_text(), end="")


def progress(arguments):
    if not arguments:
        raise UsageError("usage: progress OUT_DIR ROOT...")
    for run in planned_runs(Path(arguments[0]), [Path(root) for root in arguments[1:]]):
        print(run.run_id, run.kernel, run.workload, run.backend, run.repetition, run.status,
              int(run.status in FINISHED), run.estimate_s, run.estimate_by)


def run_record(arguments):
    if len(arguments) != 4:
        raise UsageError("usage: run-record PARAMS RUN_DIR KERNEL_JSON IMAGE_JSON")
    runfiles.write_run_json(*map(Path, arguments))


COMMANDS = {"plan": plan, "params": params, "progress": progress, "run-record": run_record}


def main(argv) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return USAGE_EXIT
    try:
        COMMANDS[argv[0]](argv[1:])
    except UsageError as error:
        print(f"vswap_bench: error: {error}", file=sys.stderr)
        return USAGE_EXIT
    except RecordError as error:
        print(f"vswap_bench: error: {error}", file=sys.stderr)
        return Status.FAILED_INFRA.exit_code
    return 0


sys.exit(main(sys.argv[1:]))
