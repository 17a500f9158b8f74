"""workloads/kernel-build/prepare makes the tree the guest builds.  Kbuild writes absolute paths into the
objects' folder, so the tree must be prepared at the path the guest mounts it at; that path is the
workload's own, whatever folder the host keeps its build directory in (a build directory under /tmp was
hidden in the guest by the tmpfs the in-memory build mounts on /tmp).  The kernel source here is a
stand-in whose make targets record where they ran: no kernel is configured."""
import os
import subprocess
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
PREPARE = TOP / "workloads" / "kernel-build" / "prepare"
# make's O= and source folder as each target of the stand-in saw them.
STAND_IN_MAKEFILE = "tinyconfig prepare:\n\t@mkdir -p $(O) && echo '$(abspath $(O)) $(CURDIR)' >$(O)/$@.where\n"


def image_file(image: Path, name: str) -> str:
    done = subprocess.run(["debugfs", "-R", f"cat {name}", str(image)], capture_output=True, text=True, check=True)
    return done.stdout


def test_the_tree_is_prepared_at_the_guest_path_not_the_hosts(tmp_path):
    build_dir = tmp_path / "build"
    source = build_dir / "src" / "linux-source-6.12-stand-in"
    source.mkdir(parents=True)
    (source / "Makefile").write_text(STAND_IN_MAKEFILE)
    done = subprocess.run([PREPARE, "unused-params"], env={**os.environ, "BUILD_DIR": str(build_dir)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    image = Path(done.stdout.strip())
    assert image.is_file() and build_dir in image.parents

    # The guest mounts the tree where its vb-tree.env says: a fixed path outside the tmpfs on /tmp.
    env = image_file(image, "/vb-tree.env").strip()
    assert env.startswith("TREE_DIR=/"), env
    tree = env.split("=", 1)[1]
    assert not tree.startswith(str(tmp_path)) and not tree.startswith("/tmp/")
    for target in ("tinyconfig", "prepare"):
        assert image_file(image, f"/obj/{target}.where").split() == [f"{tree}/obj", f"{tree}/src"]
