"""QEMU's command line for a run, and the accelerator it runs on."""
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

QEMU = "qemu-system-x86_64"
# no_timer_check: on a loaded host a TCG vCPU can miss the few ticks the kernel's IO-APIC timer test waits
# for, and the kernel then panics at boot ("IO-APIC + timer doesn't work"), measured here with six guests on
# 2 cores.
APPEND = "console=ttyS0 root=/dev/vda rw init=/opt/vb/vb-agent panic=-1 loglevel=6 no_timer_check"
ACCELERATORS = ("auto", "kvm", "tcg")
# The swap_disk_profile setting: QEMU's block throttling on the virtio swap disk, as a device's limits.  Each
# request waits for its turn under the I/O rate, so at the queue depth of swap-in (one fault, one read) a
# request takes about 1/iops: some 50 us on the SSD-like profile, 6.7 ms on the HDD-like one, whatever the
# host's own disk does.
SWAP_DISK_THROTTLE = {
    "ssd": {"iops-total": 20000, "bps-total": 500 << 20},
    "hdd": {"iops-total": 150, "bps-total": 120 << 20},
}
PLUGIN_SOURCE = Path(__file__).resolve().parent.parent / "harness" / "qemu-plugin" / "insn-profile.c"
# KVM counts as usable when a guest booted on it reaches the agent within this many seconds.
PROBE_S = 20
AGENT_STARTED = b"@@VB-AGENT-START"


@dataclass(frozen=True)
class Guest:
    """What a run boots: the kernel, the guest image and the spec handed to the agent through fw_cfg."""
    bzimage: Path
    image: Path
    spec: Path
    vcpus: int
    mem_mb: int
    kernel_args: str = ""


def kernel_args(user_args: str, swap_disk: str, swap_mb: int) -> str:
    """The run's module parameters: USER_ARGS (the kernel_args setting), and with swap_disk=brd one RAM disk
    of SWAP_MB, whose size brd takes only at boot."""
    words = user_args.split()
    if swap_disk == "brd":
        words += ["brd.rd_nr=1", f"brd.rd_size={swap_mb << 10}"]
    return " ".join(words)


def option_value(path) -> str:
    """PATH as the value of a -drive or -fw_cfg option, which QEMU splits at commas: a comma is written twice."""
    return str(path).replace(",", ",,")


def command(guest: Guest, serial: Path, channel: Path, swap_disk: Path = None, disks=(),
            swap_disk_profile: str = "none") -> list[str]:
    """The command line without its accelerator: the console into SERIAL, the agent's records into CHANNEL,
    SWAP_DISK as /dev/vdb, throttled as SWAP_DISK_PROFILE says, and DISKS after it (/dev/vdc, ...; snapshot=on:
    the guest's writes to them are discarded when QEMU exits)."""
    line = [QEMU, "-machine", "pc", "-m", str(guest.mem_mb), "-smp", str(guest.vcpus),
            "-kernel", str(guest.bzimage), "-append", " ".join([APPEND, *guest.kernel_args.split()]),
            "-drive", f"file={option_value(guest.image)},format=raw,if=virtio,snapshot=on",
            "-fw_cfg", f"name=opt/vswap-bench/spec,file={option_value(guest.spec)}",
            "-display", "none", "-no-reboot", "-nodefaults",
            "-serial", f"file:{serial}", "-serial", f"file:{channel}"]
    # werror=report: a write the host cannot make (its disk is full) is an I/O error in the guest, which the
    # outcome names, not a paused guest that waits for the run's timeout.
    if swap_disk is not None:
        throttle = "".join(f",throttling.{key}={value}"
                           for key, value in SWAP_DISK_THROTTLE.get(swap_disk_profile, {}).items())
        line += ["-drive", f"file={option_value(swap_disk)},format=raw,if=virtio,cache=none,werror=report{throttle}"]
    for disk in disks:
        line += ["-drive", f"file={option_value(disk)},format=raw,if=virtio,snapshot=on"]
    return line


def insn_profile_arguments(build_dir: Path, out: Path) -> list[str]:
    """The options that count the guest's kernel instructions per block into OUT, with the plugin built
    from harness/qemu-plugin/insn-profile.c into BUILD_DIR/qemu-plugin when missing or older than it."""
    plugin = build_dir / "qemu-plugin" / "insn-profile.so"
    if not plugin.is_file() or plugin.stat().st_mtime < PLUGIN_SOURCE.stat().st_mtime:
        plugin.parent.mkdir(parents=True, exist_ok=True)
        built = plugin.with_name(f".{plugin.name}.{os.getpid()}")
        compiled = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(built),
                                   str(PLUGIN_SOURCE)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if compiled.returncode:
            built.unlink(missing_ok=True)
            raise OSError(f"cannot build {plugin} from {PLUGIN_SOURCE}:\n{compiled.stdout}")
        os.replace(built, plugin)
    return ["-plugin", f"{option_value(plugin)},out={option_value(out)}"]


def accelerator_arguments(accelerator: str, timing: str) -> list[str]:
    if accelerator == "kvm":
        return ["-accel", "kvm", "-cpu", "host"]
    if timing == "icount":
        # Guest time follows executed instructions: deterministic CPU cost.
        return ["-accel", "tcg,thread=single", "-icount", "shift=3,sleep=off"]
    return ["-accel", "tcg,thread=multi"]


@dataclass(frozen=True)
class ProbeBoot:
    """What a probe boot left: QEMU's exit status (children.TIMED_OUT or KILLED when it ran out of time,
    None when it could not start), its standard error and the guest's console."""
    exit_status: int | None
    stderr: str
    console: bytes

    @property
    def reached_agent(self) -> bool:
        return AGENT_STARTED in self.console


def probe_boot(guest: Guest, accelerator: str, timeout_s: int, run_child) -> ProbeBoot:
    """GUEST's kernel booted on ACCELERATOR for at most TIMEOUT_S with the probe workload, which has the
    agent power the guest off as soon as it starts.  RUN_CHILD: see probe_kvm."""
    scratch = Path(tempfile.mkdtemp())
    try:
        (scratch / "spec").write_text("VB_WORKLOAD=probe\n")
        probe = Guest(guest.bzimage, guest.image, scratch / "spec", guest.vcpus, guest.mem_mb)
        line = command(probe, scratch / "serial", scratch / "channel") + accelerator_arguments(accelerator,
                                                                                               "realtime")
        with open(scratch / "stderr", "wb") as stderr:
            try:
                status = run_child(line, timeout_s=timeout_s, stdin=subprocess.DEVNULL, stdout=stderr,
                                   stderr=stderr)
            except OSError as error:
                stderr.write(f"cannot run {line[0]}: {error.strerror or error}\n".encode())
                status = None
        serial = scratch / "serial"
        return ProbeBoot(status, (scratch / "stderr").read_text(errors="replace"),
                         serial.read_bytes() if serial.is_file() else b"")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def probe_kvm(guest: Guest, build_dir: Path, run_child) -> str:
    """kvm if a guest really boots on it, else tcg: on some hosts /dev/kvm exists but a normal kernel hangs
    before its first console line.  The answer is cached per host boot and kernel.  RUN_CHILD(COMMAND,
    timeout_s=S, **popen) runs the probe's QEMU (children.Interrupts.run: a signal stops it)."""
    if not os.access("/dev/kvm", os.W_OK):
        return "tcg"
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    kernel = hashlib.sha256(guest.bzimage.read_bytes()).hexdigest()[:16]
    cache = build_dir / "accel-probe" / f"{boot_id}-{kernel}"
    if cache.is_file():
        return cache.read_text().strip()
    result = "kvm" if probe_boot(guest, "kvm", PROBE_S, run_child).reached_agent else "tcg"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(result + "\n")
    return result


def choose_accelerator(requested: str, timing: str, guest: Guest, build_dir: Path, run_child,
                       profile: str = "none") -> tuple[str, str]:
    """The accelerator (kvm or tcg) and a warning for the user, or "": REQUESTED is auto, kvm or tcg
    (VB_ACCEL); icount timing and a profile (a TCG plugin) run under TCG whatever the host has.  RUN_CHILD:
    see probe_kvm."""
    if timing == "icount" or profile != "none":
        return "tcg", ""
    if requested != "auto":
        return requested, ""
    chosen = probe_kvm(guest, build_dir, run_child)
    if chosen == "tcg":
        return chosen, "KVM is not usable here: running under TCG (software emulation; ~4-20x slower)"
    return chosen, ""
