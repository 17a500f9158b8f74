"""The series applies exactly or the kernel is not built (issue #35): harness/common.sh's prepare_tree, which
harness/build-kernel.sh prepares the vswap tree with, on a tree of one file; no kernel is configured or built."""
import os
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
LINES = [f"line {number};" for number in range(1, 13)]


def patch_text(context: list[str], at: int) -> str:
    """A git-style patch of mm/a.c whose one hunk says it is at line AT, with CONTEXT around the changed
    line 6 (three lines before it, three after) as the patch expects to find it."""
    before, after = context[:3], context[4:7]
    hunk = [f" {line}" for line in before] + [f"-{context[3]}", f"+{context[3]} /* changed */"] + \
           [f" {line}" for line in after]
    return ("Subject: [PATCH] a\n---\ndiff --git a/mm/a.c b/mm/a.c\n--- a/mm/a.c\n+++ b/mm/a.c\n"
            f"@@ -{at},7 +{at},7 @@\n" + "\n".join(hunk) + "\n")


EXACT = patch_text(LINES[2:9], 3)
# The tree has two lines the series' tree did not have above the hunk: patch finds it two lines down.
OFFSET = patch_text(LINES[4:11], 3)
# The first line of context is not in the tree: patch would drop it and apply the rest.
FUZZ = patch_text(["line 0;"] + LINES[3:9], 3)


@pytest.fixture
def tree(tmp_path):
    pristine = tmp_path / "pristine"
    (pristine / "mm").mkdir(parents=True)
    (pristine / "mm" / "a.c").write_text("\n".join(LINES) + "\n")
    return pristine


def prepare(tmp_path, pristine, text):
    (tmp_path / "0001-a.patch").write_text(text)
    return subprocess.run(["bash", "-c", f'. "{TOP}/harness/common.sh"; prepare_tree "$@"', "prepare_tree",
                           pristine, tmp_path / "kernel", "tree-id", tmp_path / "0001-a.patch"],
                          capture_output=True, text=True, timeout=60)


def test_a_patch_that_applies_exactly_is_applied(tmp_path, tree):
    done = prepare(tmp_path, tree, EXACT)
    assert done.returncode == 0, done.stderr
    assert "line 6; /* changed */" in (tmp_path / "kernel" / "src" / "mm" / "a.c").read_text()


@pytest.mark.parametrize("text, words", [(FUZZ, ["0001-a.patch", "fuzz"]), (OFFSET, ["0001-a.patch", "offset"])],
                         ids=["fuzz", "offset"])
def test_a_patch_that_applies_only_with_fuzz_or_at_another_line_is_refused(tmp_path, tree, text, words):
    done = prepare(tmp_path, tree, text)
    assert done.returncode == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr
    assert not (tmp_path / "kernel" / "src").exists()
    assert "/* changed */" not in (tree / "mm" / "a.c").read_text()


def test_build_kernel_stops_before_configuring_when_the_series_needs_fuzz(tmp_path, tree):
    # A stand-in kernel source: build-kernel.sh reads its version, and no make target would build anything.
    (tree / "Makefile").write_text(f"kernelversion:\n\t@echo 6.12.0\n%:\n\t@touch {tmp_path}/made-$@; exit 1\n")
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "0001-a.patch").write_text(FUZZ)
    (patches / "series").write_text("0001-a.patch\n")
    done = subprocess.run([TOP / "harness" / "build-kernel.sh", "vswap"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "BUILD_DIR": str(tmp_path / "build"), "KERNEL_SRC": str(tree),
                               "PATCHES": str(patches), "VSWAP_CONFIG": ""})
    assert done.returncode == 1, done.stderr
    assert "0001-a.patch" in done.stderr and "fuzz" in done.stderr, done.stderr
    assert "does not apply" in done.stderr.splitlines()[-1], done.stderr
    assert not list(tmp_path.glob("made-*"))
    assert not (tmp_path / "build" / "kernels" / "vswap" / "src").exists()
