"""The guest binaries do not depend on where the checkout is: two checkouts sharing a BUILD_DIR must not
rebuild each other's binaries into different bytes (that changed the image id and deleted the other's
image, issue #14)."""
import hashlib
import shutil
import subprocess
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]


def build_guest_bin(checkout: Path) -> dict:
    shutil.copy(TOP / "Makefile", checkout / "Makefile")
    shutil.copytree(TOP / "workloads", checkout / "workloads")
    build = checkout / "build"
    subprocess.run(["make", "-s", "-C", checkout, "guest-bin", f"BUILD_DIR={build}"], check=True)
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in (build / "guest-bin").iterdir()}


def test_two_checkouts_build_the_same_guest_binaries(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "checkout-two").mkdir()
    first, second = build_guest_bin(tmp_path / "one"), build_guest_bin(tmp_path / "checkout-two")
    assert first and first == second
