"""The outcome of a run from what the runner saw, over recorded guests (tests/host/guests/NAME: the serial
console, the agent's channel, QEMU's exit status and stderr, and expected.json)."""
import json
from pathlib import Path

import pytest

from vswap_bench import outcome
from vswap_bench.status import Status

GUESTS = Path(__file__).parent / "guests"


def guest_end(guest: Path, *, interrupted=False) -> outcome.GuestEnd:
    def text(name, default=""):
        path = guest / name
        return path.read_text() if path.exists() else default
    return outcome.GuestEnd(qemu_exit=int(text("exit", "0")), interrupted=interrupted, timeout_s=900,
                            serial=text("serial.log"), records=outcome.split_records(text("channel.raw")),
                            qemu_stderr=text("stderr"))


@pytest.mark.parametrize("guest", sorted(GUESTS.iterdir()), ids=lambda path: path.name)
def test_recorded_guest(guest):
    expected = json.loads((guest / "expected.json").read_text())
    end = guest_end(guest)
    status, reason = outcome.decide(end)
    assert status.value == expected["status"]
    assert expected["reason"] in reason if expected["reason"] else reason == ""
    assert sorted(end.records.partial) == expected.get("partial", [])
    assert outcome.kernel_warnings(end.serial) == expected.get("kernel_warnings", 0)
    assert outcome.kernel_reports(end.serial) == expected.get("kernel_reports", {})


@pytest.mark.parametrize("guest", ["clean", "panic", "hang"])
def test_a_signal_to_the_runner_wins_over_whatever_the_guest_did(guest):
    assert outcome.decide(guest_end(GUESTS / guest, interrupted=True))[0] is Status.INTERRUPTED


def test_records_split_as_the_agent_frames_them():
    records = outcome.split_records("noise\n@@VB-BEGIN a\nline 1\n\n@@VB-END a\n@@VB-BEGIN b\nhalf")
    assert records.complete == {"a": "line 1\n\n"}
    assert records.partial == {"b": "half\n"}


def test_a_record_cut_off_by_the_next_one_is_partial():
    records = outcome.split_records("@@VB-BEGIN a\nhalf\n@@VB-BEGIN b\nwhole\n@@VB-END b\n")
    assert records.complete == {"b": "whole\n"} and records.partial == {"a": "half\n"}
