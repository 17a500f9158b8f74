"""harness/plan.sh from the outside: what a careful new user typed wrong (issue #14) must be refused whole,
with the file and line it came from, before any run folder exists; what is right must plan as before."""
import json
import subprocess
from pathlib import Path

import pytest

from vswap_bench.campaign import SERIES_PATHS
from vswap_bench.status import PASSED, has_ended, resume_action

TOP = Path(__file__).resolve().parents[2]
USAGE = 64


def plan(tmp_path, campaign_text, *overrides, name="c.conf"):
    conf = tmp_path / name
    conf.write_bytes(campaign_text.encode())
    out = tmp_path / "out"
    # A plan that does not end (a count nobody bounded) fails the test rather than hanging it.
    done = subprocess.run([TOP / "harness" / "plan.sh", conf, out, *overrides],
                          capture_output=True, text=True, timeout=120)
    return done, out


def plan_ids(out):
    return (out / "plan").read_text().split()


BASE = "axis kernel = baseline vswap\nworkload = swap-verify\n"


@pytest.mark.parametrize("line, words", [
    ("repetition = 3", ["repetition", "repetitions"]),
    ("nosuchwl.SIZE_MB = 32", ["nosuchwl"]),
    ("memory_max = 17179869184G", ["memory_max"]),
    ("memory_max = 0", ["memory_max"]),
    ("memory_max = 1", ["memory_max"]),
    ("memory_max = 4K", ["memory_max"]),
    ("memory_max =", ["memory_max"]),
    ("vcpus = 100", ["vcpus"]),
    ("zswap_pool_percent = 500", ["zswap_pool_percent"]),
    ("zswap_compressor = nosuch", ["zswap_compressor", "nosuch"]),
    ("rotational = 7", ["rotational"]),
    ("swap_disk = nvme", ["swap_disk", "virtio ram brd"]),
    ("swap_disk_profile = nvme", ["swap_disk_profile", "none ssd hdd"]),
    ("swap_disk_profile = hdd\nswap_disk = brd", ["swap_disk_profile=hdd", "swap_disk=brd is not one"]),
    ("thp = huge", ["thp", "kernel never madvise always 64K"]),
    ("aslr = 2", ["aslr", "0 1"]),
    # Only module parameters: other words reach the guest's init, or change how it boots or what it shows.
    ("kernel_args = vswap.slots=1024 init=/bin/sh", ["kernel_args", "init=/bin/sh", "MODULE.PARAM=VALUE"]),
    ("kernel_args = quiet", ["kernel_args", "quiet"]),
    ("kernel_args = brd.rd_size=4096", ["kernel_args", "brd.rd_size=4096", "swap_mb"]),
    ("kernel_args = snapshot", ["kernel_args", "snapshot"]),
    ("kernel_args = BASH_ENV=/x", ["kernel_args", "BASH_ENV"]),
    ("kernel_args = vswap.slots=1;reboot", ["kernel_args", "vswap.slots=1;reboot"]),
    ('kernel_args = "zswap.x=\'b c\'"', ["kernel_args", "zswap.x='b"]),
    ("fail_slab_in = vswap_alloc_swap_slot+0x10", ["fail_slab_in", "kernel function"]),
    ("fail_slab_percent = 0", ["fail_slab_percent", "1 to 100"]),
    # failslab is in the debug kernels only, and a share of failures needs a function to fail under.
    ("fail_slab_in = vswap_alloc_swap_slot", ["fail_slab_in", "debug kernel", "baseline-debug"]),
    ("fail_slab_percent = 20", ["fail_slab_percent", "without fail_slab_in"]),
    ("SIZE_MB = abc", ["SIZE_MB", "abc"]),
    ("kernel = nosuch", ["kernel", "nosuch"]),
    ("= 5", ["key"]),
    ("axis kernel = baseline baseline", ["baseline", "twice"]),
    # The A/A group: a kernel of the campaign (here only the default baseline), named once, set plan-wide.
    ("aa = vswap", ["aa", "vswap", "baseline"]),
    ("aa = nosuch", ["aa", "nosuch"]),
    ("aa = baseline baseline", ["baseline", "twice"]),
    ("zswap.aa = baseline", ["aa", "zswap"]),
    ("swap-verify.aa = vswap", ["aa", "vswap", "baseline"]),
    ("swap-verify.warmup = 1", ["warmup", "swap-verify"]),
    ("swap-verify.repetitions = 0", ["repetitions", "0"]),
    ("zswap.repetitions = 2", ["repetitions", "zswap"]),
    ("axis swap-verify.repetitions = 1 2", ["repetitions"]),
    ("axis aa = baseline", ["aa"]),
    ("label = baseline-aa", ["label", "aa = KERNEL"]),
])
def test_a_bad_campaign_line_is_refused_with_its_place_and_nothing_is_planned(tmp_path, line, words):
    # The bad line is the third: the message must say c.conf:3.
    done, out = plan(tmp_path, f"workload = swap-verify\nbackend = zswap\n{line}\n")
    assert done.returncode == USAGE, done.stderr
    assert "c.conf:3" in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr
    assert "subscript" not in done.stderr
    assert not (out / "runs").exists() and not (out / "plan").exists()


def test_an_unknown_command_line_key_is_blamed_on_the_command_line(tmp_path):
    done, _ = plan(tmp_path, BASE, "SIZE_GB=1")
    assert done.returncode == USAGE
    assert "command line" in done.stderr and "c.conf" not in done.stderr, done.stderr


def test_a_bad_command_line_value_is_refused(tmp_path):
    done, out = plan(tmp_path, BASE, "vcpus=0")
    assert done.returncode == USAGE and "vcpus" in done.stderr, done.stderr
    assert not (out / "runs").exists()


def test_crlf_line_endings_plan_as_lf(tmp_path):
    text = BASE + "swap-verify.SIZE_MB = 32\n"
    (tmp_path / "lf").mkdir()
    (tmp_path / "crlf").mkdir()
    lf, lf_out = plan(tmp_path / "lf", text)
    crlf, crlf_out = plan(tmp_path / "crlf", text.replace("\n", "\r\n"))
    assert lf.returncode == crlf.returncode == 0, crlf.stderr
    assert plan_ids(lf_out) == plan_ids(crlf_out)


def test_every_warmup_has_its_own_run_id(tmp_path):
    done, out = plan(tmp_path, BASE + "warmup = 2\n")
    assert done.returncode == 0, done.stderr
    ids = plan_ids(out)
    assert len(ids) == 6 and len(set(ids)) == 6, ids


def test_abba_order_and_config_hash_shared_by_kernels(tmp_path):
    done, out = plan(tmp_path, BASE + "axis backend = zswap disk\nrepetitions = 2\n")
    assert done.returncode == 0, done.stderr
    ids = plan_ids(out)
    order = [run_id.rsplit("-", 2)[0] for run_id in ids]
    assert order == ["swap-verify-zswap-baseline", "swap-verify-zswap-vswap", "swap-verify-disk-baseline",
                     "swap-verify-disk-vswap", "swap-verify-zswap-vswap", "swap-verify-zswap-baseline",
                     "swap-verify-disk-vswap", "swap-verify-disk-baseline"]
    assert json.loads((out / "campaign.json").read_text())["runs"] == ids
    hashes = [run_id.rpartition("-")[2] for run_id in ids]
    assert hashes[0] == hashes[1] == hashes[5] != hashes[2]


def test_runs_differing_only_in_vcpus_are_two_configurations(tmp_path):
    done, out = plan(tmp_path, BASE + "axis vcpus = 1 2\n")
    assert done.returncode == 0, done.stderr
    assert len({run_id.rpartition("-")[2] for run_id in plan_ids(out)}) == 2


@pytest.mark.parametrize("conf", sorted(TOP.glob("campaigns/*.conf")) + sorted(TOP.glob("tests/campaigns/*.conf")),
                         ids=lambda path: path.stem)
def test_every_shipped_campaign_plans(tmp_path, conf):
    done = subprocess.run([TOP / "harness" / "plan.sh", conf, tmp_path / "out"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(plan_ids(tmp_path / "out")) > 0


def test_run_ids_are_those_of_the_shell_planner(tmp_path):
    # The first-look campaign as harness/plan.sh planned it before vswap_bench: --resume keeps working.
    done, out = plan(tmp_path, (TOP / "campaigns" / "first-look.conf").read_text())
    assert plan_ids(out) == ["swap-verify-zswap-baseline-r1-e1a50703", "swap-verify-zswap-vswap-r1-e1a50703",
                             "swap-verify-disk-baseline-r1-6755b52b", "swap-verify-disk-vswap-r1-6755b52b"]


def test_zram_with_a_compressor_its_backends_lack_is_refused(tmp_path):
    # zram would refuse lz4 and run on lzo-rle while run.json said lz4.
    done, out = plan(tmp_path, "workload = swap-verify\nbackend = zram\nzswap_compressor = lz4\n")
    assert done.returncode == USAGE and "c.conf:3" in done.stderr and "zram" in done.stderr, done.stderr
    assert not (out / "runs").exists()


def test_aa_runs_the_kernel_again_under_its_aa_label_in_the_abba_order(tmp_path):
    done, out = plan(tmp_path, BASE + "aa = baseline\nrepetitions = 2\nwarmup = 1\n")
    assert done.returncode == 0, done.stderr
    ids = plan_ids(out)
    assert [run_id.rpartition("-")[0] for run_id in ids] == [
        "swap-verify-zswap-baseline-warmup1", "swap-verify-zswap-vswap-warmup1",
        "swap-verify-zswap-baseline-r1", "swap-verify-zswap-vswap-r1", "swap-verify-zswap-baseline-aa-r1",
        "swap-verify-zswap-baseline-aa-r2", "swap-verify-zswap-vswap-r2", "swap-verify-zswap-baseline-r2"]
    assert len(set(ids)) == len(ids)
    # The label is no part of the configuration: one hash, the same as without the A/A group.
    (tmp_path / "plain").mkdir()
    _, plain = plan(tmp_path / "plain", BASE)
    assert {run_id.rpartition("-")[2] for run_id in ids} == {plan_ids(plain)[0].rpartition("-")[2]}
    params = (out / "runs" / ids[4] / "params").read_text().splitlines()
    assert "kernel=baseline" in params and "label=baseline-aa" in params
    plan_json = json.loads((out / "campaign.json").read_text())
    assert plan_json["kernels"] == ["baseline", "vswap"]
    assert plan_json["labels"] == ["baseline", "vswap", "baseline-aa"]


def test_the_progress_lines_give_the_label_and_the_build_it_boots(tmp_path):
    done, out = plan(tmp_path, BASE + "aa = baseline\n")
    assert done.returncode == 0, done.stderr
    lines = subprocess.run(["/usr/bin/python3", "-m", "vswap_bench", "progress", out, tmp_path], cwd=TOP,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert [(line.split()[1], line.split()[-1]) for line in lines] == [
        ("baseline", "baseline"), ("vswap", "vswap"), ("baseline-aa", "baseline")]
    # Planned runs: run them, no ending yet, not passed.
    assert {tuple(line.split()[5:9]) for line in lines} == {("planned", "run", "0", "0")}


@pytest.mark.parametrize("status, resume, ended, passed", [
    ("done", "keep", True, True), ("unsupported", "keep", True, True), ("failed-workload", "keep", True, False),
    ("kernel-crash", "keep", True, False), ("timeout", "retry-once", True, False),
    ("failed-infra", "retry-once", True, False), ("interrupted", "run", True, False),
    ("running", "run", False, False), ("planned", "run", False, False), ("unreadable", "run", False, False),
    ("done-unreadable-result", "run", False, False)])
def test_what_resume_and_the_exit_status_make_of_each_status(status, resume, ended, passed):
    assert (resume_action(status), has_ended(status), status in PASSED) == (resume, ended, passed)


def test_an_aa_kernel_a_command_line_kernel_drops_is_refused_at_the_aa_line(tmp_path):
    done, out = plan(tmp_path, BASE + "aa = baseline\n", "kernel=vswap")
    assert done.returncode == USAGE and "c.conf:3" in done.stderr and "aa" in done.stderr, done.stderr
    assert not (out / "runs").exists()
    done, _ = plan(tmp_path, BASE + "aa = baseline\n", "aa=")
    assert done.returncode == 0, done.stderr


def test_a_params_file_with_another_kernels_label_is_refused(tmp_path):
    done, out = plan(tmp_path, BASE + "aa = baseline\n")
    params = next((out / "runs").glob("*-baseline-aa-*")) / "params"
    params.write_text(params.read_text().replace("kernel=baseline", "kernel=vswap"))
    checked = subprocess.run(["/usr/bin/python3", "-m", "vswap_bench", "params", params], cwd=TOP,
                             capture_output=True, text=True)
    assert checked.returncode == USAGE and "label" in checked.stderr, checked.stderr


def git(*arguments) -> str:
    return subprocess.run(["git", "-C", TOP, *arguments], capture_output=True, text=True, check=True).stdout.strip()


def test_the_plan_records_the_commits_of_the_checkout_it_was_planned_in(tmp_path):
    # Before: the history took them from the checkout that indexed the campaign, maybe long after.
    done, out = plan(tmp_path, BASE)
    assert done.returncode == 0, done.stderr
    recorded = json.loads((out / "campaign.json").read_text())
    for field, paths in (("project_commit", ()), ("series_commit", SERIES_PATHS)):
        changed = git("status", "--porcelain", "--untracked-files=no", "--", *paths)
        expected = git("log", "-1", "--format=%H", "--", *paths) + ("+changes" if changed else "")
        assert recorded[field] == expected and len(expected) >= 40, (field, recorded)


def test_a_plan_outside_a_git_checkout_records_no_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "no-repository"))
    done, out = plan(tmp_path, BASE)
    assert done.returncode == 0, done.stderr
    recorded = json.loads((out / "campaign.json").read_text())
    assert (recorded["project_commit"], recorded["series_commit"]) == ("", "")


def test_a_resumed_plan_keeps_the_commits_of_its_first_plan(tmp_path):
    # A resume boots the kernels pinned when the campaign was first planned: its record keeps their commits.
    done, out = plan(tmp_path, BASE)
    assert done.returncode == 0, done.stderr
    first = json.loads((out / "campaign.json").read_text())
    (out / "campaign.json").write_text(json.dumps({**first, "project_commit": "a" * 40, "series_commit": "b" * 40}))
    done, out = plan(tmp_path, BASE)
    assert done.returncode == 0, done.stderr
    again = json.loads((out / "campaign.json").read_text())
    assert (again["project_commit"], again["series_commit"]) == ("a" * 40, "b" * 40)


def test_a_workload_may_have_its_own_repetitions_and_aa_group(tmp_path):
    """A campaign of workloads of different costs: kernel-build 2 repetitions with an A/A group, usemem 3
    without, swapoff the campaign's 1; each repetition in the ABBA order of its workload's labels."""
    done, out = plan(tmp_path, "axis kernel = baseline vswap\naxis workload = kernel-build usemem swapoff\n"
                               "kernel-build.repetitions = 2\nkernel-build.aa = baseline\n"
                               "usemem.repetitions = 3\n")
    assert done.returncode == 0, done.stderr
    assert [run_id.rpartition("-")[0] for run_id in plan_ids(out)] == [
        "kernel-build-zswap-baseline-r1", "kernel-build-zswap-vswap-r1", "kernel-build-zswap-baseline-aa-r1",
        "usemem-zswap-baseline-r1", "usemem-zswap-vswap-r1",
        "swapoff-zswap-baseline-r1", "swapoff-zswap-vswap-r1",
        "kernel-build-zswap-baseline-aa-r2", "kernel-build-zswap-vswap-r2", "kernel-build-zswap-baseline-r2",
        "usemem-zswap-vswap-r2", "usemem-zswap-baseline-r2",
        "usemem-zswap-baseline-r3", "usemem-zswap-vswap-r3"]
    plan_json = json.loads((out / "campaign.json").read_text())
    assert plan_json["repetitions"] == 1 and plan_json["workload_repetitions"] == {"kernel-build": 2, "usemem": 3}
    assert plan_json["labels"] == ["baseline", "vswap", "baseline-aa"]
    # From the command line too: the whole plan's count leaves a workload's own alone.
    (tmp_path / "again").mkdir()
    done, out = plan(tmp_path / "again", "axis kernel = baseline vswap\naxis workload = usemem swapoff\n"
                                         "usemem.repetitions = 2\n", "repetitions=3", "usemem.aa=vswap")
    assert done.returncode == 0, done.stderr
    ids = [run_id.rpartition("-")[0] for run_id in plan_ids(out)]
    assert ids.count("usemem-zswap-vswap-aa-r2") == 1 and "usemem-zswap-vswap-aa-r3" not in ids
    assert len([i for i in ids if i.startswith("swapoff")]) == 6 and not any("aa" in i for i in ids if "swapoff" in i)
