"""The report in a real browser: headless Chromium renders the report of a campaign that has the data of all
three headline tables. They must end within the first 900 px of a 1400 px wide window, and no table of the
report, every collapsed section opened, may be wider than 1400 px. The first screen is kept as a screenshot
under build/test-results/."""
import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.tests.full_campaign import write_full_campaign

WIDTH, HEIGHT = 1400, 900
HEADLINE_IDS = ("sys-time", "memory-overhead", "swapoff")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  f"--window-size={WIDTH},{HEIGHT}")
TOP = Path(__file__).resolve().parents[2]
SCREENSHOT = Path(os.environ.get("BUILD_DIR", TOP / "build")) / "test-results" / "report-first-screen.png"
# Run in the page as it loads: where the headline elements are with every section as the reader first sees it,
# then the width of every table with every collapsed section opened, written into the page for --dump-dom.
MEASURE = """<script>
(function () {
  const box = element => { const r = element.getBoundingClientRect();
    return {tag: element.tagName, top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, width: r.width}; };
  const found = {headline: {}};
  for (const id of %s) { const element = document.getElementById(id); if (element) found.headline[id] = box(element); }
  document.querySelectorAll("details").forEach(details => { details.open = true; });
  found.tables = Array.from(document.querySelectorAll("table"),
                            table => ({width: box(table).width, starts: table.innerText.slice(0, 60)}));
  found.page_width = document.documentElement.scrollWidth;
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
})();
</script>
"""


def chromium(*arguments, profile: Path) -> str:
    browser = shutil.which("chromium")
    if browser is None:
        pytest.fail("chromium is not installed: harness/setup.sh installs it (as root: apt-get install chromium)")
    done = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *arguments],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    campaign = write_full_campaign(tmp_path_factory.mktemp("results"))
    assert main(["report", str(campaign), "--index", str(campaign.parent / "index.sqlite")]) == 0
    return campaign / "report" / "index.html"


@pytest.fixture(scope="module")
def measured(report, tmp_path_factory) -> dict:
    page = report.with_name("measure.html")
    page.write_text(report.read_text().replace("</body>", MEASURE % json.dumps(HEADLINE_IDS) + "</body>"))
    dom = chromium("--dump-dom", page.as_uri(), profile=tmp_path_factory.mktemp("profile"))
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


def test_the_three_headline_tables_are_on_the_first_screen(measured):
    assert set(measured["headline"]) == set(HEADLINE_IDS), measured["headline"]
    for name, box in measured["headline"].items():
        assert box["tag"] == "TABLE", (name, box)
        assert 0 < box["top"] < box["bottom"] <= HEIGHT, (name, box)


def test_no_table_is_wider_than_the_window(measured):
    assert len(measured["tables"]) > 10  # the collapsed sections' tables were measured too
    wide = [table for table in measured["tables"] if table["width"] > WIDTH]
    assert not wide, wide
    assert measured["page_width"] <= WIDTH


def test_the_first_screen_is_kept_as_a_screenshot(report, tmp_path, capsys):
    taken = tmp_path / SCREENSHOT.name
    chromium(f"--screenshot={taken}", report.as_uri(), profile=tmp_path / "profile")
    header = taken.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24]) == (WIDTH, HEIGHT)
    # Another test run in the same checkout may be keeping its own: each replaces the file whole.
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    copying = SCREENSHOT.with_name(f".{SCREENSHOT.name}.{os.getpid()}")
    shutil.copy(taken, copying)
    os.replace(copying, SCREENSHOT)
    with capsys.disabled():
        print(f"\nthe report's first screen: {SCREENSHOT}")
