"""A campaign spread over hosts: each runs a fixed share of the same plan (run.sh --shard K/N), and merge
gathers the shares into one campaign folder.  Any scheduler can start the shares (a Slurm job array, a CI
matrix, GNU parallel over ssh); there is none here.

A share is a set of configurations, not of runs: every kernel and repetition of a configuration runs on one
host, so the two kernels of a comparison are measured side by side on the same machine.
"""
import shutil
from pathlib import Path

from . import record
from .settings import UsageError
from .status import FINISHED, RETRIED_ONCE


def parse_shard(text: str) -> tuple[int, int]:
    """K/N -> (K, N) with 1 <= K <= N."""
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise UsageError(f"--shard takes K/N with 1 <= K <= N (this host's share of N), not '{text}'")
    return int(index), int(count)


def config_key(run_id: str) -> str:
    return run_id.rpartition("-")[2]


def shard_runs(run_ids: list[str], index: int, count: int) -> list[str]:
    """The runs of share INDEX of COUNT: configurations in plan order dealt out in turn."""
    configs = list(dict.fromkeys(config_key(run_id) for run_id in run_ids))
    mine = set(configs[index - 1::count])
    return [run_id for run_id in run_ids if config_key(run_id) in mine]


def _inputs_ids(campaign: Path) -> dict:
    """What the campaign's runs booted: each kernel's kernel_id and the image's image_id."""
    inputs = campaign / "inputs"
    ids = {f"kernel {path.parent.name}": record.read_json(path).get("kernel_id")
           for path in sorted(inputs.glob("kernels/*/kernel.json"))}
    if (inputs / "guest.json").exists():
        ids["image"] = record.read_json(inputs / "guest.json").get("image_id")
    return ids


def ran(run_dir: Path) -> bool:
    """Whether a share got as far as an outcome for this run (a --resume there would not run it again)."""
    try:
        return record.read_json(run_dir / "status.json").get("status") in FINISHED | RETRIED_ONCE
    except record.RecordError:
        return False


def merge(destination: Path, shares: list[Path]) -> dict:
    """Copies every run that a share ran into DESTINATION (a new folder), with the plan and the inputs;
    runs no share ran are copied as planned, for a --resume.  Refuses shares of different plans or inputs,
    and a run that two shares ran.  Returns {run_id: the share it came from}."""
    if destination.exists() and any(destination.iterdir()):
        raise UsageError(f"{destination} is not empty: merge writes a new campaign folder")
    if not shares:
        raise UsageError("merge needs at least one share")
    plans = [record.read_json(share / "campaign.json") for share in shares]
    for share, plan in zip(shares[1:], plans[1:]):
        if plan["runs"] != plans[0]["runs"]:
            raise UsageError(f"{share} has another plan than {shares[0]}: not shares of one campaign")
    reference = _inputs_ids(shares[0])
    for share in shares[1:]:
        ids = _inputs_ids(share)
        different = sorted(name for name in reference.keys() & ids.keys() if reference[name] != ids[name])
        if different:
            raise UsageError(f"{share} booted other inputs than {shares[0]}: {', '.join(different)} differ")
    origin = {}
    for run_id in plans[0]["runs"]:
        ran_by = [share for share in shares if ran(share / "runs" / run_id)]
        if len(ran_by) > 1:
            raise UsageError(f"run {run_id} was run by {ran_by[0]} and by {ran_by[1]}")
        origin[run_id] = ran_by[0] if ran_by else shares[0]
    try:
        (destination / "runs").mkdir(parents=True, exist_ok=True)
        shutil.copytree(shares[0] / "inputs", destination / "inputs")
        for run_id, share in origin.items():
            shutil.copytree(share / "runs" / run_id, destination / "runs" / run_id,
                            ignore=shutil.ignore_patterns(".lock"))
    except OSError as error:
        raise record.RecordError(f"cannot copy into {destination}: {error}") from None
    record.write_text_atomic(destination / "plan", "".join(f"{run_id}\n" for run_id in plans[0]["runs"]))
    merged = {key: value for key, value in plans[0].items() if key != "schema"}
    record.write_json(destination / "campaign.json", merged | {"campaign": destination.name,
                                                                "merged_from": [str(share) for share in shares]})
    return origin
