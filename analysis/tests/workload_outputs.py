"""What each workload writes as its output (result.json "output"), one representative document per workload,
transcribed from the code that writes it: workloads/<name>/run and the C sources it runs. The declaration
test checks these against workloads/<name>/metrics.conf, so a field a workload starts to emit must be added
here as well as declared."""

# fio 3.33's JSON, per job and direction (read, write, trim; sync has only total_ios and lat_ns).
FIO_STATS = {"min": 1, "max": 9, "mean": 4.5, "stddev": 1.5, "N": 2048}


def _fio_direction() -> dict:
    return {"io_bytes": 8388608, "io_kbytes": 8192, "bw_bytes": 1048576, "bw": 1024, "iops": 256.0,
            "runtime": 8000, "total_ios": 2048, "short_ios": 0, "drop_ios": 0,
            "slat_ns": FIO_STATS, "clat_ns": FIO_STATS | {"percentile": {"50.000000": 4, "99.000000": 8,
                                                                     "99.900000": 9}},
            "lat_ns": FIO_STATS, "bw_min": 900, "bw_max": 1100, "bw_agg": 100.0, "bw_mean": 1024.0,
            "bw_dev": 50.0, "bw_samples": 16, "iops_min": 220, "iops_max": 280, "iops_mean": 256.0,
            "iops_stddev": 12.0, "iops_samples": 16}


def _fio_job(name: str) -> dict:
    return {"jobname": name, "groupid": 0, "error": 0, "eta": 0, "elapsed": 9, "job options": {"rw": "randread"},
            "read": _fio_direction(), "write": _fio_direction(), "trim": _fio_direction(),
            "sync": {"total_ios": 0, "lat_ns": FIO_STATS}, "job_runtime": 8000, "usr_cpu": 1.5, "sys_cpu": 20.0,
            "ctx": 4000, "majf": 10, "minf": 200,
            "iodepth_level": {"1": 100.0, ">=64": 0.0}, "iodepth_submit": {"0": 0.0, "4": 100.0},
            "iodepth_complete": {"0": 0.0, "4": 100.0},
            "latency_ns": {"2": 0.0, "1000": 0.0}, "latency_us": {"2": 0.0, "250": 12.5},
            "latency_ms": {"2": 50.0, ">=2000": 0.0},
            "latency_depth": 1, "latency_target": 0, "latency_percentile": 100.0, "latency_window": 0}


def _swap_verify_mode(mode: str) -> dict:
    return {"mode": mode, "size_mib": 64, "pages": 16384, "seed": 1, "children": 4,
            "pages_per_class": {"random": 4096, "text": 4096, "zero": 4096, "same": 4096}, "madv_pageout": True,
            "nonresident_after_pageout": 16000, "swap_ptes_after_pageout": 12000, "swap_type_mask": 1,
            "nonresident_after_rewrite": 8000, "fill_s": 0.5, "pageout_s": 1.5, "verify_s": 2.0,
            "rewrite_verify_s": 2.5, "pages_verified": 32768, "mib_verified": 128, "mismatches": 0,
            "children_failed": 0, "large_folios_after_fill": {"64kB": 0, "2048kB": 0},
            "large_folios_after_verify": {"64kB": 0, "2048kB": 0}}


def _swapoff_region(name: str) -> dict:
    region = {"mappings": 0, "pages_per_mapping": 4} if name == "vmas" else {"mib": 8}
    if name != "sparse":
        region |= {"swap_ptes_before_swapoff": 2048, "swap_ptes_after_swapoff": 0}
    return region | {"pages": 2048, "minor_faults_after_swapoff": 3, "major_faults_after_swapoff": 0,
                     "touch_verify_s": 0.2, "mismatches": 0, "lost_pages": 0}


from analysis.tests.overhead_fixture import overhead_output  # noqa: E402  (the overhead workload's writer)

VSWAP_COUNTERS = {"used": 10, "nr_swapfile": 0, "nr_zswap": 10, "nr_zero": 0, "nr_folio": 0, "clusters": 1,
                  "desc_bytes": 8192, "alloc_reject": 0}

OUTPUTS = {
    "overhead": overhead_output(per_slot=3.2, per_entry=9, sizes_mb=(256, 1024), hold_mb=16, vswap=True,
                                churned_per_entry=12),
    "kernel-build": {"jobs": 2, "targets": "mm/memory.o", "in_memory": 0, "disk_read_kb": {"vda": 30144, "vdb": 0, "vdc": 11176},
                     "disk_written_kb": {"vda": 412, "vdb": 0, "vdc": 3120},
                     "build_s": 300.5, "make_exit": 0, "objects_compiled": 8},
    "fio-swap": {"size_mb": 96, "bs": "4k", "runtime_s": 8, "numjobs": 1, "compress_pct": 75,
                 "fio": {"fio version": "fio-3.33", "timestamp": 1733280000, "timestamp_ms": 1733280000000,
                         "time": "Wed Dec  4 03:00:00 2024", "global options": {"bs": "4k"},
                         "jobs": [_fio_job("randread-psync"), _fio_job("write-mmap")],
                         "disk_util": [{"name": "vda", "read_ios": 10, "write_ios": 0, "read_merges": 0,
                                        "write_merges": 0, "read_ticks": 5, "write_ticks": 0, "in_queue": 5,
                                        "util": 0.5}]}},
    "usemem": {"size_mib": 96, "nproc": 1, "order": "seq", "random_pct": 25, "fill": 0, "free": "munmap",
               "seed": 1,
               **{phase: {"seconds": 1.5, "mb_per_s": 64.0} for phase in ("touch", "retouch", "read", "free")},
               "munmap_s": 0.1, "exit_s": 0.0, "free_s": 0.1, "pages_verified": 49152, "mismatches": 0,
               "first_bad": {"phase": "read", "worker": 0, "page": 3, "offset": 8}},
    "swapoff": {"seed": 1, "madv_pageout": True, "populate_s": 1.0, "pageout_s": 2.0,
                "cgroup_bytes_before_swapoff": 1 << 20, "cgroup_bytes_after_swapoff": 1 << 26,
                "swap_used_kib_before": 65536, "swap_used_kib_after": 0,
                "swapoff": {"wall_s": 3.0, "user_s": 0.0, "sys_s": 2.9, "minor_faults": 5, "major_faults": 0,
                            "exit_status": 0, "fail_reads": 4, "reads_failed": 4},
                **{name: _swapoff_region(name) for name in ("anon", "cow", "shmem", "sparse", "vmas")},
                "cow_child": {"ok": True, "minor_faults_after_swapoff": 1, "major_faults_after_swapoff": 0,
                              "mismatches": 0, "lost_pages": 0},
                "mismatches": 0, "lost_pages": 4},
    "swap-verify": {mode: _swap_verify_mode(mode) for mode in ("plain", "fork", "shmem")},
    "rewrite-race": {"pages": 16384, "rewriters": 2, "seconds": 60.0, "reads": 200000, "rewrites": 200000,
                     "batch_pageouts": 12500, "region_pageouts": 40, "swapped_pages_at_end": 9000,
                     "bad_pages": 0, "first_bad_page": -1},
    "cgroup-selftests": {"zswap_enabled": "Y", "swap_total_kb": 311296,
                         "tests": {"test_zswap": {"exit": 1, "results": {
                             "planned": 2, "cases": {"test_zswap_usage": "pass"}, "pass": 1, "fail": 1, "skip": 0,
                             "xfail": 0, "error": 0, "missing": 0, "skip_reason": ""}}},
                         "totals": {"pass": 19, "fail": 2, "skip": 0, "xfail": 0, "error": 0, "missing": 0}},
    "stress": {"duration_s": 600, "stress_ng_exit": 0, "swapoff_ok": 20, "swapoff_failed": 0, "swapon_ok": 20,
               "swapon_failed": 0, "zswap_flips": 120, "compactions": 0, "oom_kills": 3,
               "vswap_during": {"samples": 120, "used_max": 30000, "clusters_max": 20, "desc_bytes_max": 1 << 20},
               "final_swapoff_exit": 0, "vswap_before_swapoff": VSWAP_COUNTERS, "vswap_after_swapoff": VSWAP_COUNTERS,
               "vswap_verify": ["ok"], "debug_locks": 1, "kmsg_lines": 40,
               "dmesg": {"lockdep": 0, "kasan": 0, "vm_bug": 0, "warning": 0, "bug": 0}, "dmesg_matches": []},
    # Harness self-tests: they never write an output.
    "hang": {},
    "panic": {},
}
