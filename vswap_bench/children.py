"""The processes a run starts (a workload's prepare script, QEMU) and the signals that stop them.

Each child runs in a session of its own: a signal to the runner stops the child's whole process group, so
whatever it started that does not pass signals on (a prepare script's make) stops with it.  Each child gets
TERM when the runner dies, even when the runner is killed outright (kill -9), so no guest is left behind
with nobody waiting for it.
"""
import ctypes
import os
import signal
import subprocess
import time

PR_SET_PDEATHSIG = 1
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# As timeout(1) exits: 124 when the time ran out, 128 + KILL when the child needed KILL after its TERM.
TIMED_OUT, KILLED = 124, 128 + signal.SIGKILL
# The seconds a child has between TERM and KILL once its time has run out (timeout -k 5).
KILL_AFTER_S = 5


def _dies_with(parent: int):
    """preexec_fn of a child: TERM when PARENT dies; a parent already gone by then stops it at once."""
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec():
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
    return preexec


def exit_status(returncode: int) -> int:
    """A returncode as a shell reports it: 128 + the signal that ended the process."""
    return 128 - returncode if returncode < 0 else returncode


def _has_exited(child: subprocess.Popen) -> bool:
    """Whether CHILD has exited, reaped or not (waitid's WNOWAIT leaves the reaping to Popen)."""
    if child.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


class Interrupts:
    """While active (a with block), INT, TERM and HUP to the runner are noted in `interrupted` and passed on
    as TERM to the process group of the child running then, which `stopped_child` notes; a child is not
    started once one came.  The handlers from before the block are back after it."""

    def __init__(self):
        self.interrupted = False
        self.stopped_child = False
        self._child = None

    def __enter__(self):
        self._before = {number: signal.signal(number, self._on_signal) for number in INTERRUPTS}
        return self

    def __exit__(self, *exception):
        for number, handler in self._before.items():
            signal.signal(number, handler)

    def ignore(self):
        """From now on the signals change nothing: the outcome is recorded whatever comes (a ^C in the second
        after QEMU exited once recorded a finished run as failed-infra).  run.sh learns of the signal itself."""
        for number in INTERRUPTS:
            signal.signal(number, signal.SIG_IGN)

    def _on_signal(self, number, frame):
        self.interrupted = True
        # A child that has exited but is not reaped yet ended on its own: a ^C the moment QEMU exited once
        # recorded the run it had finished as interrupted.
        if self._child is not None and not _has_exited(self._child):
            self.stopped_child = True
            self._stop(signal.SIGTERM)

    def _stop(self, number):
        child = self._child
        if child is not None and child.returncode is None:
            try:
                os.killpg(child.pid, number)
            except ProcessLookupError:
                pass

    def run(self, command: list, *, timeout_s=None, every_s=1.0, poll=None, **popen) -> int:
        """COMMAND's exit status (128 + N when signal N ended it), TIMED_OUT or KILLED when it ran out of its
        TIMEOUT_S; POLL() is called every EVERY_S seconds while it runs, and when it returns a number of
        seconds the child may run at least that much longer, past TIMEOUT_S.  Popen's errors (no such
        program) are the caller's."""
        if self.interrupted:
            return 128 + signal.SIGTERM
        self._child = subprocess.Popen(command, start_new_session=True, preexec_fn=_dies_with(os.getpid()),
                                       **popen)
        try:
            if self.interrupted:  # the signal came while the child was being started
                self.stopped_child = True
                self._stop(signal.SIGTERM)
            deadline = None if timeout_s is None else time.monotonic() + timeout_s
            while True:
                left = every_s if deadline is None else min(every_s, deadline - time.monotonic())
                try:
                    return exit_status(self._child.wait(max(left, 0)))
                except subprocess.TimeoutExpired:
                    pass
                more_s = poll() if poll else None
                if more_s is not None and deadline is not None:
                    deadline = max(deadline, time.monotonic() + more_s)
                if deadline is not None and time.monotonic() >= deadline:
                    return self._time_out()
        finally:
            # Whatever went wrong here, the child does not outlive its wait.
            self._stop(signal.SIGKILL)
            self._child.wait()
            self._child = None

    def _time_out(self) -> int:
        self._stop(signal.SIGTERM)
        try:
            self._child.wait(KILL_AFTER_S)
            return TIMED_OUT
        except subprocess.TimeoutExpired:
            self._stop(signal.SIGKILL)
            self._child.wait()
            return KILLED
