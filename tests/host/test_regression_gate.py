"""ci/regression-gate.sh's run branch: run.sh on the fake QEMU (as test_runner.py), the campaign moved to
results/NAME-<UTC time>, reported and gated.  The gate's own cases are analysis/tests/test_gate.py's."""
import fcntl
import sqlite3
import subprocess

from test_runner import TOP, bench  # noqa: F401  (bench: a fixture)

CI_SCRIPT = TOP / "ci" / "regression-gate.sh"
TWO_KERNELS = "axis kernel = baseline vswap\nworkload = swap-verify\ntimeout = 90\n"
ERROR, INCONCLUSIVE = 2, 3


def ci_gate(bench, *arguments) -> subprocess.CompletedProcess:
    return subprocess.run([CI_SCRIPT, *map(str, arguments)], env=bench.env, capture_output=True, text=True,
                          timeout=300)


def gated_folders(bench) -> list:
    return sorted(bench.results.glob("c-*"))


def indexed_paths(bench) -> list:
    with sqlite3.connect(bench.results / "index.sqlite") as connection:
        return [row[0] for row in connection.execute("SELECT path FROM campaigns")]


def test_the_history_holds_the_campaign_where_the_job_leaves_it(bench):
    # Before: run.sh's own report indexed results/c, which the script then renamed: an entry at no path.
    bench.guest("swap-verify", "clean")
    done = ci_gate(bench, bench.campaign(TWO_KERNELS))
    assert done.returncode not in (ERROR, 1), done.stdout + done.stderr
    (folder,) = gated_folders(bench)
    assert indexed_paths(bench) == [str(folder)]
    assert sorted(path.name for path in bench.results.iterdir()) == [folder.name, "index.sqlite"], \
        "the job left its folder, or run.sh's lock, behind"


def test_a_job_beside_a_live_run_of_the_campaign_runs_its_own_and_leaves_that_one_alone(bench):
    # Before: the job refused (results/c exists), and when it came first, run.sh failing the lock exited 1 and
    # the job renamed the other's live folder and gated it.
    bench.guest("swap-verify", "clean")
    live = bench.results / "c"
    (live / "runs").mkdir(parents=True)
    (live / "campaign.json").write_text('{"runs": []}\n')
    with open(bench.results / ".c.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as run.sh of the live campaign holds it
        done = ci_gate(bench, bench.campaign(TWO_KERNELS))
    assert done.returncode not in (ERROR, 1), done.stdout + done.stderr
    assert sorted(path.name for path in live.rglob("*")) == ["campaign.json", "runs"]
    assert len(gated_folders(bench)) == 1


def test_a_campaign_run_sh_stopped_is_gated_incomplete_and_not_accepted(bench):
    # run.sh dies (exit 1, as a failed run gives) when a run's outcome cannot be recorded: its runner killed.
    bench.guest("swap-verify", "clean")
    fake = bench.root / "killing-qemu"
    fake.mkdir()
    qemu = fake / "qemu-system-x86_64"
    boots = bench.root / "boots"
    qemu.write_text(f"""#!/usr/bin/env bash
# The fake QEMU, but at its third guest it kills its runner outright.
if [ "${{1:-}}" != --version ]; then
\techo >>"{boots}"
\t[ "$(wc -l <"{boots}")" != 3 ] || exec kill -KILL "$PPID"
fi
exec "{TOP / 'tests' / 'fake-qemu' / 'qemu-system-x86_64'}" "$@"
""")
    qemu.chmod(0o755)
    bench.env["PATH"] = f"{fake}:{bench.env['PATH']}"
    done = ci_gate(bench, bench.campaign(TWO_KERNELS + "repetitions = 2\n"))
    assert "could not be recorded" in done.stderr, done.stderr
    assert done.returncode == INCONCLUSIVE, done.stdout + done.stderr
    assert "incomplete: of 4 planned runs, 1 did not run (" in done.stdout and "1 did not end (" in done.stdout
    assert "not accepted as a base" in done.stdout
    (folder,) = gated_folders(bench)
    assert indexed_paths(bench) == [str(folder)]
