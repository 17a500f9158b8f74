"""How a run ended, decided from what the runner saw: a pure function, so every case is testable without a
guest (tests/host/test_outcome.py replays serial logs of each kind).

The agent sends framed records on the second serial port:
  @@VB-BEGIN <name>
  ...the record...
  @@VB-END <name>
A record without its END line was cut off by a crash or a kill; it is kept apart as partial.
"""
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .settings import TOP
from .children import KILLED, TIMED_OUT
from .status import Status

# The kernel-log patterns (guest-image/agent/kernel-log.patterns, shared with the guest): NAME KIND REGEX.
PATTERNS_FILE = TOP / "guest-image" / "agent" / "kernel-log.patterns"
KINDS = ("crash", "splat")


def read_patterns(path: Path = PATTERNS_FILE) -> dict[str, tuple[str, re.Pattern]]:
    """NAME -> (KIND, compiled REGEX), in the file's order."""
    patterns = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, kind, regex = (line.split(None, 2) + ["", ""])[:3]
        if kind not in KINDS or not regex or name in patterns:
            raise ValueError(f"{path}:{number}: not NAME {'|'.join(KINDS)} REGEX, or NAME again: {line!r}")
        patterns[name] = (kind, re.compile(regex))
    return patterns


PATTERNS = read_patterns()
# A console line that means the guest kernel crashed.
CRASH_PATTERN = re.compile("|".join(regex.pattern for kind, regex in PATTERNS.values() if kind == "crash"))
# A kernel warning (WARN_ON, lockdep's reports): counted in qemu.json, not a crash.
WARNING_PATTERN = PATTERNS["warning"][1]
# The swap disk's device failing a write (blk_print_req_error in block/blk-mq.c: a request QEMU completed
# with an error): with werror=report (qemu.py) that is the host's disk running full, seen from
# the guest, and the measurement is not of the kernel.  A kernel that writes where it must not gets no such
# line (its bio fails in block/blk-core.c's end-of-device check, before the device), so this never hides a
# kernel bug.
SWAP_WRITE_ERROR = re.compile(r"I/O error, dev vdb, sector \d+ op 0x1:\(WRITE\)")
# QEMU's last words when a TERM, INT or HUP from someone else ends it; it then exits 0, as a guest powering
# off makes it (a kill of QEMU by hand, a host's shutdown).
STOPPED_FROM_OUTSIDE = re.compile(r"terminating on signal \d+")
# printk's "[    1.234567] " time stamp.
TIMESTAMP = re.compile(r"^\[[^]]*\] ")
# How a child that ran out of its time exits (children.py, as timeout(1) does).
TIMEOUT_EXITS = (TIMED_OUT, KILLED)
BEGIN, END = "@@VB-BEGIN ", "@@VB-END "
# The record the agent sends the moment the workload has ended, by itself, its limit or the OOM killer.
# From then on the guest has COLLECT_S to report and power off, even past the run's timeout: the run's
# timeout bounds boot and workload, and the teardown of a cgroup thrashing at its limit (its killed
# tasks must leave reclaim to die) took 15 s on a quiet 2-core TCG host, 25 s beside a kernel build and
# over 55 s on a CI host, where a fixed margin inside the timeout ran out.
WORKLOAD_ENDED = "workload-ended"
COLLECT_S = 180


@dataclass
class Records:
    complete: dict = field(default_factory=dict)  # name -> text
    partial: dict = field(default_factory=dict)  # name -> the text that came before the guest died


class RecordSplitter:
    """Splits the channel line by line as it arrives: the runner stores each record as soon as its END line
    has come, and the whole channel is split the same way once QEMU is gone (split_records)."""

    def __init__(self):
        self.records = Records()
        self._name, self._lines = None, []

    def feed(self, text: str) -> list[str]:
        """TEXT, whole lines of the channel; returns the names of the records it completed, in order."""
        completed = []
        for line in text.splitlines():
            if line.startswith(BEGIN):
                if self._name is not None:
                    self.records.partial[self._name] = "".join(self._lines)
                self._name, self._lines = line[len(BEGIN):].strip(), []
            elif line.startswith(END) and self._name is not None:
                self.records.complete[self._name] = "".join(self._lines)
                self.records.partial.pop(self._name, None)
                completed.append(self._name)
                self._name = None
            elif self._name is not None:
                self._lines.append(line + "\n")
        return completed

    def finish(self) -> Records:
        """The records once the channel has ended: one still open was cut off."""
        if self._name is not None:
            self.records.partial[self._name] = "".join(self._lines)
            self._name = None
        return self.records


def split_records(channel: str) -> Records:
    splitter = RecordSplitter()
    splitter.feed(channel)
    return splitter.finish()


@dataclass(frozen=True)
class GuestEnd:
    """What the runner knows once QEMU is gone."""
    qemu_exit: int
    interrupted: bool  # the runner got INT, TERM or HUP while QEMU ran
    timeout_s: int
    serial: str
    records: Records
    qemu_stderr: str = ""


def first_line(pattern: re.Pattern, serial: str):
    """The first console line PATTERN matches, without its time stamp; None if none does."""
    for line in serial.splitlines():
        if pattern.search(line):
            return TIMESTAMP.sub("", line).strip()
    return None


def decide(end: GuestEnd) -> tuple[Status, str]:
    """The run's status and the reason a person reads, in order of precedence: a signal to the runner,
    QEMU's time running out, a kernel crash, then what the agent reported."""
    records = end.records.complete
    if end.interrupted:
        return Status.INTERRUPTED, "stopped by a signal to the runner"
    if end.qemu_exit in TIMEOUT_EXITS:
        if WORKLOAD_ENDED in records:
            return Status.TIMEOUT, (f"no power-off within {COLLECT_S}s of the workload's end "
                                    f"(the run's {end.timeout_s}s had passed)")
        return Status.TIMEOUT, f"no power-off within {end.timeout_s}s"
    crash = first_line(CRASH_PATTERN, end.serial)
    if crash:
        return Status.KERNEL_CRASH, crash
    swap_error = first_line(SWAP_WRITE_ERROR, end.serial)
    if swap_error:
        return Status.FAILED_INFRA, (f"the host failed writes to the swap disk: {swap_error} (is the host's "
                                     f"disk holding the run folder full?)")
    for name, status in (("workload-timeout", Status.TIMEOUT), ("unsupported", Status.UNSUPPORTED),
                         ("infra", Status.FAILED_INFRA)):
        if name in records:
            return status, records[name].strip()
    if end.qemu_exit != 0:
        last = end.qemu_stderr.strip().splitlines()[-1:] or [""]
        return Status.FAILED_INFRA, f"qemu exited with {end.qemu_exit}: {last[0]}"
    if "result.json" not in records:
        stopped = first_line(STOPPED_FROM_OUTSIDE, end.qemu_stderr)
        if stopped:
            return Status.FAILED_INFRA, f"QEMU was stopped by a signal from outside the runner ({stopped})"
        return Status.FAILED_INFRA, "the guest powered off without a result"
    try:
        result = json.loads(records["result.json"])
    except json.JSONDecodeError as error:
        return Status.FAILED_INFRA, f"result.json is not valid JSON: {error}"
    if not isinstance(result, dict):
        return Status.FAILED_INFRA, "result.json is not a JSON object"
    if "vswap-verify-failed" in records:
        check = " ".join(records["vswap-verify-failed"].strip().splitlines()[:3])
        return Status.FAILED_WORKLOAD, f"vswap/verify failed while the workload ran: {check}"
    if result.get("workload_exit") != 0:
        stderr = records.get("workload.stderr", "").strip().splitlines()
        return Status.FAILED_WORKLOAD, " ".join(stderr[-3:]) or f"workload exit {result.get('workload_exit')}"
    return Status.DONE, ""


def kernel_warnings(serial: str) -> int:
    return sum(1 for line in serial.splitlines() if WARNING_PATTERN.search(line))


# What differs between two console lines of one report and is not the report: the offset into a function
# (func+0x1f/0x80), an address, the CPU and task of the moment, a time.
REPORT_DETAILS = (
    (re.compile(r"\+0x[0-9a-f]+/0x[0-9a-f]+"), ""),
    (re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]{16}\b"), "ADDR"),
    (re.compile(r"CPU: \d+ (UID: \d+ )?PID: \d+ "), ""),
    (re.compile(r"\b(task \S+):\d+\b"), r"\1"),
    (re.compile(r"\b\d+ seconds\b"), "N seconds"),
)


def report_title(line: str) -> str:
    """LINE without its time stamp and the details above: one title for every occurrence of a report."""
    title = TIMESTAMP.sub("", line).strip()
    for detail, replacement in REPORT_DETAILS:
        title = detail.sub(replacement, title)
    return title


# A frame of a call trace ("  ? lockdep_hardirqs_on+0x8c/0x130"): part of a report, never its title.
STACK_FRAME = re.compile(r"^\s*(\? )?[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+\s*$")


def kernel_reports(serial: str) -> dict[str, int]:
    """Each distinct report of the kernel (a console line of the kernel-log patterns, by report_title) and
    how often it came, in the order of first appearance: which races or warnings a debug run hit."""
    reports: dict[str, int] = {}
    for line in serial.splitlines():
        if (any(regex.search(line) for _, regex in PATTERNS.values())
                and not STACK_FRAME.match(TIMESTAMP.sub("", line))):
            title = report_title(line)
            reports[title] = reports.get(title, 0) + 1
    return reports
