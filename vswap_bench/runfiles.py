"""The documents of one run folder (docs/results-format.md), built from its RunSpec."""
import json
import os
import platform
import re
import shutil
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from . import outcome, record
from .runspec import RunSpec
from .status import Status

# Settings run.json carries as fields of their own; every other harness setting is under "settings".
RUN_FIELDS = ("kernel", "label", "workload", "backend", "memory_max", "pressure", "repetition", "warmup", "vcpus",
              "guest_mem_mb", "timing")
# The names the agent gives its records become file names in the run folder: nothing else is stored.
RECORD_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def qemu_version() -> str:
    try:
        done = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True)
    except OSError:
        return ""
    return done.stdout.partition("\n")[0]


def host_document() -> dict:
    """The host a run ran on."""
    return {"hostname": socket.gethostname(), "cpus": os.cpu_count(), "kernel": platform.release(),
            "qemu": qemu_version()}


def run_document(spec: RunSpec, run_dir: Path, kernel_record: dict, image_record: dict, host: dict = None) -> dict:
    """run.json of the run SPEC describes in RUN_DIR; HOST is host_document() unless given."""
    return {
        "run_id": run_dir.name,
        "campaign": run_dir.parent.parent.name,
        "config_hash": spec.config_hash,
        # The label the analysis counts the run under (baseline-aa for an A/A run), and the build it booted.
        "kernel": spec.label,
        "kernel_build": spec["kernel"],
        "kernel_id": kernel_record.get("kernel_id", ""),
        "workload": spec["workload"],
        "backend": spec["backend"],
        "memory_max": spec["memory_max"],
        "pressure": spec["pressure"],
        "params": spec.workload_params,
        "settings": {key: value for key, value in sorted(spec.harness_settings.items()) if key not in RUN_FIELDS},
        "repetition": int(spec["repetition"]),
        "warmup": spec.is_warmup,
        "vcpus": int(spec["vcpus"]),
        "guest_mem_mb": int(spec["guest_mem_mb"]),
        "timing_mode": spec["timing"],
        "image_id": image_record.get("image_id", ""),
        "host": host if host is not None else host_document(),
    }


def now_utc() -> str:
    """The time, as status.json records started and finished."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def store_records(out: Path, records: outcome.Records):
    """One file per record the agent sent; a record cut off is kept as NAME.partial."""
    for name, text in records.complete.items():
        if RECORD_NAME.fullmatch(name):
            record.write_text_atomic(out / name, text)
            (out / f"{name}.partial").unlink(missing_ok=True)
    for name, text in records.partial.items():
        if RECORD_NAME.fullmatch(name):
            record.write_text_atomic(out / f"{name}.partial", text)


def boot_seconds(records: outcome.Records):
    """The guest's uptime when the agent started, from its boot record."""
    try:
        value = json.loads(records.complete.get("boot", "")).get("uptime_at_agent_s")
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, (int, float)) else None


def collect(out: Path, qemu: dict, *, qemu_exit: int, interrupted: bool, timeout_s: int, host_seconds: float):
    """Once QEMU is gone: the records into files, the run's outcome decided, qemu.json written.  QEMU
    describes the guest as the runner started it (accelerator, timing_mode, vcpus, guest_mem_mb, swap_mb,
    image, command)."""
    serial = read_text(out / "serial.log")
    records = outcome.split_records(read_text(out / "channel.raw"))
    store_records(out, records)
    status, reason = outcome.decide(outcome.GuestEnd(qemu_exit, interrupted, timeout_s, serial, records,
                                                     read_text(out / "qemu.stderr")))
    record.write_json(out / "qemu.json", {
        **qemu, "status": status.value, "exit_code": status.exit_code, "reason": reason, "qemu_exit": qemu_exit,
        "host_seconds": host_seconds, "boot_to_agent_s": boot_seconds(records),
        "kernel_warnings": outcome.kernel_warnings(serial), "kernel_reports": outcome.kernel_reports(serial)})
    return status, reason


def write_status(run_dir: Path, status: Status, reason: str, started: str):
    """status.json; the accelerator and the times come from qemu.json once there is one."""
    try:
        qemu = record.read_json(run_dir / "qemu.json")
    except record.RecordError:
        qemu = {}
    record.write_json(run_dir / "status.json", {
        "status": status.value, "exit_code": status.exit_code or 0, "reason": reason, "started": started,
        "finished": now_utc(),
        "accelerator": qemu.get("accelerator"), "host_seconds": qemu.get("host_seconds"),
        "boot_to_agent_s": qemu.get("boot_to_agent_s")})


def write_failed_status(run_dir: Path, reason: str, started: str):
    """status.json failed-infra for REASON, when the run's outcome cannot be recorded as it should: the old
    status.json ("running") goes first, so that on a full disk the new one has the room the old one had.
    When even that cannot be written the run has no status.json, and reads as not run rather than running."""
    (run_dir / "status.json").unlink(missing_ok=True)
    try:
        write_status(run_dir, Status.FAILED_INFRA, reason, started)
    except record.RecordError:
        pass


# The campaign's copy of its guest image, in its inputs/.
PINNED_IMAGE = "guest.ext4"


def pin_image(guest_json: Path, inputs: Path, image: Path = None):
    """The guest image GUEST_JSON describes (IMAGE, else the file it names), hard-linked (else copied) to
    INPUTS/guest.ext4, and INPUTS/guest.json naming that copy: the campaign's runs boot it whatever build/
    holds later."""
    guest = record.read_json(guest_json)
    pinned = inputs / PINNED_IMAGE
    try:
        source = image or guest["image"]
        pinned.unlink(missing_ok=True)
        try:
            os.link(source, pinned)
        except OSError:
            shutil.copyfile(source, pinned)
    except (OSError, KeyError) as error:
        pinned.unlink(missing_ok=True)
        raise record.RecordError(f"cannot pin the guest image of {guest_json}: {error}") from None
    record.write_json(inputs / "guest.json", {**guest, "image": os.path.abspath(pinned)})


def string_field(path: Path, key: str) -> str:
    """The string value of KEY in the JSON object at PATH; "" when it is absent or not a string."""
    value = record.read_json(path).get(key)
    return value if isinstance(value, str) else ""
