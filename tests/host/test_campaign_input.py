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


@pytest.mark.parametrize("line, words", [
    ("repetitions = 100000000000000000000", ["repetitions", "10000"]),
    ("repetitions = ²", ["repetitions", "'²'"]),
    ("repetitions = ３", ["repetitions", "'３'"]),
    ("warmup = 100000000000000000000", ["warmup"]),
    ("swap_mb = 100000000000000000000000", ["swap_mb", "16777216"]),
    ("guest_mem_mb = 1000000", ["guest_mem_mb", "262144"]),
    ("timeout = 10000000", ["timeout", "86400"]),
    ("verify_poll = 100000", ["verify_poll"]),
    ("vswap_slots = 100000000000000000000", ["vswap_slots"]),
    ("vcpus = ２", ["vcpus", "'２'"]),
    # strtoul (workloads/lib/vbutil.c) and the guest's shell arithmetic read 010 as 8.
    ("vcpus = 02", ["vcpus", "'02'"]),
    ("SIZE_MB = 010", ["SIZE_MB", "'010'"]),
    ("SIZE_MB = ６４", ["SIZE_MB"]),
    ("SIZE_MB = 100000000000000000000", ["SIZE_MB", "2147483647"]),
    ("swap_max = 100000000000000000000000G", ["swap_max", "16384G"]),
    ("zram_size = 100000G", ["zram_size"]),
    # Longer than Python converts to an int (4300 digits).
    ("timeout = " + "9" * 5000, ["timeout"]),
    ("memory_max = " + "9" * 5000 + "M", ["memory_max"]),
], ids=lambda value: value[:40] if isinstance(value, str) else "")
def test_a_number_past_its_bound_or_not_in_ascii_digits_is_refused(tmp_path, line, words):
    done, out = plan(tmp_path, f"workload = swap-verify\nbackend = zswap\n{line}\n")
    refused(done, out, "c.conf:3", *words)


def test_a_plan_of_too_many_runs_is_refused_before_it_is_expanded(tmp_path):
    # 4 kernels x 10 x 10 x 10 configurations x 30 repetitions: 120000 runs, each a minute or more.
    text = ("axis kernel = baseline vswap baseline-debug vswap-debug\naxis SIZE_MB = " + " ".join(map(str, range(1, 11)))
            + "\naxis CHILDREN = " + " ".join(map(str, range(1, 11))) + "\naxis SEED = " + " ".join(map(str, range(1, 11)))
            + "\nrepetitions = 30\n")
    done, out = plan(tmp_path, text)
    refused(done, out, "120000 runs", "10000")


def test_the_largest_plan_allowed_plans(tmp_path):
    done, out = plan(tmp_path, "axis kernel = baseline vswap\nrepetitions = 4999\nwarmup = 1\n")
    assert done.returncode == 0, done.stderr
    assert len(plan_ids(out)) == 10000
