"""python3 -m vswap_bench COMMAND ...: the host side's commands (harness/*.sh and run.sh call them).

  plan CAMPAIGN_FILE OUT_DIR [key=value ...]   expand a campaign into OUT_DIR; prints the number of runs
  params PARAMS                                the run a params file describes, every setting resolved and
                                               checked, as sorted key=value lines
  progress [--shard K/N] OUT_DIR ROOT...       a line per planned run of OUT_DIR (of share K of N), in plan
                                               order: RUN_ID
                                               LABEL WORKLOAD BACKEND REPETITION STATUS RESUME
                                               ENDED(0/1) PASSED(0/1) ESTIMATE_S ESTIMATE_BY KERNEL, from
                                               the finished runs under ROOTs (LABEL: KERNEL, or KERNEL-aa
                                               for an A/A run; RESUME: keep, retry-once or run; status.py)
  run-one PARAMS RUN_DIR                       one run: boot the guest PARAMS describes with QEMU, collect
                                               its records and outcome into RUN_DIR (runner.py); exits with
                                               the outcome's exit code (status.py)
  overrides CAMPAIGN_JSON                      the key=value overrides a campaign was planned with, a line each
  pin-image GUEST_JSON INPUTS_DIR             hard-link (or copy) the guest image into INPUTS_DIR with a
                                               guest.json naming it there
  merge DEST SHARE_DIR...                      gather the shares of one campaign (run.sh --shard) into DEST
  write-record JSON_FILE KEY=STRING|KEY:=JSON|KEY+=STRING ...
                                               write a record (kernel.json, guest.json) atomically, with
                                               the schema: a string, a JSON value, an item of a list;
                                               KEY may be OUTER.INNER (INNER in the object OUTER)
  field JSON_FILE KEY                          the string value of KEY in a JSON object ("" if none)
  kernel-variant NAME                          "VARIANT FLAVOUR" of the kernel NAME (a campaign's kernel=,
                                               make kernel-NAME), for harness/build-kernel.sh
  boot-check BZIMAGE                           whether BZIMAGE boots the guest image to its agent: exit 0,
                                               or 1 with the end of its console (harness/build-check.sh)
Exit 0; 64 on bad input (nothing written); 74 when a file cannot be written; run-one: its run's exit code, or 75
when a process of an earlier run holds the run's folder (the run not started).
"""
import signal
import sys
from pathlib import Path

from . import campaign, record, runfiles, runner, settings, shards
from .children import INTERRUPTS
from .record import RecordError
from .progress import planned_runs
from .runspec import read_params
from .settings import UsageError
from .status import LOCK_HELD_EXIT, PASSED, RECORD_EXIT, USAGE_EXIT, Status, has_ended, resume_action


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
    shard = None
    if arguments[:1] == ["--shard"] and len(arguments) > 1:
        shard, arguments = shards.parse_shard(arguments[1]), arguments[2:]
    if not arguments:
        raise UsageError("usage: progress [--shard K/N] OUT_DIR ROOT...")
    for run in planned_runs(Path(arguments[0]), [Path(root) for root in arguments[1:]], shard):
        print(run.run_id, run.kernel, run.workload, run.backend, run.repetition, run.status,
              resume_action(run.status), int(has_ended(run.status)), int(run.status in PASSED),
              run.estimate_s, run.estimate_by, run.build)


def overrides(arguments):
    if len(arguments) != 1:
        raise UsageError("usage: overrides CAMPAIGN_JSON")
    for override in campaign.read_plan_record(Path(arguments[0]))["overrides"]:
        print(override)


def run_one(arguments):
    if len(arguments) != 2:
        raise UsageError("usage: run-one PARAMS RUN_DIR")
    return runner.run_one(Path(arguments[0]), Path(arguments[1]))


def pin_image(arguments):
    if len(arguments) != 2:
        raise UsageError("usage: pin-image GUEST_JSON INPUTS_DIR")
    runfiles.pin_image(Path(arguments[0]), Path(arguments[1]))


def merge(arguments):
    if len(arguments) < 2:
        raise UsageError("usage: merge DEST SHARE_DIR...")
    origin = shards.merge(Path(arguments[0]), [Path(share) for share in arguments[1:]])
    ran = sum(1 for run_id, share in origin.items() if shards.ran(share / "runs" / run_id))
    print(f"merged {len(arguments) - 1} shares into {arguments[0]}: {ran} of {len(origin)} runs ran")


def write_record(arguments):
    if not arguments:
        raise UsageError("usage: write-record JSON_FILE KEY=STRING|KEY:=JSON|KEY+=STRING ...")
    record.write_json(Path(arguments[0]), record.parse_fields(arguments[1:]))


def field(arguments):
    if len(arguments) != 2:
        raise UsageError("usage: field JSON_FILE KEY")
    print(runfiles.string_field(Path(arguments[0]), arguments[1]))


def kernel_variant(arguments):
    if len(arguments) != 1:
        raise UsageError("usage: kernel-variant NAME")
    print(*settings.kernel_build(arguments[0]))


def boot_check(arguments):
    if len(arguments) != 1:
        raise UsageError("usage: boot-check BZIMAGE")
    return runner.boot_check(Path(arguments[0]))


COMMANDS = {"plan": plan, "params": params, "progress": progress, "overrides": overrides, "run-one": run_one,
            "pin-image": pin_image, "field": field, "write-record": write_record, "merge": merge,
            "kernel-variant": kernel_variant, "boot-check": boot_check}


class Stopped(BaseException):
    """A signal of INTERRUPTS came (outside children.Interrupts, which passes them on to a run's child)."""


def _stop(number, frame):
    raise Stopped(number)


def main(argv) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return USAGE_EXIT
    # A signal stops a command with one line and 128 + its number, as a shell reports it, not with a
    # traceback; one ignored on entry (INT in a script's background child) stays ignored.
    for number in INTERRUPTS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, _stop)
    try:
        return COMMANDS[argv[0]](argv[1:]) or 0
    except Stopped as stop:
        number = stop.args[0]
        print(f"vswap_bench: {argv[0]} stopped by {signal.Signals(number).name}", file=sys.stderr)
        return 128 + number
    except UsageError as error:
        print(f"vswap_bench: error: {error}", file=sys.stderr)
        return USAGE_EXIT
    except RecordError as error:
        runner.say(f"vswap_bench: error: {error}")
        return RECORD_EXIT
    except runner.LockHeld as error:
        runner.say(f"vswap_bench: error: {error}")
        return LOCK_HELD_EXIT
    except runner.RunError as error:
        runner.say(f"vswap_bench: error: {error}")
        return Status.FAILED_INFRA.exit_code


sys.exit(main(sys.argv[1:]))
