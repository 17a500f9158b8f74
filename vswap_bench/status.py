"""How a run ended, and the exit code the runner gives for it (docs/results-format.md)."""
import enum


class Status(enum.Enum):
    """Every status a run can have; `exit_code` is the runner's exit for it (None: not an ending)."""

    def __new__(cls, label: str, exit_code):
        member = object.__new__(cls)
        member._value_ = label
        member.exit_code = exit_code
        return member

    PLANNED = ("planned", None)
    RUNNING = ("running", None)
    DONE = ("done", 0)
    FAILED_WORKLOAD = ("failed-workload", 1)
    KERNEL_CRASH = ("kernel-crash", 2)
    TIMEOUT = ("timeout", 3)
    FAILED_INFRA = ("failed-infra", 4)
    UNSUPPORTED = ("unsupported", 5)
    # 128 + SIGINT, as a shell reports a command ^C stopped.
    INTERRUPTED = ("interrupted", 130)


# Bad input (a campaign file, a command line): the runner refuses it before anything runs.
USAGE_EXIT = 64
# A file of the run record could not be written (a full disk, a results folder that became unwritable): the
# runs after it would fail the same way, so run.sh stops the campaign.  sysexits' EX_IOERR, beside EX_USAGE.
RECORD_EXIT = 74
# The run's folder is locked by a process of an earlier run that will not stop: the run was not run and is left
# as it was, its retry unused (sysexits' EX_TEMPFAIL).
LOCK_HELD_EXIT = 75


# A run that ended so is not run again by --resume (failed-infra and timeout are retried once).
FINISHED = frozenset({Status.DONE.value, Status.UNSUPPORTED.value, Status.FAILED_WORKLOAD.value,
                      Status.KERNEL_CRASH.value})
RETRIED_ONCE = frozenset({Status.FAILED_INFRA.value, Status.TIMEOUT.value})
# The runs that do not count as failed in a campaign's exit status.
PASSED = frozenset({Status.DONE.value, Status.UNSUPPORTED.value})


def resume_action(status: str) -> str:
    """What --resume does with a run of STATUS: keep it, run it again once (a second time it stands), or run it."""
    return "keep" if status in FINISHED else "retry-once" if status in RETRIED_ONCE else "run"


def has_ended(status: str) -> bool:
    """Whether STATUS is an ending the runner wrote (not planned, running or unreadable)."""
    return any(status == member.value and member.exit_code is not None for member in Status)
