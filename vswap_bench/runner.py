"""One run: python3 -m vswap_bench run-one PARAMS RUN_DIR (run.sh calls it for each run of its plan).

PARAMS is a params file as the planner writes it.  Writes into RUN_DIR: params, kernel.json, run.json, spec,
reproduce.sh; status.json (running); then boots the guest with QEMU under the run's timeout and collects what
the agent sends on the second serial port:
  serial.log        the whole console
  channel.raw       the raw record stream; then one file per record (boot, result.json,
                    workload-output.json, workload.stderr, infra, unsupported, ...), each stored as soon as
                    its end has come; one cut off by a crash is kept as NAME.partial
  qemu.stderr       what QEMU printed
  qemu.json         accelerator, timing mode, command line, outcome
and last status.json.  Exits with the outcome's code (status.py: 0 done, 1 workload failed, 2 kernel crash,
3 timeout, 4 infrastructure, 5 unsupported, 130 interrupted: INT, TERM or HUP stop QEMU first).
"""
import fcntl
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import outcome, qemu, record, runfiles
from .children import KILLED, TIMED_OUT, Interrupts
from .runspec import RunSpec, read_params
from .settings import TOP, WORKLOADS_DIR, harness_defaults, is_setting_key
from .status import Status

# printf %q leaves these alone; every other printable character gets a backslash.
PLAIN = re.compile(r"[A-Za-z0-9_./:@%+=-]+")


class RunError(Exception):
    """The run cannot go on (no kernel, no image, a prepare script that failed): exit 4."""


class LockHeld(RunError):
    """The run's folder is held by a process of an earlier run: the run is not started (status.LOCK_HELD_EXIT)."""


def say(message: str):
    """A line to the user on stderr; a closed stderr (./run.sh | tee, then ^C) does not stop the run."""
    try:
        print(message, file=sys.stderr, flush=True)
    except OSError:
        pass


def build_dir() -> Path:
    return Path(os.path.abspath(os.environ.get("BUILD_DIR") or TOP / "build"))


def shell_word(value: str) -> str:
    """VALUE as one word of a shell assignment, as bash's printf %q writes it when it can."""
    if not value:
        return "''"
    if PLAIN.fullmatch(value):
        return value
    if value.isprintable() and value.isascii():
        return "".join(char if PLAIN.fullmatch(char) else "\\" + char for char in value)
    return shlex.quote(value)


def workload_timeout(timeout_s: int) -> int:
    """The workload's time: the run's less a margin for boot and collection, a tenth and at least 60 s
    (measured on a 2-core TCG host running six guests: 11 s to the agent, 20 s from the workload's end to
    power-off)."""
    return timeout_s - max(timeout_s // 10, 60)


def spec_text(spec: RunSpec) -> str:
    """The guest's view of the run (read by the agent as shell assignments): harness settings as VB_* and
    the workload's parameters as they are."""
    lines = [f"{'VB_' + key.upper() if is_setting_key(key) else key}={shell_word(value)}"
             for key, value in spec.values.items()]
    lines += [f"VB_EXPECT_VCPUS={spec['vcpus']}", f"VB_WORKLOAD_TIMEOUT={workload_timeout(int(spec['timeout']))}"]
    return "".join(line + "\n" for line in sorted(lines, key=lambda line: line.encode()))


def reproduce_text(spec: RunSpec, kernel_json: Path, kernel_id: str, image_json: Path, image_id: str) -> str:
    kernel = spec["kernel"]
    q = shlex.quote
    return f"""#!/usr/bin/env bash
# Re-runs exactly this run (same parameters, kernel '{kernel}' {kernel_id},
# image {image_id}) into DIR (default: a new folder next to this one).
here=$(cd "$(dirname "$0")" && pwd)
out=${{1:-$here.reproduced-$(date +%Y%m%d-%H%M%S)}}
. {q(str(TOP / "harness" / "common.sh"))}
built=$(json_string_field {q(str(kernel_json))} kernel_id)
[ "$built" = {q(kernel_id)} ] || echo "warning: kernel '{kernel}' is now ${{built:-not built}}, this run used {kernel_id}" >&2
mkdir -p "$out" && cp "$here/params" "$out/params"
VB_KERNELS_DIR={q(str(kernel_json.parent.parent))} VB_IMAGE_JSON={q(str(image_json))} exec_vswap_bench run-one "$out/params" "$out"
"""


class RecordTail:
    """Follows channel.raw while QEMU runs and stores each record as soon as its END line has come; once the
    workload has ended, gives the guest its time to report (a poll for Interrupts.run)."""

    def __init__(self, run_dir: Path):
        self.run_dir, self.offset, self.rest = run_dir, 0, b""
        self.splitter = outcome.RecordSplitter()
        self.failed = False

    def __call__(self):
        """outcome.COLLECT_S when the workload-ended record has just come, else None."""
        try:
            with open(self.run_dir / "channel.raw", "rb") as stream:
                stream.seek(self.offset)
                data = stream.read()
        except OSError:
            return None
        self.offset += len(data)
        whole, newline, rest = (self.rest + data).rpartition(b"\n")
        self.rest = rest
        if not newline:
            return None
        done = self.splitter.feed((whole + newline).decode(errors="replace"))
        try:
            runfiles.store_records(self.run_dir, outcome.Records(
                {name: self.splitter.records.complete[name] for name in done}))
        except record.RecordError as error:
            # Once QEMU is gone collect() writes every record again, and says so if it still cannot.
            if not self.failed:
                say(f"vswap_bench: warning: {error}")
            self.failed = True
        return outcome.COLLECT_S if outcome.WORKLOAD_ENDED in done else None


def prepare_disks(spec: RunSpec, run_dir: Path, interrupts: Interrupts, started: str) -> list[str]:
    """The disks a workload needs made on the host (workloads/NAME/prepare prints their paths, one a line);
    they reach the guest as /dev/vdc, /dev/vdd, ..."""
    prepare = WORKLOADS_DIR / spec["workload"] / "prepare"
    if not os.access(prepare, os.X_OK):
        return []
    try:
        with open(run_dir / "prepare.log", "w") as log, tempfile.TemporaryFile() as printed:
            status = interrupts.run([str(prepare), str(run_dir / "params")], stdin=subprocess.DEVNULL,
                                    stdout=printed, stderr=log)
            printed.seek(0)
            disks = [line for line in printed.read().decode(errors="replace").splitlines() if line]
    except OSError as error:
        raise RunError(f"cannot run workloads/{spec['workload']}/prepare: {error.strerror or error}") from None
    if status != 0 and not interrupts.interrupted:
        last = (runfiles.read_text(run_dir / "prepare.log").strip().splitlines() or [""])[-1]
        runfiles.write_status(run_dir, Status.FAILED_INFRA,
                              f"workloads/{spec['workload']}/prepare failed: {last}", started)
        raise RunError(f"workloads/{spec['workload']}/prepare failed (see {run_dir / 'prepare.log'})")
    return disks


def image_json_path() -> Path:
    """The guest.json of the image a run boots: VB_IMAGE_JSON (run.sh points it at the campaign's own copy),
    else the built one."""
    image_json = Path(os.path.abspath(os.environ.get("VB_IMAGE_JSON") or build_dir() / "image" / "guest.json"))
    if not image_json.is_file():
        raise RunError(f"no guest image ({image_json}); run 'make image'")
    return image_json


def requested_accelerator() -> str:
    """VB_ACCEL, checked: auto (the default), kvm or tcg."""
    requested = os.environ.get("VB_ACCEL") or "auto"
    if requested not in qemu.ACCELERATORS:
        raise RunError(f"unknown accelerator VB_ACCEL='{requested}' ({', '.join(qemu.ACCELERATORS)})")
    return requested


def check_image(guest: qemu.Guest) -> None:
    """The image GUEST boots is there."""
    if not guest.image.is_file():
        raise RunError(f"no guest image '{guest.image}' (build it with 'make image')")


def inputs(spec: RunSpec) -> tuple[Path, Path]:
    """The kernel's folder (bzImage, kernel.json) and the image's guest.json the run boots: run.sh points
    VB_KERNELS_DIR and VB_IMAGE_JSON at the campaign's own copies (results/<campaign>/inputs)."""
    kernels = Path(os.environ.get("VB_KERNELS_DIR") or build_dir() / "kernels")
    kernel_dir = Path(os.path.abspath(kernels / spec["kernel"]))
    if not (kernel_dir / "kernel.json").is_file():
        raise RunError(f"kernel '{spec['kernel']}' is not built ({kernel_dir}); run 'make kernels'")
    if not (kernel_dir / "bzImage").is_file():
        raise RunError(f"no kernel at '{kernel_dir}' (build it with 'make kernels')")
    return kernel_dir, image_json_path()


# How long a runner waits for the processes of an earlier runner of its run folder to let go of its lock (a
# guest being stopped goes within seconds) before it gives the run up and names them.
LOCK_WAIT_S = 20


def lock(run_dir: Path) -> int:
    """One runner per run folder: a --resume started while the runner of a killed campaign is still
    stopping its guest waits for it, instead of booting a second guest that writes into the same files.
    QEMU inherits the lock: it is free once the guest is gone too.  A process that outlives its runner and
    will not stop (a QEMU that ignores TERM) is named, and the run is left as it was."""
    path = run_dir / ".lock"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise RunError(f"cannot lock {run_dir}: {error.strerror or error}") from None
    deadline = time.monotonic() + LOCK_WAIT_S
    waiting = False
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if time.monotonic() >= deadline:
                break
            if not waiting:
                waiting = True
                say(f"vswap_bench: {path} is held by {', '.join(lock_holders(path)) or 'another process'}; "
                    f"waiting up to {LOCK_WAIT_S} s for it")
            time.sleep(0.2)
    os.close(descriptor)
    holders = ", ".join(lock_holders(path)) or "a process this user cannot see"
    raise LockHeld(f"{path} is still held after {LOCK_WAIT_S} s by {holders}, left from an earlier run of this "
                   "folder: stop it (kill -KILL) and resume again; the run is left as it was")


def lock_holders(path: Path) -> list[str]:
    """'PID (COMMAND)' of each process with PATH open."""
    holders = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if any(os.readlink(fd) == str(path) for fd in fd_dir.iterdir()):
                command = (fd_dir.parent / "comm").read_text().strip()
                holders.append(f"{fd_dir.parent.name} ({command})")
        except OSError:
            continue
    return sorted(holders, key=lambda holder: int(holder.split()[0]))


def write_run_files(spec: RunSpec, params: Path, run_dir: Path, kernel_dir: Path, image_json: Path):
    """params, kernel.json, run.json (the resolved settings, their configuration hash and provenance), spec
    and reproduce.sh."""
    kernel = record.read_json(kernel_dir / "kernel.json")
    image = record.read_json(image_json)
    if not (run_dir / "params").exists() or not (run_dir / "params").samefile(params):
        record.write_text_atomic(run_dir / "params", runfiles.read_text(params))
    record.write_text_atomic(run_dir / "kernel.json", runfiles.read_text(kernel_dir / "kernel.json"))
    record.write_json(run_dir / "run.json", runfiles.run_document(spec, run_dir.resolve(), kernel, image))
    record.write_text_atomic(run_dir / "spec", spec_text(spec))
    reproduce = run_dir / "reproduce.sh"
    record.write_text_atomic(reproduce, reproduce_text(spec, kernel_dir / "kernel.json", kernel.get("kernel_id", ""),
                                                       image_json, image.get("image_id", "")))
    reproduce.chmod(0o755)


def boot(spec: RunSpec, run_dir: Path, guest: qemu.Guest, disks: list[str], interrupts: Interrupts,
         run_lock: int) -> dict:
    """QEMU run under the run's timeout, holding the run's lock RUN_LOCK; what collect() needs of it."""
    requested = requested_accelerator()
    check_image(guest)
    for disk in disks:
        if not Path(disk).is_file():
            raise RunError(f"no disk image '{disk}'")
    accelerator, warning = qemu.choose_accelerator(requested, spec["timing"], guest, build_dir(), interrupts.run,
                                                   spec["profile"])
    if warning:
        say(f"vswap_bench: warning: {warning}")
    swap_disk = run_dir / "swap.raw"
    try:
        swap_disk.unlink(missing_ok=True)
        with open(swap_disk, "wb") as stream:
            stream.truncate(int(spec["swap_mb"]) << 20)
        for name in ("serial.log", "channel.raw"):
            (run_dir / name).write_bytes(b"")
    except OSError as error:
        raise RunError(f"cannot create the swap disk and the serial files in {run_dir}: {error}") from None
    line = (qemu.command(guest, run_dir / "serial.log", run_dir / "channel.raw", swap_disk, disks,
                         spec["swap_disk_profile"])
            + qemu.accelerator_arguments(accelerator, spec["timing"]))
    if spec["profile"] == "insn":
        try:
            line += qemu.insn_profile_arguments(build_dir(), run_dir / "insn-profile.txt")
        except OSError as error:
            raise RunError(str(error)) from None
    timeout_s = int(spec["timeout"])
    start = time.monotonic()
    with open(run_dir / "qemu.stderr", "wb") as stderr:
        try:
            qemu_exit = interrupts.run(line, timeout_s=timeout_s, poll=RecordTail(run_dir), stdin=subprocess.DEVNULL,
                                       stdout=stderr, stderr=stderr, pass_fds=(run_lock,))
        except OSError as error:
            stderr.write(f"cannot run {line[0]}: {error.strerror or error}\n".encode())
            qemu_exit = 127
    interrupts.ignore()
    host_seconds = round(time.monotonic() - start, 3)
    swap_disk.unlink(missing_ok=True)
    return {"qemu_exit": qemu_exit, "timeout_s": timeout_s, "host_seconds": host_seconds,
            "qemu": {"accelerator": accelerator, "timing_mode": spec["timing"], "vcpus": guest.vcpus,
                     "guest_mem_mb": guest.mem_mb, "swap_mb": int(spec["swap_mb"]), "image": str(guest.image),
                     "command": " ".join(line)}}


# Signals a QEMU dies of when it crashes itself (a segfault in TCG was seen here once in about 300 runs).
CRASH_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT, signal.SIGFPE)


def qemu_crashed_before_the_agent(qemu_exit: int, run_dir: Path) -> bool:
    """Whether QEMU itself crashed before the guest's agent started: nothing of the run happened, and the
    run's guest is started once more rather than the run lost as an infrastructure failure."""
    crashed = qemu_exit in [128 + signum for signum in CRASH_SIGNALS]  # as children.exit_status reports it
    serial = run_dir / "serial.log"
    return crashed and not (serial.is_file() and qemu.AGENT_STARTED in serial.read_bytes())


def run_one(params: Path, run_dir: Path) -> int:
    spec = read_params(params)
    kernel_dir, image_json = inputs(spec)
    image = runfiles.string_field(image_json, "image")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunError(f"cannot create {run_dir}: {error.strerror or error}") from None
    run_dir = run_dir.resolve()
    with Interrupts() as interrupts:
        run_lock = lock(run_dir)
        write_run_files(spec, params, run_dir, kernel_dir, image_json)
        started = runfiles.now_utc()
        disks = prepare_disks(spec, run_dir, interrupts, started)
        for name in ("status.json", "qemu.json", "result.json"):
            (run_dir / name).unlink(missing_ok=True)
        if interrupts.interrupted:
            runfiles.write_status(run_dir, Status.INTERRUPTED, "stopped by a signal to the runner", started)
            return Status.INTERRUPTED.exit_code
        runfiles.write_status(run_dir, Status.RUNNING, "", started)
        guest = qemu.Guest(kernel_dir / "bzImage", Path(image), run_dir / "spec", int(spec["vcpus"]),
                           int(spec["guest_mem_mb"]),
                           qemu.kernel_args(spec["kernel_args"], spec["swap_disk"], int(spec["swap_mb"])))
        try:
            booted = boot(spec, run_dir, guest, disks, interrupts, run_lock)
            if qemu_crashed_before_the_agent(booted["qemu_exit"], run_dir) and not interrupts.stopped_child:
                say(f"vswap_bench: warning: QEMU died with exit {booted['qemu_exit']} before the guest's agent "
                    "started; starting the run's guest once more")
                first = booted["qemu_exit"]
                booted = boot(spec, run_dir, guest, disks, interrupts, run_lock)
                booted["qemu"]["restarted_after_qemu_exit"] = first
            status, reason = runfiles.collect(run_dir, booted["qemu"], qemu_exit=booted["qemu_exit"],
                                              interrupted=interrupts.stopped_child, timeout_s=booted["timeout_s"],
                                              host_seconds=booted["host_seconds"])
            runfiles.write_status(run_dir, status, reason, started)
        except (RunError, record.RecordError) as error:
            runfiles.write_failed_status(run_dir, str(error), started)
            raise
    if status is not Status.DONE:
        say(f"vswap_bench: warning: {status.value}: {reason} (log: {run_dir / 'serial.log'})")
    return status.exit_code


# How long a kernel under boot-check may take to reach the agent: a guest kernel boots in well under a
# minute under TCG on 2 cores, several with a kernel build beside it.
BOOT_CHECK_S = 300


def boot_check(bzimage: Path) -> int:
    """0 if BZIMAGE boots the guest image (VB_IMAGE_JSON, or the built one) to its agent, on the
    accelerator a run would use; else 1, with the end of the console on standard error."""
    if not bzimage.is_file():
        raise RunError(f"no kernel at '{bzimage}'")
    requested = requested_accelerator()
    defaults = harness_defaults()
    guest = qemu.Guest(bzimage, Path(runfiles.string_field(image_json_path(), "image")), Path("/dev/null"),
                       int(defaults["vcpus"].value), int(defaults["guest_mem_mb"].value))
    check_image(guest)
    with Interrupts() as interrupts:
        accelerator, _ = qemu.choose_accelerator(requested, "realtime", guest, build_dir(), interrupts.run)
        boot = qemu.probe_boot(guest, accelerator, BOOT_CHECK_S, interrupts.run)
    if interrupts.interrupted:
        return Status.INTERRUPTED.exit_code
    if boot.reached_agent:
        return 0
    if boot.exit_status is None:
        how = "(QEMU could not start)"
    elif boot.exit_status in (TIMED_OUT, KILLED):
        how = f"within {BOOT_CHECK_S} s"
    else:
        how = f"(QEMU exited with {boot.exit_status})"
    tail = boot.console.decode(errors="replace").splitlines()[-15:]
    say(f"vswap_bench: {bzimage} did not boot to the agent {how} on {accelerator}; QEMU said:\n"
        f"{boot.stderr.strip()}\nthe end of its console:\n" + "\n".join(tail))
    return 1
