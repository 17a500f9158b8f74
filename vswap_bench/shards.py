"""A campaign spread over hosts: each runs a fixed share of the same plan (run.sh --shard K/N), and merge
gathers the shares into one campaign folder.  Any scheduler can start the shares (a Slurm job array, a CI
matrix, GNU parallel over ssh); there is none here.

A share is a set of configurations, not of runs: every kernel and repetition of a configuration runs on one
host, so the two kernels of a comparison are measured side by side on the same machine.
"""
import os
import shutil
from pathlib import Path

from . import record, runfiles
from .campaign import read_plan_record
from .runfiles import PINNED_IMAGE
from .settings import MAX_RUNS, UsageError, whole_number
from .status import FINISHED, RETRIED_ONCE


# More shares than runs a plan may have (settings.MAX_RUNS) leaves every share past them empty.
MAX_SHARES = MAX_RUNS


def parse_shard(text: str) -> tuple[int, int]:
    """K/N -> (K, N) with 1 <= K <= N."""
    index, _, count = text.partition("/")
    count_value = whole_number(count, 1, MAX_SHARES)
    index_value = whole_number(index, 1, count_value or 1)
    if count_value is None or index_value is None:
        raise UsageError(f"--shard takes K/N with 1 <= K <= N <= {MAX_SHARES} (this host's share K of N, ASCII "
                         f"digits), not '{text}'")
    return index_value, count_value


def config_key(run_id: str) -> str:
    return run_id.rpartition("-")[2]


def shard_runs(run_ids: list[str], index: int, count: int) -> list[str]:
    """The runs of share INDEX of COUNT: configurations in plan order dealt out in turn."""
    configs = list(dict.fromkeys(config_key(run_id) for run_id in run_ids))
    mine = set(configs[index - 1::count])
    return [run_id for run_id in run_ids if config_key(run_id) in mine]


def _inputs_ids(share: Path, kernels: list) -> dict:
    """What the share's runs booted: each kernel's kernel_id and the image's image_id.  A share that ran
    has them all (run.sh pins them before its first run); one that lacks any is not merged."""
    inputs = share / "inputs"
    if not inputs.is_dir():
        raise UsageError(f"{share} has no inputs (the kernels and image its runs booted): not a share run.sh ran")
    ids = {}
    for kernel in kernels:
        path = inputs / "kernels" / kernel / "kernel.json"
        if not path.is_file():
            raise UsageError(f"{share} has no kernel record of kernel {kernel} ({path})")
        ids[f"kernel {kernel}"] = _required_id(path, "kernel_id")
    path = inputs / "guest.json"
    if not path.is_file():
        raise UsageError(f"{share} has no guest image record ({path})")
    ids["image"] = _required_id(path, "image_id")
    if not (inputs / PINNED_IMAGE).is_file():
        raise UsageError(f"{share} has no guest image ({inputs / PINNED_IMAGE})")
    return ids


def _required_id(path: Path, key: str) -> str:
    try:
        value = record.read_json(path).get(key)
    except record.RecordError as error:
        raise UsageError(str(error)) from None
    if not isinstance(value, str) or not value:
        raise UsageError(f"{path} has no {key}")
    return value


def _plan(share: Path) -> dict:
    try:
        return read_plan_record(share / "campaign.json")
    except record.RecordError as error:
        raise UsageError(f"{share} is not a share of a campaign: {error}") from None


def ran(run_dir: Path) -> bool:
    """Whether a share got as far as an outcome for this run (a --resume there would not run it again)."""
    try:
        return record.read_json(run_dir / "status.json").get("status") in FINISHED | RETRIED_ONCE
    except record.RecordError:
        return False


def merge(destination: Path, shares: list[Path]) -> dict:
    """Copies every run that a share ran into DESTINATION (a new folder), with the plan and the inputs (the
    image pinned there, so that the merged campaign resumes without its shares); runs no share ran are copied
    as planned, for a --resume.  Every share is checked whole first: shares of different plans or inputs, a
    share without its inputs and a run that two shares ran are refused.  The copy is made beside
    DESTINATION and renamed into place once whole: a copy that fails leaves nothing.  Returns
    {run_id: the share it came from}."""
    if destination.exists() and not destination.is_dir():
        raise UsageError(f"{destination} is not a folder: merge writes a new campaign folder")
    if destination.exists() and any(destination.iterdir()):
        raise UsageError(f"{destination} is not empty: merge writes a new campaign folder")
    if not shares:
        raise UsageError("merge needs at least one share")
    plans = [_plan(share) for share in shares]
    for share, plan in zip(shares[1:], plans[1:]):
        if plan["runs"] != plans[0]["runs"]:
            raise UsageError(f"{share} has another plan than {shares[0]}: not shares of one campaign")
    kernels = plans[0].get("kernels")
    if not isinstance(kernels, list) or not kernels:
        raise UsageError(f"{shares[0] / 'campaign.json'} names no kernels")
    reference = _inputs_ids(shares[0], kernels)
    for share in shares[1:]:
        ids = _inputs_ids(share, kernels)
        different = sorted(name for name in reference if reference[name] != ids[name])
        if different:
            raise UsageError(f"{share} booted other inputs than {shares[0]}: {', '.join(different)} differ")
    origin = {}
    for run_id in plans[0]["runs"]:
        ran_by = [share for share in shares if ran(share / "runs" / run_id)]
        if len(ran_by) > 1:
            raise UsageError(f"run {run_id} was run by {ran_by[0]} and by {ran_by[1]}")
        origin[run_id] = ran_by[0] if ran_by else shares[0]
    partial = destination.with_name(f".{destination.name}.merging.{os.getpid()}")
    try:
        (partial / "inputs").mkdir(parents=True)
        shutil.copytree(shares[0] / "inputs" / "kernels", partial / "inputs" / "kernels")
        # The share's own copy: guest.json names the image where the share ran, perhaps another host.
        runfiles.pin_image(shares[0] / "inputs" / "guest.json", partial / "inputs",
                           image=shares[0] / "inputs" / PINNED_IMAGE)
        (partial / "runs").mkdir()
        for run_id, share in origin.items():
            shutil.copytree(share / "runs" / run_id, partial / "runs" / run_id, ignore=shutil.ignore_patterns(".lock"))
        record.write_text_atomic(partial / "plan", "".join(f"{run_id}\n" for run_id in plans[0]["runs"]))
        merged = {key: value for key, value in plans[0].items() if key != "schema"}
        record.write_json(partial / "campaign.json", merged | {"campaign": destination.name,
                                                               "merged_from": [str(share) for share in shares]})
        _rewrite_image_path(partial, destination)
        os.replace(partial, destination)
    except BaseException as error:
        shutil.rmtree(partial, ignore_errors=True)
        if not isinstance(error, (OSError, record.RecordError)):
            raise
        # copytree gathers the errors of its files: the first one says why.
        if isinstance(error, shutil.Error):
            source, _, why = error.args[0][0]
            error = f"{source}: {why}"
        raise record.RecordError(f"cannot copy into {destination}: {getattr(error, 'strerror', None) or error}") \
            from None
    return origin


def _rewrite_image_path(partial: Path, destination: Path):
    """guest.json names the pinned image where it will be once the folder is renamed into place."""
    guest = record.read_json(partial / "inputs" / "guest.json")
    record.write_json(partial / "inputs" / "guest.json",
                      {**guest, "image": os.path.abspath(destination / "inputs" / PINNED_IMAGE)})
