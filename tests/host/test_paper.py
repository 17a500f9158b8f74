"""campaigns/paper.conf, the cover letter's scale for a large KVM host, as far as this machine can check it:
it plans, and each of its configurations gets the QEMU command line of a 32-vCPU, 24 GiB KVM guest from the
runner (on the fake QEMU, tests/fake-qemu)."""
import json
import os
import re
import subprocess
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
GUESTS = Path(__file__).parent / "guests"
PYTHON = "/usr/bin/python3"


def fake_inputs(root: Path) -> dict:
    """Kernels, an image and a kernel-build tree disk that are files of nothing, and the environment that
    points the runner at them and at the fake QEMU replaying a clean guest."""
    inputs = root / "inputs"
    for kernel in ("baseline", "vswap"):
        (inputs / "kernels" / kernel).mkdir(parents=True)
        (inputs / "kernels" / kernel / "bzImage").write_text("not a kernel")
        (inputs / "kernels" / kernel / "kernel.json").write_text(f'{{"schema": 1, "kernel_id": "{kernel}-id"}}\n')
    (inputs / "guest.ext4").write_text("not an image")
    (inputs / "guest.json").write_text(json.dumps({"image": str(inputs / "guest.ext4"), "image_id": "i-id"}))
    build = root / "build"
    (build / "src" / "linux-source-6.12-fake").mkdir(parents=True)
    # kernel-build's prepare finds its tree disk made already, under the key it computes.
    prepare = TOP / "workloads" / "kernel-build" / "prepare"
    key = subprocess.run(["bash", "-c", f'. "{TOP}/harness/common.sh"; '
                          f'sha256_str "linux-source-6.12-fake $(gcc --version | head -n1) $(sha256_of "{prepare}")"'],
                         capture_output=True, text=True, check=True).stdout.strip()
    data = build / "workload-data" / f"kernel-build-{key[:16]}"
    data.mkdir(parents=True)
    (data / "tree.ext4").write_text("not a tree")
    (data / ".complete").write_text("")
    return {**os.environ, "PATH": f"{TOP / 'tests' / 'fake-qemu'}:{os.environ['PATH']}", "PYTHONPATH": str(TOP),
            "VB_ACCEL": "kvm", "VB_FAKE_GUEST": str(GUESTS / "clean"), "VB_KERNELS_DIR": str(inputs / "kernels"),
            "VB_IMAGE_JSON": str(inputs / "guest.json"), "BUILD_DIR": str(build)}


def test_paper_plans_and_each_configuration_gets_a_32_vcpu_kvm_command_line(tmp_path):
    env = fake_inputs(tmp_path)
    planned = subprocess.run([PYTHON, "-m", "vswap_bench", "plan", TOP / "campaigns" / "paper.conf",
                              tmp_path / "paper"], env=env, capture_output=True, text=True)
    assert planned.returncode == 0, planned.stderr
    run_ids = (tmp_path / "paper" / "plan").read_text().split()
    assert len(run_ids) == int(planned.stdout) == 122
    # One run of each configuration and kernel (the run id less its repetition).
    first = {}
    for run_id in run_ids:
        first.setdefault(re.sub(r"-(r|warmup)\d+-", "-", run_id), run_id)
    assert len(first) == 24, sorted(first)
    for run_id in first.values():
        run_dir = tmp_path / "paper" / "runs" / run_id
        subprocess.run([PYTHON, "-m", "vswap_bench", "run-one", run_dir / "params", run_dir], env=env,
                       capture_output=True, text=True, timeout=120)
        recorded = json.loads((run_dir / "qemu.json").read_text())
        line = recorded["command"]
        assert recorded["accelerator"] == "kvm", run_id
        assert line.startswith("qemu-system-x86_64 -machine pc -m 24576 -smp 32 -kernel "), (run_id, line)
        assert line.endswith(" -accel kvm -cpu host"), (run_id, line)
        assert recorded["swap_mb"] == 40960 and not (run_dir / "swap.raw").exists(), run_id
        spec = (run_dir / "spec").read_text().splitlines()
        assert "VB_EXPECT_VCPUS=32" in spec and "VB_MEMORY_MAX=3G" in spec, (run_id, spec)
        if run_id.startswith("kernel-build-"):
            assert "tree.ext4,format=raw,if=virtio,snapshot=on" in line, line
            assert "JOBS=32" in spec, spec


def test_the_guest_kernels_can_bring_up_every_vcpu_a_campaign_may_ask_for():
    """A guest kernel brings up at most CONFIG_NR_CPUS CPUs, whatever QEMU gives it (tinyconfig leaves 2):
    paper.conf's 32 vCPUs and contention.conf's 4 and 8 need the guest config to say more."""
    from vswap_bench.settings import MAX_VCPUS
    config = (TOP / "kernel-patches" / "configs" / "guest.config").read_text()
    found = re.search(r"^CONFIG_NR_CPUS=(\d+)$", config, re.M)
    assert found and int(found.group(1)) >= MAX_VCPUS, "guest.config does not set CONFIG_NR_CPUS to MAX_VCPUS"
    asked = [int(v) for name in ("paper", "contention")
             for line in (TOP / "campaigns" / f"{name}.conf").read_text().splitlines()
             if re.match(r"(axis )?vcpus\s*=", line) for v in line.split("=")[1].split()]
    assert asked and max(asked) <= MAX_VCPUS
