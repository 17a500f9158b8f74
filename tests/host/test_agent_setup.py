"""Functions of the guest's agent (guest-image/agent/vb-agent) that set a run up, run on the host with
give_up stubbed: it prints its arguments and exits 3, as the agent's ends the run."""
import json
import re
import subprocess
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "guest-image" / "agent" / "vb-agent"


def agent(functions: list[str], script: str, **env) -> subprocess.CompletedProcess:
    """SCRIPT run after the agent's FUNCTIONS (and its UNSUPPORTED=), with ENV as its VB_* settings."""
    load = "".join(f"""eval "$(sed -n '/^{name}()/,/^}}/p' "{AGENT}")"; """ for name in functions)
    stub = 'give_up() { echo "give_up $*"; exit 3; }; UNSUPPORTED=; '
    return subprocess.run(["bash", "-c", stub + load + script], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", **env})


def test_every_reason_a_run_went_on_unsupported_is_kept():
    done = agent(["unsupported"], 'unsupported "no a"; unsupported "no b"; echo "[$UNSUPPORTED]"',
                 VB_ON_UNSUPPORTED="run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "[no a; no b]"


def test_a_space_limit_the_kernel_lacks_runs_anyway_when_asked_to():
    done = agent(["unsupported", "limit_vswap_slots"], 'limit_vswap_slots; echo "[$UNSUPPORTED]"',
                 VB_ON_UNSUPPORTED="run", VB_VSWAP_SLOTS="8192")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no virtual swap space to limit" in done.stdout.splitlines()[-1]


KALLSYMS = """\
ffffffff81200000 T alpha
ffffffff81200040 t beta
ffffffff81200040 t beta_alias
ffffffff81200100 T gamma
ffffffff81200100 T gamma_alias
ffffffff81300000 d some_data
ffffffff81200200 t twice
ffffffff81200300 t twice
ffffffff81200400 T last
"""


def text_range(tmp_path, name: str) -> subprocess.CompletedProcess:
    (tmp_path / "kallsyms").write_text(KALLSYMS)
    return agent(["text_range"], f'text_range {name} "{tmp_path / "kallsyms"}" && echo "$TEXT_RANGE"')


def test_a_functions_text_runs_to_the_next_symbol_at_another_address(tmp_path):
    assert text_range(tmp_path, "alpha").stdout == "ffffffff81200000 ffffffff81200040\n"
    # An alias at the same address is not the end; data symbols are not text.
    assert text_range(tmp_path, "beta").stdout == "ffffffff81200040 ffffffff81200100\n"
    assert text_range(tmp_path, "gamma").stdout == "ffffffff81200100 ffffffff81200200\n"


def test_a_function_named_twice_missing_or_without_an_end_is_refused(tmp_path):
    for name, reason in (("twice", "2 kernel functions"), ("nosuch", "no kernel function"),
                         ("last", "no symbol after")):
        done = text_range(tmp_path, name)
        assert done.returncode == 3 and done.stdout.startswith("give_up infra") and reason in done.stdout, \
            (name, done.stdout)


def test_a_kallsyms_with_its_addresses_hidden_is_refused_as_such(tmp_path):
    """With kptr_restrict, /proc/kallsyms names every symbol at address 0: no range can be found, and the
    reason given must be the hidden addresses, not a missing end."""
    (tmp_path / "kallsyms").write_text("".join(f"0000000000000000 {line.split(' ', 1)[1]}\n"
                                               for line in KALLSYMS.splitlines()))
    done = agent(["text_range"], f'text_range alpha "{tmp_path / "kallsyms"}" && echo "$TEXT_RANGE"')
    assert done.returncode == 3 and "addresses are hidden" in done.stdout, done.stdout


def test_nothing_the_guest_runs_uses_process_substitution():
    """The guest's /dev is a bare devtmpfs with no /dev/fd links, so bash's <(...) and >(...) fail there
    (read gets nothing and the run ends on a confusing reason) while they work on any host that runs
    these tests: only a look at the scripts catches them."""
    top = AGENT.parents[2]
    scripts = [AGENT, *sorted((top / "workloads").glob("*/run"))]
    found = [f"{path.relative_to(top)}:{number}: {line.strip()}"
             for path in scripts for number, line in enumerate(path.read_text().splitlines(), 1)
             if not line.lstrip().startswith("#") and re.search(r"[<>]\(", line)]
    assert not found, found


def test_the_ram_disks_room_is_what_the_guest_has_left_beside_the_bench_cgroup():
    """A 512 MiB guest with 420 MiB available and a 48M limit: the disk may hold what is left of the 420
    beside the 48 and a sixteenth of the guest kept free (32 MiB); without a limit, only that sixteenth."""
    done = agent(["ram_disk_room_kb"], 'ram_disk_room_kb 430080 524288 48M; echo "$RAM_DISK_ROOM_KB"; '
                 'ram_disk_room_kb 430080 524288 max; echo "$RAM_DISK_ROOM_KB"; '
                 'ram_disk_room_kb 430080 524288 50331648; echo "$RAM_DISK_ROOM_KB"')
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [str((420 - 48 - 32) * 1024), str((420 - 32) * 1024),
                                   str((420 - 48 - 32) * 1024)]


def test_a_ram_disk_left_no_room_ends_the_run_before_the_workload_with_the_reason():
    """memory_max=448M in a 512 MiB guest is a valid limit, but leaves the disk nothing: the watch would
    stop the workload at its first look, saying the disk holds 0 MiB, more than a negative room."""
    done = agent(["ram_disk_room_kb"], 'ram_disk_room_kb 430080 524288 448M; echo "room $RAM_DISK_ROOM_KB"',
                 VB_SWAP_DISK="ram")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("give_up infra swap_disk=ram:") and "no room" in done.stdout, done.stdout


def watch(tmp_path, room_kb: int, write_kb: int) -> subprocess.CompletedProcess:
    """watch_ram_disk on a file that grows by WRITE_KB once the watch has started, stopped 3 s later."""
    (tmp_path / "cg").mkdir()
    (tmp_path / "cg" / "cgroup.kill").write_text("")
    disk = tmp_path / "disk"
    disk.write_bytes(b"")
    script = (f'watch_ram_disk "{disk}" {room_kb} & sleep 0.5; '
              f'head -c {write_kb}K /dev/urandom >"{disk}"; sleep 3; touch "$WORK/ram-disk.stop"; wait')
    return agent(["watch_ram_disk"], script, WORK=str(tmp_path), CG=str(tmp_path / "cg"), RAM_DISK_POLL_S="1")


def test_a_ram_disk_that_outgrows_its_room_stops_the_workload_and_says_why(tmp_path):
    """Without the watch, a workload that writes more distinct slots than the guest can hold ran the guest
    into a reclaim livelock until the run's timeout, with no message (fio-swap on precise.conf's disk)."""
    done = watch(tmp_path, room_kb=1024, write_kb=2048)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "cg" / "cgroup.kill").read_text().strip() == "1"
    reason = (tmp_path / "ram-disk.full").read_text()
    assert "swap_disk=ram" in reason and "2 MiB" in reason and "swap_mb" in reason, reason


def test_a_ram_disk_within_its_room_is_left_alone(tmp_path):
    done = watch(tmp_path, room_kb=4096, write_kb=2048)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "cg" / "cgroup.kill").read_text() == ""
    assert not (tmp_path / "ram-disk.full").exists()


MEMINFO_6G = "MemTotal:        6100000 kB\nMemFree:         5900000 kB\n"
SWAPS_3G = ("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
            "/dev/vdb                                partition\t8388604\t\t3000000\t\t-2\n"
            "/tmp/vb/swapfile                        file\t\t65532\t\t1024\t\t-3\n")


def test_sizes_of_2_gib_and_more_are_read_as_exact_bytes(tmp_path):
    """mawk prints a number of 2^31 or more as %.6g: a 6 GiB guest's memory read as 6.1e+09 failed every
    run's memory.max check, and a device holding 3 GiB dropped out of the swaps record (not an integer)."""
    (tmp_path / "meminfo").write_text(MEMINFO_6G)
    (tmp_path / "swaps").write_text(SWAPS_3G)
    done = agent(["kv_json", "mem_total_bytes", "swaps_json", "swap_used_bytes"],
                 f'mem_total_bytes "{tmp_path / "meminfo"}"; swaps_json "{tmp_path / "swaps"}"; echo; '
                 f'swap_used_bytes "{tmp_path / "swaps"}"')
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["6246400000", '{"vdb": 3072000000, "/tmp/vb/swapfile": 1048576}',
                                        "3073048576"]
    (tmp_path / "vmstat.before").write_text("pgpgout 100\npswpout 5\n")
    (tmp_path / "vmstat").write_text("pgpgout 3000000100\npswpout 7\n")
    done = agent(["kv_json", "vmstat_delta_json"], f'vmstat_delta_json "{tmp_path / "vmstat"}"', WORK=str(tmp_path))
    assert done.stdout == '{"pgpgout": 3000000000, "pswpout": 2}', done.stdout + done.stderr


def test_a_brd_disk_is_checked_whole_against_the_room_before_the_workload():
    """brd allocates a page as each slot is first written and says nowhere how many it holds: the whole
    disk must fit beside the bench cgroup, or the run ends before the workload with the reason."""
    done = agent(["brd_fits"], 'brd_fits 262144; echo fits', VB_SWAP_MB="256")
    assert done.returncode == 0 and done.stdout.strip() == "fits", done.stdout + done.stderr
    done = agent(["brd_fits"], 'brd_fits 262143; echo fits', VB_SWAP_MB="256")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("give_up infra swap_disk=brd:") and "swap_mb=256" in done.stdout, done.stdout


def test_a_brd_disk_of_another_size_than_swap_mb_is_refused(tmp_path):
    """The size comes from the kernel's command line: a disk the runner did not size (brd's own default,
    4 MiB) must not be taken for the swap_mb asked."""
    block = tmp_path / "sys" / "block" / "ram0"
    block.mkdir(parents=True)
    (block / "size").write_text("8192\n")
    script = f'sed_root="{tmp_path}"; eval "$(declare -f brd_swap_disk | sed "s#/sys/block#$sed_root/sys/block#")"; '
    done = agent(["brd_swap_disk"], script + 'BRD_DISK=/dev/ram0; brd_swap_disk; echo "dev $dev"', VB_SWAP_MB="4")
    assert done.returncode == 0 and done.stdout.strip() == "dev /dev/ram0", done.stdout + done.stderr
    done = agent(["brd_swap_disk"], script + 'BRD_DISK=/dev/ram0; brd_swap_disk; echo "dev $dev"', VB_SWAP_MB="256")
    assert done.returncode == 3 and "holds 4 MiB, not swap_mb=256" in done.stdout, done.stdout + done.stderr


def test_the_thp_mode_in_force_is_the_bracketed_one(tmp_path):
    enabled = tmp_path / "enabled"
    enabled.write_text("always [madvise] never\n")
    done = agent(["thp_mode", "thp_in_force"], f'THP="{enabled}"; echo "in force: $(thp_in_force)"')
    assert done.stdout.splitlines() == ["in force: madvise"], done.stdout + done.stderr
    done = agent(["thp_mode", "thp_in_force"], f'THP="{tmp_path / "none"}"; echo "in force: $(thp_in_force)"')
    assert done.stdout.splitlines() == ["in force: "], done.stdout + done.stderr


def test_thp_is_written_and_a_mode_not_in_force_after_it_ends_the_run(tmp_path):
    """The mode is written to the file, then read back: a file that does not show it bracketed (as this
    plain file does not) is a kernel that did not take it, and the run ends there."""
    enabled = tmp_path / "enabled"
    enabled.write_text("always madvise [never]\n")
    done = agent(["set_thp", "thp_mode", "thp_in_force"], f'THP="{enabled}"; set_thp', VB_THP="always")
    assert enabled.read_text() == "always\n"
    assert done.returncode == 3 and done.stdout.startswith("give_up infra thp=always:") and "says always" in done.stdout, \
        done.stdout + done.stderr
    done = agent(["set_thp", "thp_mode", "thp_in_force"], f'THP="{tmp_path / "none"}"; set_thp', VB_THP="always")
    assert done.returncode == 3 and done.stdout.startswith("give_up infra thp=always: this kernel has no"), \
        done.stdout + done.stderr


def test_a_large_folio_size_in_force_is_named_as_the_setting_names_it(tmp_path):
    """With PMD-sized pages never, the size that is always on is the mode (thp=64K)."""
    (tmp_path / "enabled").write_text("always madvise [never]\n")
    for size, mode in (("2048kB", "always [inherit] madvise never"), ("64kB", "[always] inherit madvise never")):
        (tmp_path / f"hugepages-{size}").mkdir()
        (tmp_path / f"hugepages-{size}" / "enabled").write_text(mode + "\n")
    done = agent(["thp_mode", "thp_in_force"], f'THP="{tmp_path / "enabled"}"; echo "in force: $(thp_in_force)"')
    assert done.stdout.splitlines() == ["in force: 64K"], done.stdout + done.stderr
    (tmp_path / "hugepages-64kB" / "enabled").write_text("always inherit madvise [never]\n")
    done = agent(["thp_mode", "thp_in_force"], f'THP="{tmp_path / "enabled"}"; echo "in force: $(thp_in_force)"')
    assert done.stdout.splitlines() == ["in force: never"], done.stdout + done.stderr


def test_thp_of_a_size_turns_every_other_size_off(tmp_path):
    """thp=64K writes never to the PMD mode and every size, then always to 64kB's; these plain files do not
    bracket what was written, so the run ends as for a kernel that did not take it."""
    (tmp_path / "enabled").write_text("always madvise [never]\n")
    for size in ("2048kB", "64kB", "16kB"):
        (tmp_path / f"hugepages-{size}").mkdir()
        (tmp_path / f"hugepages-{size}" / "enabled").write_text("[inherit]\n")
    done = agent(["set_thp", "thp_mode", "thp_in_force"], f'THP="{tmp_path / "enabled"}"; set_thp', VB_THP="64K")
    assert [(tmp_path / name).read_text() for name in
            ("enabled", "hugepages-2048kB/enabled", "hugepages-16kB/enabled", "hugepages-64kB/enabled")] == \
        ["never\n", "never\n", "never\n", "always\n"]
    assert done.returncode == 3 and done.stdout.startswith("give_up infra thp=64K:"), done.stdout + done.stderr
    done = agent(["set_thp", "thp_mode", "thp_in_force"], f'THP="{tmp_path / "enabled"}"; set_thp', VB_THP="32K")
    assert done.returncode == 3 and "this kernel has no" in done.stdout and "hugepages-32kB" in done.stdout, \
        done.stdout + done.stderr


def test_thp_kernel_leaves_the_kernels_choice(tmp_path):
    enabled = tmp_path / "enabled"
    enabled.write_text("always madvise [never]\n")
    done = agent(["set_thp", "thp_mode", "thp_in_force"], f'THP="{enabled}"; set_thp; echo done', VB_THP="kernel")
    assert done.stdout.splitlines() == ["done"] and enabled.read_text() == "always madvise [never]\n"


def test_the_large_folio_counters_of_each_size_are_taken_as_their_change(tmp_path):
    for size, counters in (("2048kB", {"swpout": 9, "swpout_fallback": 0}), ("64kB", {"swpin": 5, "swpout": 3})):
        (tmp_path / f"hugepages-{size}" / "stats").mkdir(parents=True)
        for name, value in counters.items():
            (tmp_path / f"hugepages-{size}" / "stats" / name).write_text(f"{value}\n")
    (tmp_path / "before").write_text("2048kB swpout 1\n64kB swpin 5\n")
    done = agent(["mthp_counters", "mthp_delta_json"], f'THP_DIR="{tmp_path}"; mthp_delta_json "{tmp_path / "before"}"')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"2048kB": {"swpout": 8, "swpout_fallback": 0}, "64kB": {"swpin": 0, "swpout": 3}}
    done = agent(["mthp_counters", "mthp_delta_json"], f'THP_DIR="{tmp_path / "none"}"; mthp_delta_json /dev/null')
    assert json.loads(done.stdout) == {}, done.stdout


LOCK_STAT = """\
lock_stat version 0.4
-----------------------------------------------------------------------------------------------------------
                              class name    con-bounces    contentions   waittime-min   waittime-max waittime-total   waittime-avg    acq-bounces   acquisitions   holdtime-min   holdtime-max holdtime-total   holdtime-avg
-----------------------------------------------------------------------------------------------------------

                   &cluster->lock:            12             15           0.23          10.55          45.20           3.01             89          51234           0.05          25.10         890.20           0.72
                   --------------
                   &cluster->lock             15          [<ffffffff8123>] vswap_alloc+0x4d/0x230
                   --------------
                   &cluster->lock              9          [<ffffffff8124>] vswap_free+0x20/0x90

.............................................................................................................

                 &mm->mmap_lock-W:             0              0           0.00           0.00           0.00           0.00              3             40           0.50          90.00         400.00          10.00
                 &mm->mmap_lock-R:             1              2           1.00           2.00           3.00           1.50             10          20000           0.10           5.00        2000.00           0.10
                    swap_lock:             0              0           0.00           0.00           0.00           0.00              0             12           0.10           0.20           1.00           0.08
"""


def test_lock_stat_keeps_the_classes_that_waited_or_were_busy(tmp_path):
    (tmp_path / "lock_stat").write_text(LOCK_STAT)
    done = agent(["lock_stat_json"], f'LOCK_STAT="{tmp_path / "lock_stat"}"; lock_stat_json')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "&cluster->lock": {"contentions": 15, "wait_us": 45.2, "acquisitions": 51234, "hold_us": 890.2},
        "&mm->mmap_lock-R": {"contentions": 2, "wait_us": 3.0, "acquisitions": 20000, "hold_us": 2000.0}}
    done = agent(["lock_stat_json"], f'LOCK_STAT="{tmp_path / "none"}"; lock_stat_json')
    assert done.stdout == "null"


def zswap_stored_pages(tmp_path, enabled: str | None, stored: str | None) -> str:
    params, debugfs = tmp_path / "parameters", tmp_path / "debug" / "zswap"
    params.mkdir(exist_ok=True)
    if enabled is not None:
        (params / "enabled").write_text(enabled + "\n")
    if stored is not None:
        debugfs.mkdir(parents=True, exist_ok=True)
        (debugfs / "stored_pages").write_text(stored + "\n")
    done = agent(["zswap_stored_pages"],
                 f'ZSWAP_PARAMS="{params}"; ZSWAP_DEBUGFS="{debugfs}"; zswap_stored_pages')
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_zswap_never_turned_on_stores_nothing(tmp_path):
    # zswap makes its debugfs directory when it is first turned on; a run
    # whose zswap stayed off (the disk backend) has none, and holds 0 pages.
    assert zswap_stored_pages(tmp_path, "N", None) == "0"


def test_zswap_stored_pages_are_read_where_zswap_counts_them(tmp_path):
    assert zswap_stored_pages(tmp_path, "N", "12") == "12"
    assert zswap_stored_pages(tmp_path, "Y", "34") == "34"


def test_a_zswap_that_is_on_without_its_counters_is_unknown(tmp_path):
    assert zswap_stored_pages(tmp_path, "Y", None) == "null"
    assert zswap_stored_pages(tmp_path, None, None) == "null"
