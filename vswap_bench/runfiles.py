"""The documents of one run folder (docs/results-format.md), built from its RunSpec."""
import os
import platform
import socket
import subprocess
from pathlib import Path

from . import record
from .runspec import RunSpec, read_params

# Settings run.json carries as fields of their own; every other harness setting is under "settings".
RUN_FIELDS = ("kernel", "workload", "backend", "memory_max", "pressure", "repetition", "warmup", "vcpus",
              "guest_mem_mb", "timing")


def qemu_version() -> str:
    try:
        done = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True)
    except OSError:
        return ""
    return done.stdout.partition("\n")[0]


def run_document(spec: RunSpec, run_dir: Path, kernel_record: dict, image_record: dict) -> dict:
    return {
        "run_id": run_dir.name,
        "campaign": run_dir.parent.parent.name,
        "config_hash": spec.config_hash,
        "kernel": spec["kernel"],
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
        "host": {"hostname": socket.gethostname(), "cpus": os.cpu_count(), "kernel": platform.release(),
                 "qemu": qemu_version()},
    }


def write_run_json(params: Path, run_dir: Path, kernel_json: Path, image_json: Path):
    spec = read_params(params)
    document = run_document(spec, run_dir.resolve(), record.read_json(kernel_json), record.read_json(image_json))
    record.write_json(run_dir / "run.json", document)
