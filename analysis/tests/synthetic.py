"""Write synthetic campaign directories in the docs/results-format.md shape, with known answers."""
import json
from pathlib import Path

import numpy as np

# baseline-aa is the baseline build run again under another label: an A/A pair.
KERNEL_IDS = {"baseline": "b0b0b0b0b0b0b0b0", "baseline-aa": "b0b0b0b0b0b0b0b0", "vswap": "f00df00df00df00d"}


def write_json(path: Path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1))


def write_run(campaign: Path, *, kernel: str, backend: str, repetition: int, real_s: float, sys_s: float,
              workload: str = "kernel-build", status: str = "done", accelerator: str = "kvm", output=None,
              kernel_id: str = None, warmup: bool = False, params: dict = None, finished: str = None) -> Path:
    run_id = f"{workload}-{backend}-{kernel}-r{repetition}{'-warmup' if warmup else ''}"
    run_dir = campaign / "runs" / run_id
    kernel_id = kernel_id or KERNEL_IDS.get(kernel, "0123456789abcdef")
    write_json(run_dir / "run.json", {
        "schema": 1, "run_id": run_id, "campaign": campaign.name, "kernel": kernel, "kernel_id": kernel_id,
        "workload": workload, "backend": backend, "memory_max": "64M", "params": params or {"SIZE_MB": "96"},
        "settings": {"zswap_compressor": "lzo", "rotational": "0"},
        "repetition": repetition, "warmup": warmup, "vcpus": 2, "guest_mem_mb": 512,
        "timing_mode": "realtime", "image_id": "9f8e7d6c5b4a3921",
        "host": {"hostname": "testhost", "cpus": 2, "qemu": "QEMU emulator version 7.2.0"},
    })
    # As the runner does: the accelerator is only known after the boot, so it is in status.json.
    write_json(run_dir / "status.json", {"status": status, "exit_code": 0, "reason": "", "accelerator": accelerator}
               | ({"finished": finished} if finished else {}))
    write_json(run_dir / "kernel.json", {"schema": 1, "name": kernel, "variant": kernel, "kernel_id": kernel_id,
                                         "base_version": "6.12.118", "patches": []})
    if status == "done":
        write_json(run_dir / "result.json", {
            "schema": 1, "kernel_release": "6.12.118", "workload": workload, "backend": backend,
            "wall_s": real_s,
            "cgroup": {"cpu.stat": {"usage_usec": int((real_s + sys_s) * 1e6), "user_usec": int(real_s * 1e6),
                                    "system_usec": int(round(sys_s * 1e6))},
                       "memory.events": {"high": 0, "max": 3, "oom": 0, "oom_kill": 0},
                       "memory.peak": 67108864},
            "vmstat_delta": {"pswpout": 100 * repetition, "zswpout": 2400, "pgfault": 5000, "nr_free_pages": 7},
            "output": output if output is not None else {"pages": 24576, "madv_pageout": True},
        })
    return run_dir


def write_campaign(root: Path, name: str, groups: dict, **run_options) -> Path:
    """groups: {(kernel, backend): [(real_s, sys_s), ...]}, one tuple per repetition."""
    campaign = Path(root) / name
    write_json(campaign / "campaign.json", {"schema": 1, "profile": "test"})
    for (kernel, backend), samples in groups.items():
        for repetition, (real_s, sys_s) in enumerate(samples, start=1):
            write_run(campaign, kernel=kernel, backend=backend, repetition=repetition,
                      real_s=real_s, sys_s=sys_s, **run_options)
    return campaign


def noisy(mean: float, n: int, relative_sd: float, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, mean * relative_sd, n))


def samples(real_mean, sys_mean, n, relative_sd, seed):
    return list(zip(noisy(real_mean, n, relative_sd, seed), noisy(sys_mean, n, relative_sd, seed + 1)))
