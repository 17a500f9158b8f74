"""python3 -m vswap_bench COMMAND ...: the host side's commands (harness/*.sh and run.sh call them).

  plan CAMPAIGN_FILE OUT_DIR [key=value ...]   expand a campaign into OUT_DIR; prints the number of runs
  params PARAMS                                the run a params file describes, every setting resolved and
                                               checked, as sorted key=value lines
  progress [--shard K/N] OUT_DIR ROOT...       a line per planned run of OUT_DIR (of share K of N), in plan
                                               order: RUN_ID
                                               LABEL WORKLOAD BACKEND REPETITION STATUS FINISHED(0/1)
                                               ESTIMATE_S ESTIMATE_BY KERNEL, from the finished runs
                                               under ROOTs (LABEL: KERNEL, or KERNEL-aa for an A/A run)
  run-record PARAMS RUN_DIR KERNEL_JSON IMAGE_JSON
                                               write RUN_DIR/run.json for the run PARAMS describes
  collect OUT_DIR --qemu-exit N --interrupted 0|1 --timeout S --host-seconds S --accelerator A
          --timing T --vcpus N --mem MB --swap-mb MB --image IMG -- QEMU_COMMAND...
                                               once QEMU has exited: split the agent's records into
                                               files, decide the outcome, write qemu.json; exits with
                                               the outcome's exit code
  pin-image GUEST_JSON INPUTS_DIR             hard-link (or copy) the guest image into INPUTS_DIR with a
                                               guest.json naming it there
  merge DEST SHARE_DIR...                      gather the shares of one campaign (run.sh --shard) into DEST
  write-record JSON_FILE KEY=STRING|KEY:=JSON|KEY+=STRING ...
                                               write a record (kernel.json, guest.json) atomically, with
                                               the schema: a string, a JSON value, an item of a list
  field JSON_FILE KEY                          the string value of KEY in a JSON object ("" if none)
  status RUN_DIR STARTED STATUS REASON         write status.json
  final-status RUN_DIR STARTED REASON          status.json from qemu.json's outcome, or failed-infra
                                               for REASON when there is none
Exit 0; 64 on bad input (nothing written); 4 when a file cannot be written.
"""
import argparse
import sys
from pathlib import Path

from . import campaign, record, runfiles, shards
from .record import RecordError
from .progress import planned_runs
from .runspec import read_params
from .settings import UsageError
from .status import FINISHED, USAGE_EXIT, Status


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
              int(run.status in FINISHED), run.estimate_s, run.estimate_by, run.build)


def run_record(arguments):
    if len(arguments) != 4:
        raise UsageError("usage: run-record PARAMS RUN_DIR KERNEL_JSON IMAGE_JSON")
    runfiles.write_run_json(*map(Path, arguments))


def collect(arguments):
    parser = argparse.ArgumentParser(prog="vswap_bench collect")
    parser.add_argument("out", type=Path)
    for option in ("qemu-exit", "interrupted", "timeout", "vcpus", "mem", "swap-mb"):
        parser.add_argument(f"--{option}", type=int, required=True)
    parser.add_argument("--host-seconds", type=float, required=True)
    for option in ("accelerator", "timing", "image"):
        parser.add_argument(f"--{option}", required=True)
    parser.add_argument("command", nargs="+")
    try:
        options = parser.parse_args(arguments)
    except SystemExit:
        raise UsageError("collect: bad arguments (see above)") from None
    qemu = {"accelerator": options.accelerator, "timing_mode": options.timing, "vcpus": options.vcpus,
            "guest_mem_mb": options.mem, "swap_mb": options.swap_mb, "image": options.image,
            "command": " ".join(options.command)}
    status, reason = runfiles.collect(options.out, qemu, qemu_exit=options.qemu_exit,
                                      interrupted=bool(options.interrupted), timeout_s=options.timeout,
                                      host_seconds=round(options.host_seconds, 3))
    if status is not Status.DONE:
        print(f"vswap_bench: warning: {status.value}: {reason} (log: {options.out / 'serial.log'})", file=sys.stderr)
    return status.exit_code


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


def status(arguments):
    if len(arguments) != 4:
        raise UsageError("usage: status RUN_DIR STARTED STATUS REASON")
    try:
        chosen = Status(arguments[2])
    except ValueError:
        raise UsageError(f"unknown status '{arguments[2]}' ({' '.join(s.value for s in Status)})") from None
    runfiles.write_status(Path(arguments[0]), chosen, arguments[3], arguments[1])


def final_status(arguments):
    if len(arguments) != 3:
        raise UsageError("usage: final-status RUN_DIR STARTED REASON")
    runfiles.write_final_status(Path(arguments[0]), arguments[1], arguments[2])


COMMANDS = {"plan": plan, "params": params, "progress": progress, "run-record": run_record, "collect": collect,
            "pin-image": pin_image, "field": field, "write-record": write_record, "merge": merge, "status": status, "final-status": final_status}


def main(argv) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return USAGE_EXIT
    try:
        return COMMANDS[argv[0]](argv[1:]) or 0
    except UsageError as error:
        print(f"vswap_bench: error: {error}", file=sys.stderr)
        return USAGE_EXIT
    except RecordError as error:
        print(f"vswap_bench: error: {error}", file=sys.stderr)
        return Status.FAILED_INFRA.exit_code


sys.exit(main(sys.argv[1:]))
