"""A metric from another package that fails, in any way, fails its samples or its run with its
name on it, and never looks like the user's Ctrl-C or a failed gate: whatever it raises
(asyncio.CancelledError, a KeyboardInterrupt of its own), whatever it writes to standard output
(a child process, C code), whichever version of it wrote a results file.

Plugins are installed for real (a module and its .dist-info on a subprocess's path, as pip lays
them out) and the CLI runs in that subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import result_rows, sigint_at_default

ROOT = Path(__file__).resolve().parents[1]


def _install(site: Path, module: str, source: str, entry: str, version: str = "0.1") -> None:
    site.mkdir(exist_ok=True)
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[localeval.metrics]\n{entry}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def _localeval(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "localeval", *args], capture_output=True, text=True, env=_env(site), cwd=cwd, timeout=300)


def _plugin(body: str, init: str = "") -> str:
    """A metric module `raising` whose score_batch runs `body` (indented) before scoring 1.0."""
    return f'''
import asyncio, os, subprocess, sys, time
from localeval.metrics.base import Metric, Score


class Raising(Metric):
    name = "raising"
    description = "fails as the test says"
    required_fields = ("reference",)

    def __init__(self, params=None):
        {init or "pass"}
        super().__init__(params)

    def score_batch(self, samples, judge):
        {body}
        return [Score(1.0) for _ in samples]
'''


def _samples(tmp_path: Path, count: int) -> Path:
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps({"id": i, "reference": "r", "retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n" for i in range(count)))
    return data


# Item 9: a BaseException from a plugin.


def test_a_plugins_cancelled_error_fails_its_samples_naming_it_and_the_run_goes_on(tmp_path):
    site = tmp_path / "site"
    _install(site, "raising", _plugin("raise asyncio.CancelledError('the event loop went away')"), "raising = raising:Raising")
    data, out = _samples(tmp_path, 3), tmp_path / "out.jsonl"
    run = _localeval(site, "score", str(data), "-m", "raising", "-m", "id_context_recall", "-o", str(out), "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr  # neither exit 1 (a gate) nor a traceback
    assert "Traceback" not in run.stderr
    rows = result_rows(out)
    assert len(rows) == 3 and all("metric 'raising' (raising.Raising) raised CancelledError: the event loop went away" in r["errors"]["raising"] for r in rows)
    assert all(r["scores"]["id_context_recall"] == 1.0 for r in rows)  # the other metric is scored
    gated = _localeval(site, "score", str(data), "-m", "raising", "--fail-on-error", "-q", cwd=tmp_path)
    assert gated.returncode == 1 and "3 of 3 samples could not be scored by raising" in gated.stderr


def test_a_plugins_own_keyboard_interrupt_is_its_failure_not_the_users_ctrl_c(tmp_path):
    site = tmp_path / "site"
    _install(site, "raising", _plugin("raise KeyboardInterrupt('raised by the plugin')"), "raising = raising:Raising")
    data, out = _samples(tmp_path, 3), tmp_path / "out.jsonl"
    run = _localeval(site, "score", str(data), "-m", "raising", "-o", str(out), "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr  # not 130: the run finished, so no resume repeats it
    assert "interrupted" not in run.stderr and "--resume" not in run.stderr
    rows = result_rows(out)
    assert len(rows) == 3 and all("raised KeyboardInterrupt of its own, with no Ctrl-C behind it" in r["errors"]["raising"] for r in rows)


def test_a_plugin_that_swallows_the_users_ctrl_c_still_stops_the_run(tmp_path):
    site = tmp_path / "site"
    body = "try:\n            time.sleep(0.2 * len(samples))\n        except KeyboardInterrupt:\n            raise RuntimeError('swallowed the Ctrl-C')"
    _install(site, "raising", _plugin(body), "raising = raising:Raising")
    data, out = _samples(tmp_path, 200), tmp_path / "out.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "localeval", "score", str(data), "-m", "raising", "-o", str(out), "-q"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(site), cwd=tmp_path, preexec_fn=sigint_at_default)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None and (not out.exists() or out.read_text().count("\n") < 2):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted after" in stderr and "--resume" in stderr
    assert all("raising" not in r["errors"] for r in result_rows(out))  # no sample was failed by the Ctrl-C


def test_a_plugin_whose_constructor_raises_a_base_exception_is_a_usage_error_naming_it(tmp_path):
    site = tmp_path / "site"
    _install(site, "raising", _plugin("pass", init="raise asyncio.CancelledError('no loop')"), "raising = raising:Raising")
    run = _localeval(site, "score", str(_samples(tmp_path, 1)), "-m", "raising", "-q", cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert "metric 'raising' (raising.Raising) could not be built: CancelledError: no loop" in run.stderr and "Traceback" not in run.stderr


# Item 10: the plugin's package and version in the results header.


def test_the_results_header_records_a_plugins_package_and_version_and_a_resume_after_an_upgrade_is_refused(tmp_path):
    site = tmp_path / "site"
    _install(site, "raising", _plugin("pass"), "raising = raising:Raising", version="1.0")
    data, out = _samples(tmp_path, 3), tmp_path / "out.jsonl"
    run = _localeval(site, "score", str(data), "-m", "raising", "-m", "id_context_recall", "-o", str(out), "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    header = json.loads(out.read_text().splitlines()[0])["run"]
    assert header["plugins"] == {"raising": {"class": "raising.Raising", "package": "raising", "version": "1.0"}}
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]))  # a run cut short, to be resumed

    (site / "raising-1.0.dist-info").rename(site / "raising-1.1.dist-info")  # the package is upgraded
    (site / "raising-1.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: raising\nVersion: 1.1\n", encoding="utf-8")
    resumed = _localeval(site, "score", str(data), "-m", "raising", "-m", "id_context_recall", "-o", str(out), "--resume", "-q", cwd=tmp_path)
    assert resumed.returncode == 2, resumed.stderr
    assert "cannot resume" in resumed.stderr and "plugins.raising.version: '1.0' then, '1.1' now" in resumed.stderr
    assert len(result_rows(out)) == 2  # nothing mixed in

    builtins = _localeval(site, "score", str(data), "-m", "id_context_recall", "-o", str(tmp_path / "b.jsonl"), "-q", cwd=tmp_path)
    assert builtins.returncode == 0 and "plugins" not in json.loads((tmp_path / "b.jsonl").read_text().splitlines()[0])["run"]


# Item 14: with -o -, standard output carries the results and nothing else.


def test_with_results_on_standard_output_a_plugins_child_process_and_c_code_write_to_standard_error(tmp_path):
    site = tmp_path / "site"
    body = (
        "subprocess.run(['echo', 'a child process line'], check=True)\n"
        "        os.write(1, b'a line on descriptor 1\\n')\n"
        "        import ctypes; ctypes.CDLL(None).printf(b'a C printf line\\n')\n"
        "        print('a print line')"
    )
    _install(site, "raising", _plugin(body, init="os.write(1, b'written while it is built\\n')"), "raising = raising:Raising")
    run = _localeval(site, "score", str(_samples(tmp_path, 3)), "-m", "raising", "-o", "-", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert [json.loads(line)["line"] for line in run.stdout.splitlines()] == [1, 2, 3]  # JSON lines and nothing else
    for said in ("a child process line", "a line on descriptor 1", "a C printf line", "a print line", "written while it is built"):
        assert said in run.stderr, said
