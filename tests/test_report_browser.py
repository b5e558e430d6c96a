"""The HTML report in a real headless Chromium (Debian's package; .ci/run installs it):
it loads without console errors, the table sorts, and a screenshot is written."""

from __future__ import annotations

import json
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
    return re.findall(r'<tr><td class="text" data-sort="([^"]+)"', body)


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
    assert not re.search(r"https?://", report.read_text(encoding="utf-8"))  # nothing fetched, no address to fetch from
    shot = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", report.as_uri())
    assert shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png_is_drawn(shot.read_bytes())


def png_is_drawn(png: bytes) -> bool:
    """The screenshot holds a picture, not a blank page: its pixels (the PNG's IDAT stream, read
    with the standard library) take many byte values, where a blank page's take a handful."""
    import struct
    import zlib

    stream, at = b"", 8
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        if kind == b"IDAT":
            stream += png[at + 8 : at + 8 + length]
        at += 12 + length
    return len(set(zlib.decompress(stream))) > 50


@pytest.fixture
def comparison_page(tmp_path) -> Path:
    """compare --html on 16 samples, 7 of them worse (the ids found fell) and one unpaired, with a
    gate from the localeval.toml beside the candidate: a plot, a gate, every pair."""

    def results(name: str, found: list[int]) -> Path:
        rows = [{"id": f"q{i}", "user_input": f"Question {i}?", "retrieved_context_ids": [f"r{i}a", f"r{i}b"][:f] + ["x"], "reference_context_ids": [f"r{i}a", f"r{i}b"]} for i, f in enumerate(found)]
        data = tmp_path / f"{name}.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        out = tmp_path / f"{name}.results.jsonl"
        assert CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "-m", "id_context_precision", "-o", str(out), "-q"]).exit_code == 0
        return out

    base = results("base", [2] * 17)
    candidate = results("candidate", [1, 0, 1, 1, 0, 1, 1] + [2] * 9)
    (tmp_path / "localeval.toml").write_text('max_drop = { id_context_recall = 0.05 }\n', encoding="utf-8")
    page = tmp_path / "compare.html"
    result = CliRunner().invoke(cli, ["compare", str(base), str(candidate), "--html", str(page), "-q"])
    assert result.exit_code == 1, result.output  # the gate from the config file fails
    return page


def test_the_comparison_page_draws_the_plot_the_gate_and_every_pair(tmp_path, comparison_page):
    html = comparison_page.read_text(encoding="utf-8")
    assert not re.search(r"https?://", html)  # nothing on it is fetched, or names a place to fetch from
    style = html.split("<style>", 1)[1].split("</style>", 1)[0]
    assert re.findall(r"([\w.]+)\{[^}]*overflow-wrap:anywhere", style) == ["td.text"] and "td.num{white-space:nowrap}" in style  # no number broken mid-number
    loaded = chromium(tmp_path, "--dump-dom", comparison_page.as_uri())
    assert console_errors(loaded.stderr) == []
    dom = loaded.stdout
    assert dom.count("<svg") == 3  # the forest plot and a scatter per metric
    assert 'aria-label="each metric\'s difference with its 95% interval"' in dom and "<circle" in dom
    forest = html.split('aria-label="each metric\'s difference with its 95% interval">', 1)[1].split("</svg>", 1)[0]
    intervals = re.findall(r'<line [^>]*stroke-width="3"><title>([\w.]+): 95% interval ', forest)  # a metric's interval: one bar, titled
    assert sorted(intervals) == ["id_context_precision", "id_context_recall"], intervals  # one per metric, no more
    assert sorted(re.findall(r"<circle [^>]*><title>([\w.]+): ", forest)) == sorted(intervals)  # and one mean dot on each
    assert "<h2>Gates: " in dom and "NOT met" in dom and "id_context_recall" in dom.split("<h2>Gates: ", 1)[1].split("</table>", 1)[0]
    pairs = re.findall(r'<tr class="(\w+)" data-metric="([^"]+)" data-moved="(\d)"', dom.split('id="pairs"', 1)[1])
    assert len(pairs) == 2 * 16  # every pair of both metrics (q16 is in the base only)
    assert [p for p in pairs if p[1] == "id_context_recall" and p[2] == "1"] == [("fail", "id_context_recall", "1")] * 7
    assert pairs[0][1] == "id_context_recall" and pairs[0][0] == "fail"  # the worst change first, with no script
    assert "with n = 16 and this spread, a drop smaller than" in dom
    moved = chromium(tmp_path, "--dump-dom", comparison_page.as_uri() + "#moved=1")
    visible = re.findall(r'<tr class="\w+" data-metric="[^"]+" data-moved="(\d)"(?! hidden)>', moved.stdout)
    assert visible == ["1"] * len([p for p in pairs if p[2] == "1"])  # filtered to the samples that moved
    by_difference = chromium(tmp_path, "--dump-dom", comparison_page.as_uri() + "#sort=5&dir=desc")
    assert 'data-sorted="5:desc"' in by_difference.stdout


def test_the_comparison_page_screenshot_is_drawn(tmp_path, comparison_page):
    shot = tmp_path / "compare.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,1400", comparison_page.as_uri())
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png_is_drawn(png)
