"""Campaign input as a hostile user types it (issue #35): every mistake is one line naming the file and line
(or the command line), exit 64, and nothing is planned; never a traceback, never a setting dropped."""
import signal
import subprocess
import time

import pytest

from vswap_bench import settings

from test_plan import TOP, USAGE, plan, plan_ids


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


@pytest.mark.parametrize("line, words", [
    # A '#' is a comment at the start of a line only: after a value it went into the value and the config hash.
    ("MODES = plain # only plain", ["'#'", "comment"]),
    ("axis SIZE_MB = 16 32 # two sizes", ["'#'"]),
    ("repetitions = 2 # twice", ["'#'"]),
    ("MODES = bogusmode", ["MODES", "bogusmode", "plain fork shmem"]),
    ("MODES = plain plain", ["MODES", "plain plain", "twice"]),
    ("MODES =", ["MODES"]),
    ("axis MODES = plain bogusmode", ["MODES", "bogusmode"]),
    ("CLASSES = random,bogus", ["CLASSES", "random,text,zero,same"]),
    ("CLASSES = random text", ["CLASSES"]),
    ("CLASSES = random,,text", ["CLASSES"]),
    # Settings of a workload or backend no run of the campaign has are checked all the same.
    ("usemem.ORDER = seq random", ["ORDER", "one of", "seq random"]),
    ("usemem.FREE = bogus", ["FREE", "munmap exit"]),
    ("fio-swap.ENGINES = psync libfoo", ["ENGINES", "libfoo"]),
    ("stress.RACES = memfd memfd", ["RACES"]),
    ("stress.VM_METHOD = bogus", ["VM_METHOD"]),
    ("cgroup-selftests.TESTS = test_nosuch", ["TESTS", "test_nosuch"]),
    ("kernel-build.TARGETS = mm/memory.o;reboot", ["TARGETS"]),
    ("overhead.PERCENTS = 0 50 101", ["PERCENTS", "0..100"]),
    ("overhead.SWAP_SIZES_MB = device 256", ["SWAP_SIZES_MB", "device"]),
    ("disk.vcpus = 0", ["vcpus"]),
    ("axis usemem.ORDER = seq bogus", ["ORDER", "bogus"]),
])
def test_a_value_the_parameter_does_not_take_is_refused_at_its_line(tmp_path, line, words):
    done, out = plan(tmp_path, f"workload = swap-verify\nbackend = zswap\n{line}\n")
    refused(done, out, "c.conf:3", *words)


def test_a_hash_on_the_command_line_is_refused(tmp_path):
    done, out = plan(tmp_path, "workload = swap-verify\n", "MODES=plain#x")
    refused(done, out, "command line", "'#'")


@pytest.mark.parametrize("settings", [
    "MODES = fork shmem\nCLASSES = text,zero\n",
    "workload = stress\nRACES =\nVM_METHOD = flip\n",
    "workload = stress\nRACES = compact memfd\n",
    "workload = kernel-build\nTARGETS = vmlinux mm/mincore.o\n",
    "workload = overhead\nSWAP_SIZES_MB = device\nPERCENTS = 0 100\n",
    "workload = overhead\nSWAP_SIZES_MB = 256 1024\n",
    "workload = fio-swap\nENGINES = mmap\nBS = 64k\nPATTERNS = randrw\n",
    "workload = usemem\nORDER = random\nFREE = exit\n",
])
def test_values_a_parameter_takes_plan(tmp_path, settings):
    done, out = plan(tmp_path, settings)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def workloads(tmp_path, monkeypatch):
    """A workloads folder of one's own, with workloads/lib/values.conf as shipped: write_conf(TEXT) makes
    its workload w's workload.conf."""
    folder = tmp_path / "workloads"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "values.conf").write_text((settings.WORKLOADS_DIR / "lib" / "values.conf").read_text())
    (folder / "w").mkdir()
    monkeypatch.setattr(settings, "WORKLOADS_DIR", folder)
    settings.workload_conf.cache_clear()
    yield lambda text: (folder / "w" / "workload.conf").write_text(text)
    settings.workload_conf.cache_clear()


@pytest.mark.parametrize("text, words", [
    ("SIZE_MB=64\nMODE=plain\n", ["w/workload.conf:2", "MODE", "one-of"]),
    ("some-of MODE = plain fork\nMODE=bogus\n", ["w/workload.conf:2", "MODE", "bogus"]),
    ("some-of MODE = plain fork\nsome-of MODE = plain\nMODE=plain\n", ["w/workload.conf:2", "w/workload.conf:1", "twice"]),
    ("MODE=plain\nMODE=fork\nsome-of MODE = plain fork\n", ["w/workload.conf:2", "twice"]),
    ("one-of ORDER = seq random\nMODE=plain\nsome-of MODE = plain\n", ["w/workload.conf:1", "ORDER"]),
    ("one-of vcpus = 1 2\n", ["w/workload.conf:1", "vcpus"]),
    ("some-of PERCENTS = 0..x\nPERCENTS=0\n", ["w/workload.conf:1", "0..x"]),
    ("some-of CLASSES = random\nCLASSES=random\n", ["w/workload.conf:1", "CLASSES", "values.conf"]),
    ("MODE=plain # the one\nsome-of MODE = plain\n", ["w/workload.conf:1", "'#'"]),
])
def test_a_workload_conf_that_leaves_a_parameter_unchecked_is_refused(workloads, text, words):
    workloads(text)
    with pytest.raises(settings.UsageError) as refusal:
        settings.workload_defaults("w")
    for word in words:
        assert word in str(refusal.value), refusal.value


def test_every_shipped_string_parameter_declares_its_values():
    for workload in settings.workload_names():
        declared = settings.workload_values(workload)
        for key, default in settings.workload_defaults(workload).items():
            if not settings.is_setting_key(key) and not settings.WHOLE_PATTERN.fullmatch(default.value):
                assert key in declared, (workload, key)
                assert declared[key].problem(default.value) is None, (workload, key)


@pytest.mark.parametrize("number, when", [(signal.SIGINT, "expanding"), (signal.SIGTERM, "writing"),
                                          (signal.SIGHUP, "writing")])
def test_a_signal_while_planning_is_one_line_and_128_plus_its_number(tmp_path, number, when):
    conf = tmp_path / "c.conf"
    conf.write_text("axis kernel = baseline vswap\nrepetitions = 4500\n")
    out = tmp_path / "out"
    # INT at its default, as a terminal starts a command (the tests may run with it ignored).
    planner = subprocess.Popen(["env", "--default-signal=INT", TOP / "harness" / "plan.sh", conf, out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Expanding and checking 9000 runs takes seconds, writing them tens of seconds.
    for _ in range(600):
        if when == "expanding" or (out / "runs").exists():
            break
        time.sleep(0.05)
    time.sleep(0.5)
    planner.send_signal(number)
    stdout, stderr = planner.communicate(timeout=120)
    assert planner.returncode == 128 + number, stderr
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    assert signal.Signals(number).name in stderr and stdout == ""
    assert not (out / "plan").exists()


def test_a_read_only_campaign_folder_is_one_line_and_nothing_written(tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("axis kernel = baseline vswap\n")
    out = tmp_path / "results" / "c"
    out.mkdir(parents=True)
    # Root writes through a mode of 0555: the folder is a read-only bind mount, in a mount namespace of its own.
    read_only = f'mount --bind "{out}" "{out}" && mount -o remount,bind,ro "{out}"'
    if subprocess.run(["unshare", "-m", "sh", "-c", read_only], capture_output=True).returncode != 0:
        pytest.skip("cannot mount here (needs root)")
    done = subprocess.run(["unshare", "-m", "sh", "-c", f'{read_only} && exec "$0" "$@"', TOP / "harness" / "plan.sh",
                           conf, out], capture_output=True, text=True, timeout=120)
    assert done.returncode == 74, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert str(out) in done.stderr, done.stderr
    assert list(out.iterdir()) == []
