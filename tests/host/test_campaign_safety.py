"""What run.sh and merge do to a campaign folder that holds results: nothing a user types and no fault moves,
overwrites or re-plans it unasked (docs/results-format.md, "What is safe").  On the fake QEMU, as
test_runner.py."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from test_runner import TOP, TWO_CONFIGURATIONS, bench, merge, run_share  # noqa: F401  (bench: a fixture)

ONE_RUN = "kernel = baseline\nworkload = swap-verify\ntimeout = 90\n"


def finished(bench) -> dict:
    """Each run's status.json as it is now, by run id."""
    return {path.parent.name: path.read_text() for path in bench.results.glob("c/runs/*/status.json")}


def set_aside(bench) -> list:
    return sorted(path.name for path in bench.results.iterdir() if path.name.startswith("c."))


def test_a_campaign_folder_that_cannot_be_moved_aside_stops_run_sh_before_any_run(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(ONE_RUN)
    assert bench.run(conf).returncode == 0
    before = finished(bench)
    # A mount point cannot be renamed: mv fails with EBUSY.
    out = bench.results / "c"
    done = subprocess.run(["unshare", "-m", "sh", "-c", f'mount --bind "{out}" "{out}" && exec "$0" "$@"',
                           TOP / "run.sh", conf], env=bench.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert f"cannot move the previous {out} aside" in done.stderr, done.stderr
    assert "run 1/1" not in done.stderr and finished(bench) == before and set_aside(bench) == []


def test_a_bad_command_line_leaves_the_previous_campaign_where_it_is(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(ONE_RUN)
    assert bench.run(conf).returncode == 0
    before = finished(bench)
    for arguments in (["vcpus=abc"], ["--shard", "3/2"], ["--shard", "３/4"], ["--shard"], [conf],
                      ["--shard", "1/2", "--shard", "2/2"]):
        done = bench.run(conf, *arguments)
        assert done.returncode == 64, (arguments, done.stderr)
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert set_aside(bench) == [] and finished(bench) == before, arguments


def test_resume_keeps_the_overrides_of_the_plan_and_refuses_others(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign("kernel = baseline\nworkload = swap-verify\naxis vcpus = 1 2\ntimeout = 90\n")
    assert bench.run(conf, "vcpus=1", "guest_mem_mb=640").returncode == 0
    before = finished(bench)
    assert len(before) == 1
    resumed = bench.run(conf, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "vcpus=1 guest_mem_mb=640" in resumed.stderr and "run 1/" not in resumed.stderr, resumed.stderr
    assert finished(bench) == before
    assert json.loads((bench.results / "c" / "campaign.json").read_text())["overrides"] == ["vcpus=1",
                                                                                           "guest_mem_mb=640"]
    # The same overrides in another order are the same plan.
    reordered = bench.run(conf, "--resume", "guest_mem_mb=640", "vcpus=1")
    assert reordered.returncode == 0 and "run 1/" not in reordered.stderr, reordered.stderr

    other = bench.run(conf, "--resume", "vcpus=2")
    assert other.returncode == 64 and "vcpus=1" in other.stderr and "--replan" in other.stderr, other.stderr
    assert finished(bench) == before

    # The campaign file edited since: its new plan is not the folder's.
    conf.write_text(conf.read_text().replace("timeout = 90", "timeout = 91"))
    edited = bench.run(conf, "--resume")
    assert edited.returncode == 64 and "--replan" in edited.stderr, edited.stderr
    # --replan alone plans the edited file with the overrides the folder was planned with.
    replanned = bench.run(conf, "--resume", "--replan")
    assert replanned.returncode == 0 and "run 1/1" in replanned.stderr, replanned.stderr
    assert "overrides it was planned with: guest_mem_mb=640 vcpus=1" in replanned.stderr, replanned.stderr
    # With overrides, --replan plans with those.
    again = bench.run(conf, "--resume", "--replan", "guest_mem_mb=640")
    assert again.returncode == 0 and "run 2/2" in again.stderr, again.stderr


def test_an_empty_share_says_so_and_runs_nothing(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(TWO_CONFIGURATIONS)
    done = bench.run(conf, "--shard", "3/3")
    assert done.returncode == 0, done.stderr
    assert "share 3/3 of campaign c has no runs" in done.stderr, done.stderr
    assert "run 1/" not in done.stderr and not list(bench.results.glob("c/runs/*/status.json"))


def test_resume_runs_again_a_run_whose_run_json_is_unreadable(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(ONE_RUN)
    assert bench.run(conf).returncode == 0
    (document,) = bench.results.glob("c/runs/*/run.json")
    document.write_text('{"schema": 1, "run_id": ')
    resumed = bench.run(conf, "--resume")
    assert "run 1/1" in resumed.stderr and resumed.returncode == 0, resumed.stderr
    assert json.loads(document.read_text())["workload"] == "swap-verify"


def test_a_merged_campaign_resumes_on_its_own_inputs_once_the_shares_are_gone(bench, tmp_path):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(TWO_CONFIGURATIONS)
    run_share(bench, conf, "1/2", tmp_path / "host1")
    # As a share copied from another host: its records name that host's paths, not these.
    (tmp_path / "host1").rename(tmp_path / "copied")
    merged = merge(tmp_path / "merged" / "c", tmp_path / "copied" / "c")
    assert merged.returncode == 0, merged.stderr
    subprocess.run(["rm", "-rf", tmp_path / "copied"], check=True)
    # VB_INPUTS stays: a resume boots the campaign's pinned image, and only kernels it lacks come from there.
    env = {**bench.env, "RESULTS_DIR": str(tmp_path / "merged")}
    resumed = subprocess.run([TOP / "run.sh", conf, "--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    statuses = [json.loads(path.read_text())["status"] for path in (tmp_path / "merged").glob("c/runs/*/status.json")]
    assert statuses == ["done"] * 4


def test_merge_refuses_a_share_without_its_inputs_or_plan_and_writes_nothing(bench, tmp_path):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(TWO_CONFIGURATIONS)
    run_share(bench, conf, "1/2", tmp_path / "host1")
    run_share(bench, conf, "2/2", tmp_path / "host2")
    share = tmp_path / "host2" / "c"
    cases = [("inputs/kernels/vswap/kernel.json", "no kernel record"), ("inputs/guest.json", "no guest image record"),
             ("inputs", "no inputs")]
    for removed, message in cases:
        subprocess.run(["cp", "-a", share, tmp_path / "damaged"], check=True)
        subprocess.run(["rm", "-rf", tmp_path / "damaged" / removed], check=True)
        done = merge(tmp_path / "merged", tmp_path / "host1" / "c", tmp_path / "damaged")
        assert done.returncode == 64 and message in done.stderr, (removed, done.stderr)
        assert not (tmp_path / "merged").exists()
        subprocess.run(["rm", "-rf", tmp_path / "damaged"], check=True)
    (tmp_path / "a-file").write_text("")
    done = merge(tmp_path / "a-file", tmp_path / "host1" / "c", share)
    assert done.returncode == 64 and "is not a folder" in done.stderr and "Traceback" not in done.stderr, done.stderr
    plan = json.loads((share / "campaign.json").read_text())
    del plan["runs"]
    (share / "campaign.json").write_text(json.dumps(plan))
    done = merge(tmp_path / "merged", tmp_path / "host1" / "c", share)
    assert done.returncode == 64 and "campaign.json" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "merged").exists()


def test_a_merge_that_fails_to_copy_leaves_nothing_and_can_be_retried(bench, tmp_path):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(TWO_CONFIGURATIONS)
    run_share(bench, conf, "1/2", tmp_path / "host1")
    (run,) = [path.parent for path in (tmp_path / "host1").glob("c/runs/*/status.json")][:1]
    (run / "big").write_bytes(os.urandom(1 << 20))
    room = tmp_path / "room"
    room.mkdir()
    command = ["/usr/bin/python3", "-m", "vswap_bench", "merge", room / "merged", tmp_path / "host1" / "c"]
    # The first merge runs out of room; the second, with room, must find nothing in its way.
    script = (f'mount -t tmpfs -o size=512k tmpfs "{room}" || exit 9; "$@"; echo "first=$?"; ls -A "{room}"; '
              f'echo "listed"; mount -o remount,size=64m "{room}" && "$@"')
    done = subprocess.run(["unshare", "-m", "sh", "-c", script, "merge", *map(str, command)], cwd=TOP,
                          capture_output=True, text=True, timeout=120)
    if done.returncode == 9:
        import pytest
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr}")
    lines = done.stdout.splitlines()
    # 74: a record that cannot be written (status.py's RECORD_EXIT).
    assert "first=74" in lines and "cannot copy into" in done.stderr, done.stdout + done.stderr
    assert "No space left on device" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert lines[lines.index("first=74") + 1] == "listed", lines
    assert done.returncode == 0 and "2 of 4 runs ran" in done.stdout, done.stdout + done.stderr


def test_campaign_names_that_would_leave_their_folder_are_refused(bench):
    bench.guest("swap-verify", "clean")
    for name in ("...conf", "a[1].conf", "a b.conf"):
        path = bench.root / name
        path.write_text(ONE_RUN)
        done = bench.run(path)
        assert done.returncode == 64 and "campaign name" in done.stderr, (name, done.stderr)
    assert not bench.results.exists() or not list(bench.results.rglob("plan"))
    assert not (bench.results.parent / "plan").exists()


def command_line(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return b""


def test_ctrl_c_during_the_report_exits_130_without_a_traceback(bench):
    bench.guest("swap-verify", "clean")
    runner = bench.start(bench.campaign(ONE_RUN))
    reporting = []
    while not reporting and runner.poll() is None:
        reporting = [pid for pid in os.listdir("/proc") if pid.isdigit() and
                     f"analysis\0report\0{bench.results}".encode() in command_line(pid)]
        time.sleep(0.05)
    assert reporting, "the report never started: " + runner.stdout.read()
    os.killpg(runner.pid, signal.SIGINT)
    assert runner.wait(timeout=120) == 130
    output = runner.stdout.read()
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert "make report CAMPAIGN=" in output, output


def test_resume_names_a_leftover_process_that_holds_a_runs_lock_and_goes_on(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(ONE_RUN)
    assert bench.run(conf).returncode == 0
    (run,) = bench.results.glob("c/runs/*")
    # A timeout is retried once by --resume.
    (run / "status.json").write_text(json.dumps({"status": "timeout"}))
    # A process that ignores TERM, as a QEMU stuck in the kernel would.
    holder = subprocess.Popen(["flock", run / ".lock", "sh", "-c", "trap '' TERM; sleep 300"],
                              start_new_session=True)
    try:
        time.sleep(0.5)
        resumed = bench.run(conf, "--resume")
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    assert resumed.returncode == 1, resumed.stderr
    assert "still held" in resumed.stderr and "sleep" in resumed.stderr, resumed.stderr
    assert json.loads((run / "status.json").read_text())["status"] == "timeout"
    # The run was not run: its one retry is still to come.
    again = bench.run(conf, "--resume")
    assert again.returncode == 0 and "run 1/1" in again.stderr, again.stderr
    assert json.loads((run / "status.json").read_text())["status"] == "done"


def test_an_interrupted_record_write_leaves_no_temporary(tmp_path, monkeypatch):
    import sys
    sys.path.insert(0, str(TOP))
    import pytest
    from vswap_bench import record

    def interrupted(descriptor):
        raise KeyboardInterrupt
    monkeypatch.setattr(record.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        record.write_text_atomic(tmp_path / "params", "kernel=vswap\n")
    assert list(tmp_path.iterdir()) == []


def test_term_while_planning_stops_run_sh_with_one_line_and_runs_nothing(bench):
    bench.guest("swap-verify", "clean")
    # A plan that takes seconds to write.
    runner = bench.start(bench.campaign("kernel = baseline\nworkload = swap-verify\nrepetitions = 2000\n"))
    time.sleep(1.5)
    runner.send_signal(signal.SIGTERM)
    assert runner.wait(timeout=120) == 130
    output = runner.stdout.read()
    assert "interrupted before any run started" in output and "Traceback" not in output, output
    assert not list(bench.results.glob("c/runs/*/status.json"))


def test_a_kernel_that_fails_to_build_leaves_the_previous_campaign_where_it_is(bench, tmp_path):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(ONE_RUN)
    assert bench.run(conf).returncode == 0
    before = finished(bench)
    env = {**bench.env, "KERNEL_SRC": str(tmp_path / "no-such-source.tar.xz")}
    del env["VB_INPUTS"]  # the kernels are built, from a source that is not there
    done = subprocess.run([TOP / "run.sh", conf], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "building the baseline kernel failed" in done.stderr, done.stderr
    assert set_aside(bench) == [] and finished(bench) == before


def test_a_new_campaign_does_not_inherit_the_commits_of_a_plan_that_never_ran(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(ONE_RUN)
    assert bench.run(conf, "--dry-run").returncode == 0
    out = bench.results / "c"
    assert subprocess.run([TOP / "harness" / "plan.sh", conf, out], capture_output=True).returncode == 0
    record = json.loads((out / "campaign.json").read_text())
    (out / "campaign.json").write_text(json.dumps({**record, "series_commit": "b" * 40}))
    assert bench.run(conf).returncode == 0
    assert json.loads((out / "campaign.json").read_text())["series_commit"] == record["series_commit"]
