"""./run.sh end to end on a fake QEMU (tests/fake-qemu) that replays recorded guests (tests/host/guests): the
fault cases of a campaign without booting a kernel.  The kernels and the image are stand-in files given
through VB_INPUTS, so nothing is built."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
GUESTS = Path(__file__).parent / "guests"
# INT at its default, as a terminal starts a command: when the tests themselves run with INT ignored
# (make test started in the background), run.sh would inherit that, and a shell cannot trap a signal
# ignored on entry.
AS_FROM_A_TERMINAL = ["env", "--default-signal=INT"]


@pytest.fixture
def bench(tmp_path):
    """Runs ./run.sh with fake inputs and a fake QEMU; .guests is the folder of recordings by workload."""
    inputs = tmp_path / "inputs"
    for kernel in ("baseline", "vswap"):
        (inputs / "kernels" / kernel).mkdir(parents=True)
        (inputs / "kernels" / kernel / "bzImage").write_text("not a kernel")
        (inputs / "kernels" / kernel / "kernel.json").write_text(json.dumps({"schema": 1, "kernel_id": f"{kernel}-id"}))
    (inputs / "guest.ext4").write_text("not an image")
    (inputs / "guest.json").write_text(json.dumps({"image": str(inputs / "guest.ext4"), "image_id": "img-id"}))
    guests = tmp_path / "guests"
    guests.mkdir()
    return Bench(tmp_path, guests, {
        **os.environ, "PATH": f"{TOP / 'tests' / 'fake-qemu'}:{os.environ['PATH']}", "VB_ACCEL": "tcg",
        "VB_INPUTS": str(inputs), "VB_FAKE_GUEST": str(guests), "RESULTS_DIR": str(tmp_path / "results"),
        "BUILD_DIR": str(tmp_path / "build")})


class Bench:
    def __init__(self, root: Path, guests: Path, env: dict):
        self.root, self.guests, self.env = root, guests, env
        self.results = Path(env["RESULTS_DIR"])

    def guest(self, workload: str, recording: str, *, hang_s=None):
        """The runs of WORKLOAD replay RECORDING (tests/host/guests/), hanging HANG_S seconds if given."""
        target = self.guests / workload
        subprocess.run(["rm", "-rf", target], check=True)
        subprocess.run(["cp", "-r", GUESTS / recording, target], check=True)
        if hang_s is not None:
            (target / "hang").write_text(str(hang_s))

    def campaign(self, text: str) -> Path:
        path = self.root / "c.conf"
        path.write_text(text)
        return path

    def start(self, *arguments) -> subprocess.Popen:
        # A session of its own, as a terminal gives: the ^C test signals its process group.
        return subprocess.Popen([*AS_FROM_A_TERMINAL, TOP / "run.sh", *map(str, arguments)], env=self.env,
                                start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run(self, *arguments) -> subprocess.CompletedProcess:
        return subprocess.run([TOP / "run.sh", *map(str, arguments)], env=self.env, capture_output=True,
                              text=True, timeout=300)

    def run_on_tmpfs(self, options: str, *arguments, then: str = "") -> subprocess.CompletedProcess:
        """./run.sh with the results on a tmpfs mounted with OPTIONS, in a mount namespace of its own (the
        tmpfs goes away with it), then the shell command THEN while the tmpfs is still there; run.sh's exit
        status.  The test is skipped where it cannot mount one (not root)."""
        self.results.mkdir()
        mount = f'mount -t tmpfs -o {options} tmpfs "{self.results}"'
        probe = subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {probe.stderr.strip()}")
        script = f'{mount} || exit; "$0" "$@"; status=$?; {then or ":"}; exit $status'
        return subprocess.run(["unshare", "-m", "sh", "-c", script, TOP / "run.sh", *map(str, arguments)],
                              env=self.env, capture_output=True, text=True, timeout=300)

    def statuses(self) -> dict:
        out = self.results / "c"
        return {run_id: json.loads((out / "runs" / run_id / "status.json").read_text())["status"]
                for run_id in (out / "plan").read_text().split()
                if (out / "runs" / run_id / "status.json").exists()}

    def wait_for_guest(self, process: subprocess.Popen):
        """Until a guest of the campaign is up (its console written)."""
        for _ in range(300):
            if list(self.results.glob("c/runs/*/serial.log")) and any(
                    path.stat().st_size for path in self.results.glob("c/runs/*/serial.log")):
                return
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.1)
        raise AssertionError("no guest started")

    def no_guest_left(self) -> bool:
        """Every process of a run holds its folder's lock: nobody holds one any more."""
        return all(subprocess.run(["flock", "-n", lock, "true"]).returncode == 0
                   for lock in self.results.glob("c/runs/*/.lock"))


SWAP_VERIFY_AND_PANIC = "kernel = baseline\naxis workload = swap-verify panic\ntimeout = 90\n"


def test_each_run_gets_its_outcome_and_the_campaign_goes_on(bench):
    bench.guest("swap-verify", "clean")
    bench.guest("panic", "panic")
    done = bench.run(bench.campaign(SWAP_VERIFY_AND_PANIC))
    assert done.returncode == 1, done.stdout + done.stderr
    assert sorted(bench.statuses().values()) == ["done", "kernel-crash"]
    run = next((bench.results / "c" / "runs").glob("swap-verify-*"))
    document = json.loads((run / "run.json").read_text())
    assert document["config_hash"].startswith(run.name.rpartition("-")[2])
    assert json.loads((run / "qemu.json").read_text())["image"] == str(bench.results / "c" / "inputs" / "guest.ext4")
    assert "campaign c: 2 runs, 1 failed" in done.stderr


def test_a_second_run_sh_on_a_running_campaign_is_refused_and_ctrl_c_stops_the_first(bench):
    bench.guest("swap-verify", "clean", hang_s=60)
    conf = bench.campaign("kernel = baseline\nworkload = swap-verify\ntimeout = 90\n")
    first = bench.start(conf)
    bench.wait_for_guest(first)
    second = bench.run(conf)
    assert second.returncode != 0 and "being run by another run.sh" in second.stderr, second.stderr
    assert first.poll() is None, "the second run.sh disturbed the first"
    os.killpg(first.pid, signal.SIGINT)
    assert first.wait(timeout=300) == 130
    assert "--resume' goes on from there" in first.stdout.read()
    assert list(bench.statuses().values()) == ["interrupted"] and bench.no_guest_left()
    bench.guest("swap-verify", "clean")
    resumed = bench.run(conf, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert list(bench.statuses().values()) == ["done"]


def test_ctrl_c_the_moment_qemu_has_exited_records_the_finished_run_as_done(bench):
    bench.guest("swap-verify", "clean")
    (bench.guests / "swap-verify" / "interrupt").write_text("")
    conf = bench.campaign("kernel = baseline\naxis workload = swap-verify hang\ntimeout = 90\n")
    runner = bench.start(conf)
    assert runner.wait(timeout=300) == 130
    assert "--resume' goes on from there" in runner.stdout.read()
    assert bench.statuses() == {next(bench.results.glob("c/runs/swap-verify-*")).name: "done"}


def test_ctrl_c_on_run_sh_piped_into_tee_exits_130_with_the_resume_hint(bench):
    # ./run.sh | tee log, then ^C: tee goes first, and run.sh's standard output is a pipe nobody reads.
    bench.guest("swap-verify", "clean", hang_s=60)
    conf = bench.campaign("kernel = baseline\nworkload = swap-verify\ntimeout = 90\n")
    stderr = bench.root / "stderr"
    with open(stderr, "w") as errors:
        runner = subprocess.Popen([*AS_FROM_A_TERMINAL, TOP / "run.sh", conf], env=bench.env, start_new_session=True,
                                  stdout=subprocess.PIPE, stderr=errors)
    for _ in range(300):
        if any(path.stat().st_size for path in bench.results.glob("c/runs/*/serial.log")):
            break
        time.sleep(0.1)
    runner.stdout.close()
    os.killpg(runner.pid, signal.SIGINT)
    assert runner.wait(timeout=300) == 130, stderr.read_text()
    assert "--resume' goes on from there" in stderr.read_text()
    assert list(bench.statuses().values()) == ["interrupted"] and bench.no_guest_left()


def test_a_runner_killed_outright_leaves_no_guest_and_resume_completes_the_campaign(bench):
    bench.guest("swap-verify", "clean")
    bench.guest("hang", "clean", hang_s=60)
    conf = bench.campaign("kernel = baseline\naxis workload = swap-verify hang\ntimeout = 90\n")
    runner = bench.start(conf)
    for _ in range(300):
        if "hang" in "".join(str(path) for path in bench.results.glob("c/runs/*/serial.log")):
            break
        time.sleep(0.1)
    bench.wait_for_guest(runner)
    first_done = next(bench.results.glob("c/runs/swap-verify-*/status.json")).read_text()
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    for _ in range(100):
        if bench.no_guest_left():
            break
        time.sleep(0.1)
    assert bench.no_guest_left(), "the killed runner's guest is still running"
    bench.guest("hang", "clean")
    resumed = bench.run(conf, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert list(bench.statuses().values()) == ["done", "done"]
    assert "run 1/2" not in resumed.stderr, "the finished run was run again"
    assert next(bench.results.glob("c/runs/swap-verify-*/status.json")).read_text() == first_done


def test_a_full_results_disk_stops_the_campaign_cleanly(bench):
    # The console alone is larger than the tmpfs the results are on.
    bench.guest("swap-verify", "clean")
    serial = bench.guests / "swap-verify" / "serial.log"
    serial.write_text(serial.read_text() + "[   5.000000] a long console line\n" * 20000)
    conf = bench.campaign("axis kernel = baseline vswap\nworkload = swap-verify\ntimeout = 90\n")
    # The report is asked for on the full disk, as a user would next; what was left is kept for a look.
    left, report = bench.root / "left", bench.root / "report.log"
    done = bench.run_on_tmpfs("size=256k", conf, then=f'cd "{TOP}" && /usr/bin/python3 -m analysis report '
                                                      f'"{bench.results}/c" >"{report}" 2>&1; cp -a "{bench.results}" "{left}"')
    assert done.returncode != 0
    assert "No space left on device" in done.stderr and "stopping the campaign" in done.stderr, done.stderr
    assert "run 2/2" not in done.stderr, "the campaign went on"
    assert "Traceback" not in done.stderr
    assert "Traceback" not in report.read_text(), report.read_text()
    # No temporary of the writers (record.py: .NAME.tmp.PID) and no record cut off (NAME.partial) is left.
    files = [path.relative_to(left) for path in left.rglob("*") if path.is_file()]
    assert not [path for path in files if ".tmp." in path.name or path.suffix == ".partial"], files
    # A run that started (more in its folder than the plan's params) ends with a status that is not "running".
    for run in (left / "c" / "runs").iterdir():
        if {path.name for path in run.iterdir()} - {"params"}:
            status = json.loads((run / "status.json").read_text())["status"]
            assert status not in ("running", "planned"), (run.name, status)


def test_resume_runs_again_a_done_run_whose_result_is_unreadable(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign("kernel = baseline\nworkload = swap-verify\ntimeout = 90\n")
    assert bench.run(conf).returncode == 0
    (result,) = bench.results.glob("c/runs/*/result.json")
    result.write_text('{"schema": 1, "wall_s": ')
    resumed = bench.run(conf, "--resume")
    assert "run 1/1" in resumed.stderr and resumed.returncode == 0, resumed.stderr
    assert json.loads(result.read_text())["workload_exit"] == 0


def test_a_relative_results_dir_gives_absolute_paths_in_reproduce_sh(bench, tmp_path):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign("kernel = baseline\nworkload = swap-verify\ntimeout = 90\n")
    done = subprocess.run([TOP / "run.sh", conf], env={**bench.env, "RESULTS_DIR": "relative-results"},
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (reproduce,) = (tmp_path / "relative-results").glob("c/runs/*/reproduce.sh")
    assert "=relative-results" not in reproduce.read_text()
    again = subprocess.run([reproduce, tmp_path / "again"], env={**bench.env, "RESULTS_DIR": "elsewhere"},
                           cwd="/", capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again" / "status.json").read_text())["status"] == "done"


TWO_CONFIGURATIONS = "axis kernel = baseline vswap\nworkload = swap-verify\naxis vcpus = 1 2\ntimeout = 90\n"


def run_share(bench, conf, share, results):
    done = subprocess.run([TOP / "run.sh", conf, "--shard", share], env={**bench.env, "RESULTS_DIR": str(results)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def merge(*arguments):
    return subprocess.run(["/usr/bin/python3", "-m", "vswap_bench", "merge", *map(str, arguments)], cwd=TOP,
                          capture_output=True, text=True)


def test_shares_of_a_campaign_run_whole_configurations_and_merge_into_one(bench, tmp_path):
    from analysis.loader import load_campaign
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(TWO_CONFIGURATIONS)
    first = run_share(bench, conf, "1/2", tmp_path / "host1")
    run_share(bench, conf, "2/2", tmp_path / "host2")
    assert "run 2/2" in first.stderr and "run 3/" not in first.stderr
    ran = {share: sorted(path.parent.name for path in (tmp_path / share).glob("c/runs/*/status.json"))
           for share in ("host1", "host2")}
    assert len(ran["host1"]) == len(ran["host2"]) == 2 and not set(ran["host1"]) & set(ran["host2"])
    # Both kernels of a configuration on one host: the run ids of a share end in one configuration hash.
    assert len({run_id.rpartition("-")[2] for run_id in ran["host1"]}) == 1
    merged = merge(tmp_path / "merged" / "c", tmp_path / "host1" / "c", tmp_path / "host2" / "c")
    assert merged.returncode == 0 and "4 of 4 runs ran" in merged.stdout, merged.stderr
    loaded = load_campaign(tmp_path / "merged" / "c")
    assert loaded.problems == [] and list(loaded.runs.status) == ["done"] * 4
    # The runs differ only in vcpus: the comparison of the two kernels is made per configuration, twice.
    from analysis.schema import CONFIG_COLUMNS
    from analysis.verdicts import compare_kernels
    judged = compare_kernels(loaded.metrics, loaded.runs, "baseline", "vswap")
    assert len(judged[list(CONFIG_COLUMNS)].drop_duplicates()) == 2


def test_shares_that_booted_other_kernels_are_not_merged(bench, tmp_path):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign(TWO_CONFIGURATIONS)
    run_share(bench, conf, "1/2", tmp_path / "host1")
    kernel_json = Path(bench.env["VB_INPUTS"]) / "kernels" / "vswap" / "kernel.json"
    kernel_json.write_text(json.dumps({"schema": 1, "kernel_id": "rebuilt"}))
    run_share(bench, conf, "2/2", tmp_path / "host2")
    merged = merge(tmp_path / "merged", tmp_path / "host1" / "c", tmp_path / "host2" / "c")
    assert merged.returncode == 64 and "kernel vswap differ" in merged.stderr, merged.stderr
    assert not (tmp_path / "merged").exists()


def test_a_read_only_results_dir_is_refused_before_anything_runs(bench):
    bench.guest("swap-verify", "clean")
    conf = bench.campaign("kernel = baseline\nworkload = swap-verify\ntimeout = 90\n")
    done = bench.run_on_tmpfs("ro,size=64k", conf)
    assert done.returncode != 0
    assert f"cannot write in {bench.results}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "run 1/1" not in done.stderr


def test_an_aa_group_boots_its_build_under_its_label_and_the_analysis_pairs_it_as_a_a(bench):
    # Through the real writers (vswap_bench run-one) and the analysis' loader.
    import sys
    sys.path.insert(0, str(TOP))
    from analysis.loader import load_campaign
    from analysis.pairing import aa_pairs

    bench.guest("swap-verify", "clean")
    conf = bench.campaign("axis kernel = baseline vswap\nworkload = swap-verify\naa = baseline\ntimeout = 90\n")
    dry = bench.run(conf, "--dry-run")
    assert dry.returncode == 0 and "kernels: baseline vswap;" in dry.stdout, dry.stdout + dry.stderr
    assert "baseline-aa" in dry.stdout
    done = bench.run(conf)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(path.name for path in (bench.results / "c" / "inputs" / "kernels").iterdir()) == ["baseline", "vswap"]
    aa_run = next((bench.results / "c" / "runs").glob("swap-verify-zswap-baseline-aa-r1-*"))
    document = json.loads((aa_run / "run.json").read_text())
    assert (document["kernel"], document["kernel_build"], document["kernel_id"]) == \
        ("baseline-aa", "baseline", "baseline-id")
    assert "label" not in document["settings"]
    assert "kernel 'baseline'" in (aa_run / "reproduce.sh").read_text()
    loaded = load_campaign(bench.results / "c")
    assert sorted(loaded.runs["kernel"]) == ["baseline", "baseline-aa", "vswap"]
    assert aa_pairs(loaded.metrics) == [("baseline", "baseline-aa")]
