"""The HTML report in a real headless Chromium (Debian's package; .ci/run installs it):
it loads without console errors, the table sorts, and a screenshot is written."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.cli import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")

# Flags that keep Chromium off the network entirely (this machine has none) and headless.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0",
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile{len(list(tmp_path.glob('profile*')))}"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=120)


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]


@pytest.fixture
def report(tmp_path, write_jsonl) -> Path:
    rows = [
        {"id": "b-mid", "retrieved_context_ids": [1], "reference_context_ids": [1, 2]},
        {"id": "a-top", "retrieved_context_ids": [1, 2], "reference_context_ids": [1, 2]},
        {"id": "c-low", "retrieved_context_ids": [], "reference_context_ids": [1, 2, 3]},
    ]
    results = tmp_path / "results.jsonl"
    CliRunner().invoke(cli, ["score", str(write_jsonl(rows)), "-m", "id_context_recall", "-o", str(results)])
    page = tmp_path / "report.html"
    assert CliRunner().invoke(cli, ["report", str(results), "-o", str(page)]).exit_code == 0
    return page


def ids_in_order(dom: str) -> list[str]:
    body = dom.split('id="samples"', 1)[1]
    return re.findall(r'<tr><td data-sort="([^"]+)"', body)


def test_the_error_detector_sees_a_real_console_error(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction()</script></body></html>")
    assert console_errors(chromium(tmp_path, "--dump-dom", broken.as_uri()).stderr)


def test_report_loads_without_console_errors_and_sorts(tmp_path, report):
    loaded = chromium(tmp_path, "--dump-dom", report.as_uri())
    assert console_errors(loaded.stderr) == []
    assert ids_in_order(loaded.stdout) == ["b-mid", "a-top", "c-low"]  # input order
    by_score = chromium(tmp_path, "--dump-dom", report.as_uri() + "#sort=2&dir=desc")
    assert console_errors(by_score.stderr) == []
    assert 'data-sorted="2:desc"' in by_score.stdout
    assert ids_in_order(by_score.stdout) == ["a-top", "b-mid", "c-low"]
    by_id = chromium(tmp_path, "--dump-dom", report.as_uri() + "#sort=0&dir=asc")
    assert ids_in_order(by_id.stdout) == ["a-top", "b-mid", "c-low"]


def test_report_screenshot(tmp_path, report):
    shot = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", report.as_uri())
    assert shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
