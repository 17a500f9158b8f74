"""Campaign input as a hostile user types it (issue #35): every mistake is one line naming the file and line
(or the command line), exit 64, and nothing is planned; never a traceback, never a setting dropped."""
import pytest

from test_plan import USAGE, plan, plan_ids


def refused(done, out, *words):
    """DONE was refused as bad input with one line holding WORDS, and OUT has nothing in it."""
    assert done.returncode == USAGE, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr
    assert not out.exists(), sorted(out.rglob("*"))


@pytest.mark.parametrize("first, second", [
    ("axis vcpus = 1 2", "axis vcpus = 4"),
    ("vcpus = 1", "vcpus = 2"),
    ("axis vcpus = 1 2", "vcpus = 4"),
    ("vcpus = 4", "axis vcpus = 1 2"),
    ("swap-verify.SIZE_MB = 32", "swap-verify.SIZE_MB = 16"),
    ("repetitions = 2", "repetitions = 3"),
    ("warmup = 1", "warmup = 1"),
    ("aa = baseline", "aa = baseline"),
])
def test_a_key_given_twice_in_a_campaign_is_refused_naming_both_lines(tmp_path, first, second):
    done, out = plan(tmp_path, f"workload = swap-verify\n{first}\nbackend = zswap\n{second}\n")
    refused(done, out, "c.conf:2", "c.conf:4", "twice")


def test_a_key_given_twice_on_the_command_line_is_refused_by_name(tmp_path):
    done, out = plan(tmp_path, "workload = swap-verify\n", "vcpus=1", "backend=disk", "vcpus=2")
    refused(done, out, "vcpus", "command line", "twice")


def test_a_command_line_key_still_replaces_the_files(tmp_path):
    done, out = plan(tmp_path, "workload = swap-verify\naxis vcpus = 1 2\n", "vcpus=4")
    assert done.returncode == 0, done.stderr
    assert len(plan_ids(out)) == 1
    assert "vcpus=4\n" in (out / "runs" / plan_ids(out)[0] / "params").read_text()
