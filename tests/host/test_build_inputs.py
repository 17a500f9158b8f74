"""harness/build-kernel.sh refuses a vswap series that could not give a full vswap kernel, before it touches
a tree.  The kernel source is a stand-in with nothing to build: no test here can start a kernel build."""
import os
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]


@pytest.fixture
def build(tmp_path):
    source = tmp_path / "linux"
    (source / "mm").mkdir(parents=True)
    (source / "Makefile").write_text("kernelversion:\n\t@echo 6.12.0\n")

    def run(patches: Path, **extra_env):
        env = {**os.environ, "KERNEL_SRC": str(source), "PATCHES": str(patches), "BUILD_DIR": str(tmp_path / "build"),
               **extra_env}
        return subprocess.run([TOP / "harness" / "build-kernel.sh", "vswap"], env=env, capture_output=True,
                              text=True, timeout=120)
    return run


def series(tmp_path, text=None, patches=()):
    directory = tmp_path / "series"
    directory.mkdir()
    if text is not None:
        (directory / "series").write_text(text)
    for name in patches:
        (directory / name).write_text("--- a/Makefile\n+++ b/Makefile\n")
    return directory


@pytest.mark.parametrize("text, patches, message", [
    (None, (), "no series file"),
    ("0001-a.patch\n0002-missing.patch\n", ("0001-a.patch",), "lists a missing patch: 0002-missing.patch"),
    ("# nothing yet\n", (), "lists no patch"),
])
def test_a_series_that_cannot_give_the_vswap_kernel_stops_the_build(build, tmp_path, text, patches, message):
    done = build(series(tmp_path, text, patches))
    assert done.returncode != 0
    assert message in done.stderr, done.stderr
    assert "preparing vswap source tree" not in done.stderr


def test_a_missing_vswap_config_fragment_stops_the_build(build, tmp_path):
    done = build(series(tmp_path, "0001-a.patch\n", ("0001-a.patch",)), VSWAP_CONFIG=str(tmp_path / "none.config"))
    assert done.returncode != 0
    assert "none.config: no such config fragment" in done.stderr, done.stderr
    assert "preparing vswap source tree" not in done.stderr


def test_a_truncated_source_tarball_leaves_no_partial_tree(tmp_path):
    tree = tmp_path / "linux-source-6.12"
    (tree / "mm").mkdir(parents=True)
    (tree / "Makefile").write_text("kernelversion:\n\t@echo 6.12.0\n")
    (tree / "mm" / "filler").write_bytes(os.urandom(1 << 20))
    tarball = tmp_path / "linux-source-6.12.tar.xz"
    subprocess.run(["tar", "-cJf", tarball, "-C", tmp_path, tree.name], check=True)
    tarball.write_bytes(tarball.read_bytes()[: tarball.stat().st_size // 2])
    build = tmp_path / "build"
    env = {**os.environ, "KERNEL_SRC": str(tarball), "BUILD_DIR": str(build)}
    done = subprocess.run([TOP / "harness" / "build-kernel.sh", "baseline"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert "cannot extract" in done.stderr, done.stderr
    assert [path.name for path in (build / "src").iterdir() if not path.name.startswith(".")] == []


def vswap_bench(*arguments):
    return subprocess.run(["/usr/bin/python3", "-m", "vswap_bench", *arguments], cwd=TOP, capture_output=True,
                          text=True, timeout=60)


def test_each_kernel_a_campaign_names_is_a_variant_and_a_flavour():
    from vswap_bench.settings import KERNEL_VARIANTS
    answers = {name: vswap_bench("kernel-variant", name) for name in KERNEL_VARIANTS}
    assert {name: (done.returncode, done.stdout) for name, done in answers.items()} == {
        "baseline": (0, "baseline guest\n"), "vswap": (0, "vswap guest\n"),
        "baseline-debug": (0, "baseline debug\n"), "vswap-debug": (0, "vswap debug\n"),
        "baseline-kasan": (0, "baseline kasan\n"), "vswap-kasan": (0, "vswap kasan\n"),
        "baseline-kcsan": (0, "baseline kcsan\n"), "vswap-kcsan": (0, "vswap kcsan\n"),
        "baseline-kcsan-strict": (0, "baseline kcsan-strict\n"), "vswap-kcsan-strict": (0, "vswap kcsan-strict\n"),
        "baseline-lockstat": (0, "baseline lockstat\n"), "vswap-lockstat": (0, "vswap lockstat\n")}
    done = vswap_bench("kernel-variant", "mainline")
    assert done.returncode == 64 and done.stdout == ""
    assert "unknown kernel 'mainline'" in done.stderr and ", ".join(KERNEL_VARIANTS) in done.stderr, done.stderr


@pytest.mark.parametrize("arguments, name", [(["vswap-debug"], "vswap-debug"), (["vswap", "debug"], "vswap-debug"),
                                             (["baseline"], "baseline"), (["baseline", "guest"], "baseline")])
def test_build_kernel_takes_the_kernels_names(tmp_path, arguments, name):
    # Past the name, it stops at the missing source: nothing is built.
    env = {**os.environ, "KERNEL_SRC": str(tmp_path / "none"), "BUILD_DIR": str(tmp_path / "build")}
    done = subprocess.run([TOP / "harness" / "build-kernel.sh", *arguments], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and "kernel source not found" in done.stderr, done.stderr
    assert [path.name for path in (tmp_path / "build" / "kernels").iterdir()] == [f".{name}.lock"]


@pytest.mark.parametrize("arguments", [["mainline"], ["vswap", "fast"], ["vswap-debug", "kasan"]])
def test_build_kernel_refuses_other_names_with_the_list(tmp_path, arguments):
    from vswap_bench.settings import KERNEL_VARIANTS
    env = {**os.environ, "KERNEL_SRC": str(tmp_path / "none"), "BUILD_DIR": str(tmp_path / "build")}
    done = subprocess.run([TOP / "harness" / "build-kernel.sh", *arguments], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and "usage: build-kernel.sh" in done.stderr, done.stderr
    assert ", ".join(KERNEL_VARIANTS) in done.stderr, done.stderr
    assert not (tmp_path / "build" / "kernels").exists()


def test_make_builds_each_kernel_by_its_name(tmp_path):
    from vswap_bench.settings import KERNEL_VARIANTS
    for name in KERNEL_VARIANTS:
        done = subprocess.run(["make", "-n", f"kernel-{name}", f"BUILD_DIR={tmp_path}"], cwd=TOP, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0 and f"harness/build-kernel.sh {name}\n" in done.stdout, (name, done.stdout)
