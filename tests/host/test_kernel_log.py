"""The kernel-log patterns are one list (guest-image/agent/kernel-log.patterns) that the host's outcome and the
guest's stress workload read alike; the agent's compressor write is checked."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from vswap_bench import outcome

TOP = Path(__file__).resolve().parents[2]
GUESTS = Path(__file__).parent / "guests"
PATTERNS = TOP / "guest-image" / "agent" / "kernel-log.patterns"
STRESS = TOP / "workloads" / "stress" / "run"
AGENT = TOP / "guest-image" / "agent" / "vb-agent"


def stress_dmesg(kmsg: Path) -> dict:
    """What workloads/stress/run reports of KMSG: its dmesg and dmesg_matches."""
    script = f'. "{STRESS}" --functions && read_patterns "{PATTERNS}" && printf "{{%s}}" "$(dmesg_json "{kmsg}")"'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("guest", sorted(GUESTS.iterdir()), ids=lambda path: path.name)
def test_the_guest_and_the_host_match_the_same_lines(guest):
    serial = (guest / "serial.log").read_text().splitlines()
    counted = stress_dmesg(guest / "serial.log")
    assert list(counted["dmesg"]) == list(outcome.PATTERNS)
    for name, (kind, regex) in outcome.PATTERNS.items():
        assert counted["dmesg"][name] == sum(1 for line in serial if regex.search(line)), name
    any_line = [line for line in serial if any(regex.search(line) for _, regex in outcome.PATTERNS.values())]
    assert counted["dmesg_matches"] == [re.sub(r"[\x00-\x1f]", "", line) for line in any_line][:40]


def test_a_kernel_report_of_each_kind_is_seen_on_both_sides(tmp_path):
    kmsg = tmp_path / "kmsg"
    kmsg.write_text("[ 1.0] ok\n[ 2.0] WARNING: possible circular locking dependency detected\n"
                    "[ 3.0] BUG: KASAN: use-after-free in zswap_store\n[ 4.0] INFO: task kswapd0:42 blocked for more "
                    "than 122 seconds.\n[ 5.0] Bad swap offset entry 3\n")
    counted = stress_dmesg(kmsg)["dmesg"]
    assert counted["warning"] == counted["possible_circular_locking"] == counted["kasan"] == 1
    assert counted["hung_task"] == counted["bad_swap"] == counted["bug"] == 1 and counted["panic"] == 0
    assert outcome.kernel_warnings(kmsg.read_text()) == 1
    assert outcome.first_line(outcome.CRASH_PATTERN, kmsg.read_text()) == "BUG: KASAN: use-after-free in zswap_store"


def test_lockdep_in_a_stack_frame_is_not_a_lockdep_report(tmp_path):
    # An OOM kill on a lockdep kernel prints its stack, whose unreliable frames may be lockdep's own
    # functions: that failed a KASAN stress run that had nothing to report. Lockdep's own messages count.
    kmsg = tmp_path / "kmsg"
    kmsg.write_text("[224.6] run invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
                    "[224.6]  ? lockdep_hardirqs_on_prepare+0x1f0/0x1f0\n"
                    "[224.6]  ? __lockdep_init_map_type+0xcf/0x340\n"
                    "[230.1] INFO: lockdep is turned off.\n")
    counted = stress_dmesg(kmsg)
    assert counted["dmesg"]["lockdep"] == 1, counted
    assert counted["dmesg_matches"] == ["[230.1] INFO: lockdep is turned off."]
    assert outcome.kernel_warnings(kmsg.read_text()) == 0


def test_a_data_race_report_ends_the_run_with_the_race_as_its_reason():
    # The kcsan kernels (make kernels-kcsan) report a race this way and go on; campaigns/debug-kcsan.conf
    # counts on the run failing on it.
    serial = ("[ 1.0] ok\n[ 9.1] ==================================================================\n"
              "[ 9.1] BUG: KCSAN: data-race in vswap_free_dead / vswap_swap_count\n"
              "[ 9.1] write to 0xffff888003a1c010 of 8 bytes by task 93 on cpu 1:\n")
    assert outcome.first_line(outcome.CRASH_PATTERN, serial) == (
        "BUG: KCSAN: data-race in vswap_free_dead / vswap_swap_count")
    assert outcome.kernel_warnings(serial) == 0


def test_each_report_is_counted_once_a_line_whatever_its_offsets_cpu_and_task():
    # Two strict-KCSAN reports of one race from different CPUs and offsets are one report; a lockdep
    # frame in a call trace is part of a report, not one; a hung task is named by its name without its
    # pid, and a worker's name ends in its own number.
    serial = ("[ 5.0] BUG: KCSAN: data-race in vswap_free+0x1f2/0x4c0 / vswap_swap_count+0x31/0x90\n"
              "[ 5.0] write to 0xffff888003a1c010 of 4 bytes by task 93 on cpu 1:\n"
              "[ 5.0]  ? lockdep_hardirqs_on+0x8c/0x130\n"
              "[ 8.2] BUG: KCSAN: data-race in vswap_free+0x210/0x4c0 / vswap_swap_count+0x31/0x90\n"
              "[ 9.0] WARNING: CPU: 0 PID: 711 at mm/vswap.c:1414 vswap_dup+0x9e/0x1c0\n"
              "[ 9.1] INFO: task kswapd0:42 blocked for more than 122 seconds.\n"
              "[ 9.2] BUG: KCSAN: data-race in try_to_unmap_one+0x3d1/0xfa0\n"
              "[ 9.3] INFO: task kworker/u4:2:57 blocked for more than 122 seconds.\n"
              "[ 9.4] INFO: task kworker/u4:3:58 blocked for more than 122 seconds.\n"
              "[ 9.5] INFO: task kworker/u4:2:57 blocked for more than 245 seconds.\n")
    assert outcome.kernel_reports(serial) == {
        "BUG: KCSAN: data-race in vswap_free / vswap_swap_count": 2,
        "WARNING: at mm/vswap.c:1414 vswap_dup": 1,
        "INFO: task kswapd0 blocked for more than N seconds.": 1,
        "BUG: KCSAN: data-race in try_to_unmap_one": 1,
        "INFO: task kworker/u4:2 blocked for more than N seconds.": 2,
        "INFO: task kworker/u4:3 blocked for more than N seconds.": 1}


def test_no_other_file_keeps_a_copy_of_a_pattern():
    regexes = [regex.pattern for _, regex in outcome.PATTERNS.values() if len(regex.pattern) > 8]
    files = [AGENT, *TOP.glob("workloads/*/run"), *TOP.glob("vswap_bench/*.py"), TOP / "harness" / "common.sh"]
    for path in files:
        text = path.read_text()
        copied = [regex for regex in regexes if regex in text]
        assert not copied, f"{path.relative_to(TOP)} keeps its own copy of {copied}"


def test_the_image_installs_the_patterns_where_stress_reads_them():
    assert ('install -m 0644 "$here/agent/kernel-log.patterns" "$stage/opt/vb/kernel-log.patterns"'
            in (TOP / "guest-image" / "build-image.sh").read_text())
    assert "${VB_KERNEL_LOG_PATTERNS:-/opt/vb/kernel-log.patterns}" in STRESS.read_text()


def test_a_bad_patterns_file_is_refused(tmp_path):
    bad = tmp_path / "p"
    bad.write_text("# c\npanic crash Kernel panic\noops fatal Oops\n")
    with pytest.raises(ValueError, match=r"p:3: "):
        outcome.read_patterns(bad)


def set_compressor(path: Path, name: str) -> subprocess.CompletedProcess:
    """The agent's set_compressor on PATH; give_up prints its reason and exits 3."""
    script = (f"""eval "$(sed -n '/^set_compressor()/,/^}}/p' "{AGENT}")"; """
              f"""give_up() {{ echo "give_up $*"; exit 3; }}; set_compressor "{path}" {name}""")
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True)


def test_a_compressor_the_kernel_takes_is_set(tmp_path):
    taken = set_compressor(tmp_path / "compressor", "lz4")
    assert taken.returncode == 0, taken.stdout + taken.stderr
    assert (tmp_path / "compressor").read_text() == "lz4\n"


def test_a_compressor_the_kernel_refuses_fails_the_run(tmp_path):
    refused = set_compressor(tmp_path / "no-such-dir" / "comp_algorithm", "lz4")
    assert refused.returncode == 3 and refused.stdout.startswith("give_up infra compressor lz4 refused by")


def test_a_compressor_the_kernel_replaces_fails_the_run(tmp_path):
    # zram given a name it lacks keeps its own: what is read back is not what was written.
    (tmp_path / "comp_algorithm").symlink_to("/dev/null")
    replaced = set_compressor(tmp_path / "comp_algorithm", "lz4")
    assert replaced.returncode == 3 and "compressor lz4 written to" in replaced.stdout, replaced.stdout
