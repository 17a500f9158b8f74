"""python3 -m vswap_bench run-one, the runner of one run (vswap_bench/runner.py, qemu.py, children.py), on the
fake QEMU (tests/fake-qemu) replaying recorded guests (tests/host/guests)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from vswap_bench import children, outcome, qemu, runner

TOP = Path(__file__).resolve().parents[2]
GUESTS = Path(__file__).parent / "guests"
PYTHON = "/usr/bin/python3"


class Run:
    """A planned run of swap-verify on fake inputs, replaying the recorded guest RECORDING."""

    def __init__(self, root: Path, recording: str, *, hang_s=None, settings=""):
        inputs = root / "inputs"
        (inputs / "kernels" / "baseline").mkdir(parents=True)
        (inputs / "kernels" / "baseline" / "bzImage").write_text("not a kernel")
        (inputs / "kernels" / "baseline" / "kernel.json").write_text('{"schema": 1, "kernel_id": "k-id"}\n')
        (inputs / "guest.ext4").write_text("not an image")
        (inputs / "guest.json").write_text(json.dumps({"image": str(inputs / "guest.ext4"), "image_id": "i-id"}))
        self.guest = root / "guest"
        shutil.copytree(GUESTS / recording, self.guest)
        if hang_s is not None:
            (self.guest / "hang").write_text(str(hang_s))
        self.env = {**os.environ, "PATH": f"{TOP / 'tests' / 'fake-qemu'}:{os.environ['PATH']}",
                    "PYTHONPATH": str(TOP), "VB_ACCEL": "tcg", "VB_FAKE_GUEST": str(self.guest),
                    "VB_KERNELS_DIR": str(inputs / "kernels"), "VB_IMAGE_JSON": str(inputs / "guest.json"),
                    "BUILD_DIR": str(root / "build")}
        conf = root / "c.conf"
        conf.write_text("kernel = baseline\nworkload = swap-verify\ntimeout = 90\n" + settings)
        planned = subprocess.run([PYTHON, "-m", "vswap_bench", "plan", conf, root / "c"], env=self.env,
                                 capture_output=True, text=True, check=True)
        assert planned.stdout.strip() == "1"
        self.dir = root / "c" / "runs" / (root / "c" / "plan").read_text().split()[0]

    def command(self):
        return [PYTHON, "-m", "vswap_bench", "run-one", self.dir / "params", self.dir]

    def run(self) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(), env=self.env, capture_output=True, text=True, timeout=120)

    def start(self) -> subprocess.Popen:
        return subprocess.Popen(self.command(), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def status(self) -> dict:
        return json.loads((self.dir / "status.json").read_text())

    def wait_for(self, name: str, process: subprocess.Popen):
        for _ in range(200):
            if (self.dir / name).exists():
                return
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        raise AssertionError(f"no {name} in {self.dir}")

    def guest_gone(self) -> bool:
        """The fake QEMU holds the run's lock as the runner gave it: nobody holds it any more."""
        return subprocess.run(["flock", "-n", self.dir / ".lock", "true"]).returncode == 0


def until(condition, seconds=10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_qemu_that_crashes_before_the_agent_starts_is_started_once_more(tmp_path):
    # make test here once lost a run to a QEMU segfault 1.7 s into its boot: nothing of the run had happened.
    run = Run(tmp_path, "clean")
    (run.guest / "crash-once").write_text("")
    done = run.run()
    assert done.returncode == 0, done.stderr
    assert "QEMU died with exit 139 before the guest's agent started" in done.stderr
    assert run.status()["status"] == "done"
    assert json.loads((run.dir / "qemu.json").read_text())["restarted_after_qemu_exit"] == 139


def test_a_qemu_that_crashes_after_the_agent_started_is_not_started_again(tmp_path):
    run = Run(tmp_path, "clean")
    (run.guest / "exit").write_text("139")
    done = run.run()
    assert run.status()["status"] == "failed-infra" and "qemu exited with 139" in run.status()["reason"]
    assert "once more" not in done.stderr


def test_a_clean_guest_gives_every_file_of_the_run_folder(tmp_path):
    run = Run(tmp_path, "clean")
    done = run.run()
    assert done.returncode == 0, done.stderr
    for name in ("params", "kernel.json", "run.json", "spec", "reproduce.sh", "serial.log", "channel.raw",
                 "qemu.stderr", "qemu.json", "status.json", "boot", "result.json", "workload-output.json"):
        assert (run.dir / name).is_file(), name
    assert not (run.dir / "swap.raw").exists()
    assert run.status()["status"] == "done" and run.status()["accelerator"] == "tcg"
    spec = (run.dir / "spec").read_text().splitlines()
    assert spec == sorted(spec, key=str.encode)
    assert "VB_WORKLOAD=swap-verify" in spec and "VB_WORKLOAD_TIMEOUT=30" in spec and "VB_SWAP_MAX=''" in spec
    assert "VB_EXPECT_VCPUS=2" in spec and "MODES=plain\\ fork\\ shmem" in spec
    recorded = json.loads((run.dir / "qemu.json").read_text())
    assert recorded["qemu_exit"] == 0 and recorded["timing_mode"] == "realtime"
    assert recorded["command"].startswith("qemu-system-x86_64 -machine pc -m 512 -smp 2 -kernel ")
    assert (run.dir / "kernel.json").read_text() == '{"schema": 1, "kernel_id": "k-id"}\n'


def test_a_brd_swap_disk_is_sized_on_the_kernels_command_line_from_swap_mb(tmp_path):
    """brd takes its size only at boot: without it the guest has brd's 4 MiB default, which the agent
    refuses; the user's own module parameters stay before it."""
    run = Run(tmp_path, "clean", settings="swap_disk = brd\nswap_mb = 256\nkernel_args = vswap.slots=4096\n")
    done = run.run()
    assert done.returncode == 0, done.stderr
    command = json.loads((run.dir / "qemu.json").read_text())["command"]
    assert " no_timer_check vswap.slots=4096 brd.rd_nr=1 brd.rd_size=262144 -drive " in command, command
    assert "VB_SWAP_DISK=brd" in (run.dir / "spec").read_text().splitlines()


@pytest.mark.parametrize("profile,throttle", [("none", ""), ("ssd", ",throttling.iops-total=20000,throttling.bps-total=524288000"),
                                              ("hdd", ",throttling.iops-total=150,throttling.bps-total=125829120")])
def test_the_swap_disk_is_throttled_as_its_profile_says(tmp_path, profile, throttle):
    run = Run(tmp_path, "clean", settings=f"swap_disk_profile = {profile}\n")
    done = run.run()
    assert done.returncode == 0, done.stderr
    command = json.loads((run.dir / "qemu.json").read_text())["command"]
    swap_drive = f"/swap.raw,format=raw,if=virtio,cache=none,werror=report{throttle} "
    assert swap_drive in command, command
    assert command.count("throttling.") == 2 * bool(throttle), "only the swap disk is throttled"


def test_records_are_stored_while_the_guest_still_runs(tmp_path):
    run = Run(tmp_path, "clean", hang_s=60)
    process = run.start()
    try:
        run.wait_for("result.json", process)
        assert process.poll() is None and run.status()["status"] == "running"
        assert json.loads((run.dir / "boot").read_text())["uptime_at_agent_s"] == 1.92
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_the_guest_and_records_interrupted(tmp_path, number):
    run = Run(tmp_path, "clean", hang_s=60)
    process = run.start()
    run.wait_for("boot", process)
    process.send_signal(number)
    assert process.wait(timeout=30) == 130
    assert run.status()["status"] == "interrupted" and run.status()["exit_code"] == 130
    assert run.guest_gone(), "the guest outlived the runner"
    assert not (run.dir / "swap.raw").exists()


def test_a_runner_killed_outright_takes_its_guest_with_it(tmp_path):
    run = Run(tmp_path, "clean", hang_s=60)
    process = run.start()
    run.wait_for("boot", process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert until(run.guest_gone), "QEMU outlived its runner killed with KILL"


def test_the_signal_handlers_from_before_are_back_after_a_run():
    before = [signal.getsignal(number) for number in children.INTERRUPTS]
    with children.Interrupts() as interrupts:
        interrupts.run(["true"])
        interrupts.ignore()
    assert [signal.getsignal(number) for number in children.INTERRUPTS] == before


def test_a_guest_that_does_not_power_off_times_out():
    with children.Interrupts() as interrupts:
        started = time.monotonic()
        assert interrupts.run(["sleep", "30"], timeout_s=0.5) == children.TIMED_OUT
        assert time.monotonic() - started < 5


def test_a_poll_that_asks_for_more_time_keeps_the_guest_past_its_timeout():
    with children.Interrupts() as interrupts:
        asked = []

        def poll():
            asked.append(time.monotonic())
            return 5 if len(asked) == 1 else None

        assert interrupts.run(["sleep", "1.5"], timeout_s=0.5, every_s=0.1, poll=poll) == 0
        assert interrupts.run(["sleep", "30"], timeout_s=0.5, every_s=0.1, poll=lambda: None) == children.TIMED_OUT


def test_the_workload_ended_record_gives_the_guest_its_time_to_report(tmp_path):
    tail = runner.RecordTail(tmp_path)
    channel = tmp_path / "channel.raw"
    channel.write_bytes((GUESTS / "clean" / "channel.raw").read_bytes().split(b"@@VB-BEGIN workload-output")[0])
    assert tail() is None
    with open(channel, "ab") as stream:
        stream.write(b"@@VB-BEGIN workload-ended\nexit 0 after 1.5s\n\n@@VB-END workload-ended\n")
    assert tail() == outcome.COLLECT_S
    assert (tmp_path / "workload-ended").read_text() == "exit 0 after 1.5s\n\n"
    assert tail() is None, "the time is given once, when the record comes"


def test_a_guest_that_ignores_term_is_killed(monkeypatch, tmp_path):
    monkeypatch.setattr(children, "KILL_AFTER_S", 0.5)
    with children.Interrupts() as interrupts:
        stubborn = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                    "print(flush=True); time.sleep(30)"]
        assert interrupts.run(stubborn, timeout_s=1, stdout=subprocess.DEVNULL) == children.KILLED


def test_a_missing_qemu_is_an_infrastructure_failure(tmp_path):
    run = Run(tmp_path, "clean")
    (tmp_path / "empty").mkdir()
    run.env["PATH"] = str(tmp_path / "empty")
    done = run.run()
    assert done.returncode == 4, done.stderr
    assert run.status()["status"] == "failed-infra"
    assert "qemu exited with 127: cannot run qemu-system-x86_64" in run.status()["reason"]


def test_the_command_line_is_the_one_qemu_run_sh_built(tmp_path):
    guest = qemu.Guest(Path("/k/bzImage"), Path("/i/guest.ext4"), Path("/r/spec"), 2, 512)
    line = qemu.command(guest, Path("/r/serial.log"), Path("/r/channel.raw"), Path("/r/swap.raw"), ["/d/a.raw"])
    assert line == [
        "qemu-system-x86_64", "-machine", "pc", "-m", "512", "-smp", "2", "-kernel", "/k/bzImage",
        "-append", "console=ttyS0 root=/dev/vda rw init=/opt/vb/vb-agent panic=-1 loglevel=6 no_timer_check",
        "-drive", "file=/i/guest.ext4,format=raw,if=virtio,snapshot=on",
        "-fw_cfg", "name=opt/vswap-bench/spec,file=/r/spec", "-display", "none", "-no-reboot", "-nodefaults",
        "-serial", "file:/r/serial.log", "-serial", "file:/r/channel.raw",
        "-drive", "file=/r/swap.raw,format=raw,if=virtio,cache=none,werror=report",
        "-drive", "file=/d/a.raw,format=raw,if=virtio,snapshot=on"]
    # kernel_args come after the harness's own parameters, one space apart however they were written.
    with_args = qemu.Guest(guest.bzimage, guest.image, guest.spec, 2, 512, " vswap.slots=4096   zswap.enabled=1 ")
    with_args_line = qemu.command(with_args, Path("/s"), Path("/c"))
    assert with_args_line[with_args_line.index("-append") + 1] == (
        "console=ttyS0 root=/dev/vda rw init=/opt/vb/vb-agent panic=-1 loglevel=6 no_timer_check "
        "vswap.slots=4096 zswap.enabled=1")
    assert qemu.accelerator_arguments("kvm", "realtime") == ["-accel", "kvm", "-cpu", "host"]
    assert qemu.accelerator_arguments("tcg", "realtime") == ["-accel", "tcg,thread=multi"]
    assert qemu.accelerator_arguments("tcg", "icount") == ["-accel", "tcg,thread=single", "-icount",
                                                           "shift=3,sleep=off"]
    assert qemu.choose_accelerator("auto", "icount", guest, tmp_path, None) == ("tcg", "")
    assert qemu.choose_accelerator("auto", "realtime", guest, tmp_path, None, profile="insn") == ("tcg", "")


def test_the_profile_plugin_is_built_once_and_named_with_its_output(tmp_path):
    out = tmp_path / "run,1" / "insn-profile.txt"
    line = qemu.insn_profile_arguments(tmp_path / "build", out)
    plugin = tmp_path / "build" / "qemu-plugin" / "insn-profile.so"
    assert line == ["-plugin", f"{plugin},out={tmp_path}/run,,1/insn-profile.txt"]
    built = plugin.stat().st_mtime_ns
    qemu.insn_profile_arguments(tmp_path / "build", out)
    assert plugin.stat().st_mtime_ns == built
    # QEMU loads only a plugin that declares the API version it speaks.
    symbols = subprocess.run(["nm", "-D", "--defined-only", plugin], capture_output=True, text=True).stdout
    assert " qemu_plugin_version" in symbols and " qemu_plugin_install" in symbols


def test_reproduce_sh_runs_from_a_folder_whose_name_the_shell_would_expand(tmp_path):
    odd = tmp_path / 'a $HOME "b",c'
    odd.mkdir()
    run = Run(odd, "clean")
    assert run.run().returncode == 0
    again = subprocess.run([run.dir / "reproduce.sh", tmp_path / "again"], env=run.env, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "warning" not in again.stderr, again.stderr
    assert json.loads((tmp_path / "again" / "status.json").read_text())["status"] == "done"


def test_the_package_run_is_this_checkouts_whatever_the_working_directory(tmp_path):
    # run.sh started from another checkout: python3 -m puts the working directory first on sys.path.
    decoy = tmp_path / "vswap_bench"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("")
    (decoy / "__main__.py").write_text("print('the decoy')\n")
    record = tmp_path / "r.json"
    record.write_text('{"key": "value"}')
    said = subprocess.run(["bash", "-c", f'. "{TOP}/harness/common.sh" && vswap_bench field "{record}" key'],
                          cwd=tmp_path, capture_output=True, text=True)
    assert said.stdout == "value\n", said.stdout + said.stderr


def test_a_signal_to_the_runner_stops_the_childs_own_children(tmp_path):
    # A workload's prepare script and its make: the signal stops the child's whole process group.
    grandchild = tmp_path / "grandchild"

    def signal_when_started():
        until(lambda: grandchild.exists() and grandchild.read_text().strip())
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=signal_when_started, daemon=True).start()
    with children.Interrupts() as interrupts:
        status = interrupts.run(["bash", "-c", f'sleep 300 & echo $! >"{grandchild}"; wait'], timeout_s=60)
    assert interrupts.interrupted and status == 128 + signal.SIGTERM
    pid = int(grandchild.read_text())
    assert until(lambda: not Path(f"/proc/{pid}").exists() or
                 Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"), "the child's own child outlived the signal"


def test_a_missing_guest_image_is_an_infrastructure_failure_with_its_reason(tmp_path):
    run = Run(tmp_path, "clean")
    (tmp_path / "inputs" / "guest.ext4").unlink()
    done = run.run()
    assert done.returncode == 4 and "no guest image" in done.stderr, done.stderr
    assert run.status()["status"] == "failed-infra" and "no guest image" in run.status()["reason"]


def test_paths_with_a_comma_reach_qemu_doubled_where_qemu_splits_options():
    # -drive and -fw_cfg take key=value,... lists in which a comma of a value is written twice; -serial file:
    # and -kernel take the rest of the argument as it is.
    guest = qemu.Guest(Path("/r,1/bzImage"), Path("/r,1/guest.ext4"), Path("/r,1/spec"), 2, 512)
    line = qemu.command(guest, Path("/r,1/serial.log"), Path("/r,1/channel.raw"), Path("/r,1/swap.raw"),
                        ["/r,1/disk.raw"])
    assert "/r,1/bzImage" in line and "file:/r,1/serial.log" in line and "file:/r,1/channel.raw" in line
    assert "file=/r,,1/guest.ext4,format=raw,if=virtio,snapshot=on" in line
    assert "name=opt/vswap-bench/spec,file=/r,,1/spec" in line
    assert "file=/r,,1/swap.raw,format=raw,if=virtio,cache=none,werror=report" in line
    assert "file=/r,,1/disk.raw,format=raw,if=virtio,snapshot=on" in line


@pytest.mark.parametrize("recording, expected", [("clean", "kvm"), ("qemu-error", "tcg")])
def test_kvm_counts_when_a_guest_reaches_the_agent_on_it_and_the_answer_is_cached(tmp_path, monkeypatch,
                                                                                 recording, expected):
    monkeypatch.setattr(qemu.os, "access", lambda path, mode: path == "/dev/kvm")
    monkeypatch.setenv("PATH", f"{TOP / 'tests' / 'fake-qemu'}:{os.environ['PATH']}")
    monkeypatch.setenv("VB_FAKE_GUEST", str(GUESTS / recording))
    (tmp_path / "bzImage").write_text("not a kernel")
    guest = qemu.Guest(tmp_path / "bzImage", tmp_path / "guest.ext4", tmp_path / "spec", 2, 512)
    with children.Interrupts() as interrupts:
        assert qemu.choose_accelerator("auto", "realtime", guest, tmp_path, interrupts.run)[0] == expected
    (cached,) = (tmp_path / "accel-probe").iterdir()
    assert cached.read_text() == expected + "\n"
    monkeypatch.setenv("VB_FAKE_GUEST", "/nonexistent")
    assert qemu.probe_kvm(guest, tmp_path, None) == expected


def test_a_second_runner_on_the_same_run_folder_waits_for_the_first(tmp_path):
    run = Run(tmp_path, "clean", hang_s=60)
    first = run.start()
    run.wait_for("status.json", first)
    with open(tmp_path / "second.stderr", "w") as stderr:
        second = subprocess.Popen(run.command(), env=run.env, stdout=subprocess.DEVNULL, stderr=stderr)
    # It names the runner it waits for (the first, or the QEMU that inherited its lock).
    assert until(lambda: "waiting up to" in (tmp_path / "second.stderr").read_text()), \
        "the second runner did not wait for the lock"
    assert first.poll() is None and second.poll() is None and run.status()["status"] == "running"
    (run.guest / "hang").unlink()
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=60) == 130
    assert second.wait(timeout=60) == 0, (tmp_path / "second.stderr").read_text()
    assert run.status()["status"] == "done"


@pytest.mark.parametrize("recording, code", [("clean", 0), ("boot-panic", 1)])
def test_boot_check_passes_a_kernel_that_reaches_the_agent_only(tmp_path, recording, code):
    (tmp_path / "bzImage").write_text("not a kernel")
    (tmp_path / "guest.ext4").write_text("not an image")
    (tmp_path / "guest.json").write_text(json.dumps({"image": str(tmp_path / "guest.ext4")}))
    env = {**os.environ, "PATH": f"{TOP / 'tests' / 'fake-qemu'}:{os.environ['PATH']}", "PYTHONPATH": str(TOP),
           "VB_ACCEL": "tcg", "VB_FAKE_GUEST": str(GUESTS / recording), "VB_IMAGE_JSON": str(tmp_path / "guest.json"),
           "BUILD_DIR": str(tmp_path / "build")}
    done = subprocess.run([PYTHON, "-m", "vswap_bench", "boot-check", tmp_path / "bzImage"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stderr
    if code:
        # The end of the console says why: the recorded panic.
        assert "did not boot to the agent" in done.stderr and "Kernel panic" in done.stderr, done.stderr
