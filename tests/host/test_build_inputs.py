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
