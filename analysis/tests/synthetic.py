"""Synthetic campaign directories with known answers, written by the harness's own writers: run.json from a
RunSpec (vswap_bench/runfiles.py), the agent's records split, the outcome decided and qemu.json and
status.json written as the runner does, kernel.json and campaign.json through vswap_bench/record.py."""
import json
from pathlib import Path

import numpy as np

from vswap_bench import record, runfiles
from vswap_bench.runspec import RunSpec
from vswap_bench.settings import AA_SUFFIX, Setting
from vswap_bench.status import Status

# baseline-aa is the baseline build run again under another label: an A/A pair.
KERNEL_IDS = {"baseline": "b0b0b0b0b0b0b0b0", "baseline-aa": "b0b0b0b0b0b0b0b0", "vswap": "f00df00df00df00d"}
IMAGE = {"image_id": "9f8e7d6c5b4a3921"}
HOST = {"hostname": "testhost", "cpus": 2, "qemu": "QEMU emulator version 7.2.0"}
# What the guest and QEMU did for a run to end with each status (vswap_bench/outcome.py decides it).
ENDINGS = {"done": {}, "failed-workload": {"workload_exit": 1},
           "kernel-crash": {"serial": "Kernel panic - not syncing: test\n"}, "timeout": {"qemu_exit": 124},
           "failed-infra": {"result": False}, "interrupted": {"interrupted": True},
           "unsupported": {"result": False, "unsupported": "this kernel cannot swap to zswap without a device"}}


def frame(name: str, text: str) -> str:
    """A record as the agent sends it on its channel (guest-image/agent/vb-agent's send)."""
    return f"@@VB-BEGIN {name}\n{text}\n@@VB-END {name}\n"


def run_spec(values: dict) -> RunSpec:
    return RunSpec({key: Setting(key, str(value), "analysis/tests/synthetic.py") for key, value in values.items()})


def write_run(campaign: Path, *, kernel: str, backend: str, repetition: int, real_s: float, sys_s: float,
              workload: str = "kernel-build", status: str = "done", accelerator: str = "kvm", output=None,
              kernel_id: str = None, warmup: bool = False, params: dict = None, finished: str = None,
              started: str = "2026-01-01T00:00:00Z", kernel_log: str = "") -> Path:
    """One run as the runner leaves it; KERNEL_LOG is console lines of the guest kernel before its end."""
    run_id = f"{workload}-{backend}-{kernel}-r{repetition}{'-warmup' if warmup else ''}"
    run_dir = campaign / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    kernel_id = kernel_id or KERNEL_IDS.get(kernel, "0123456789abcdef")
    kernel_record = {"name": kernel, "variant": kernel, "kernel_id": kernel_id, "base_version": "6.12.118",
                     "patches": []}
    record.write_json(run_dir / "kernel.json", kernel_record)
    # A label such as baseline-aa is the baseline build counted apart (settings.aa_label).
    build = kernel.removesuffix(AA_SUFFIX)
    spec = run_spec({"kernel": build, "label": kernel if build != kernel else "", "workload": workload, "backend": backend, "memory_max": "64M",
                     "pressure": "cgroup", "repetition": repetition, "warmup": int(warmup), "vcpus": 2,
                     "guest_mem_mb": 512, "timing": "realtime", "zswap_compressor": "lzo", "rotational": "0",
                     **(params or {"SIZE_MB": "96"})})
    record.write_json(run_dir / "run.json", runfiles.run_document(spec, run_dir, kernel_record, IMAGE, HOST))
    ending = ENDINGS[status]
    result = {
        "schema": 1, "kernel_release": "6.12.118", "workload": workload, "backend": backend,
        "workload_exit": ending.get("workload_exit", 0), "wall_s": real_s,
        "cgroup": {"cpu.stat": {"usage_usec": int((real_s + sys_s) * 1e6), "user_usec": int(real_s * 1e6),
                                "system_usec": int(round(sys_s * 1e6))},
                   "memory.events": {"high": 0, "max": 3, "oom": 0, "oom_kill": 0},
                   "memory.peak": 67108864},
        "vmstat_delta": {"pswpout": 100 * repetition, "zswpout": 2400, "pgfault": 5000, "nr_free_pages": 7},
        "output": output if output is not None else {"pages": 24576, "madv_pageout": True},
    }
    channel = frame("boot", '{"uptime_at_agent_s": 1.5}')
    if status == "done":
        channel += frame("result.json", json.dumps(result, indent=1))
    elif ending.get("result", True) and "serial" not in ending:
        channel += frame("workload.stderr", "the workload failed")
        channel += frame("result.json", json.dumps(result | {"wall_s": None}))
    if "unsupported" in ending:
        channel += frame("unsupported", ending["unsupported"])
    (run_dir / "channel.raw").write_text(channel)
    (run_dir / "serial.log").write_text("[    0.000000] Linux version 6.12.118\n" + kernel_log + ending.get("serial", ""))
    qemu = {"accelerator": accelerator, "timing_mode": "realtime", "vcpus": 2, "guest_mem_mb": 512, "swap_mb": 1024,
            "image": "/images/guest.ext4", "command": "qemu-system-x86_64 ..."}
    decided, reason = runfiles.collect(run_dir, qemu, qemu_exit=ending.get("qemu_exit", 0),
                                       interrupted=ending.get("interrupted", False), timeout_s=900,
                                       host_seconds=real_s + 20)
    assert decided is Status(status), (status, decided, reason)
    runfiles.write_status(run_dir, decided, reason, started)
    if finished:
        status_json = record.read_json(run_dir / "status.json")
        record.write_json(run_dir / "status.json", {**status_json, "finished": finished})
    return run_dir


def write_campaign(root: Path, name: str, groups: dict, plan: dict = None, **run_options) -> Path:
    """groups: {(kernel, backend): [(real_s, sys_s), ...]}, one tuple per repetition; PLAN: fields of
    campaign.json."""
    campaign = Path(root) / name
    campaign.mkdir(parents=True, exist_ok=True)
    record.write_json(campaign / "campaign.json", {"profile": "test", **(plan or {})})
    for (kernel, backend), samples in groups.items():
        for repetition, (real_s, sys_s) in enumerate(samples, start=1):
            write_run(campaign, kernel=kernel, backend=backend, repetition=repetition,
                      real_s=real_s, sys_s=sys_s, **run_options)
    return campaign


def noisy(mean: float, n: int, relative_sd: float, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, mean * relative_sd, n))


def samples(real_mean, sys_mean, n, relative_sd, seed):
    return list(zip(noisy(real_mean, n, relative_sd, seed), noisy(sys_mean, n, relative_sd, seed + 1)))
