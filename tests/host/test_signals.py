"""harness/common.sh's forward_signals: a signal to the runner stops everything its child started, its
grandchildren too (a workload's prepare script and its make, issue #14), and nothing outlives the runner."""
import os
import signal
import subprocess
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; only its parent has not reaped it yet.
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_a_signal_to_the_runner_stops_the_childs_own_children(tmp_path):
    grandchild, said = tmp_path / "grandchild", tmp_path / "said"
    runner = subprocess.Popen(["bash", "-c", f'. "{TOP}/harness/common.sh"; '
                               f'forward_signals bash -c \'sleep 300 & echo $! >"{grandchild}"; wait\'; '
                               f'echo "interrupted=$VB_INTERRUPTED" >"{said}"'])
    for _ in range(100):
        if grandchild.exists() and grandchild.read_text().strip():
            break
        time.sleep(0.05)
    pid = int(grandchild.read_text())
    try:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=10)
        assert said.read_text().strip() == "interrupted=1"
        for _ in range(100):
            if not alive(pid):
                break
            time.sleep(0.05)
        assert not alive(pid), "the child's own child outlived the signal"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
