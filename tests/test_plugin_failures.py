"""A metric from another package that fails, in any way, fails its samples or its run with its
name on it, and never looks like the user's Ctrl-C or a failed gate: whatever it raises
(asyncio.CancelledError, a KeyboardInterrupt of its own), whatever it writes to standard output
(a child process, C code), whichever version of it wrote a results file.

Plugins are installed for real (a module and its .dist-info on a subprocess's path, as pip lays
them out) and the CLI runs in that subprocess."""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import install_plugin, plugin_env, result_rows, run_with_plugins, sigint_at_default

from localeval.metrics.base import Metric, Score
from localeval.run.runner import score


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
    install_plugin(site, "raising", _plugin("raise asyncio.CancelledError('the event loop went away')"), "raising = raising:Raising")
    data, out = _samples(tmp_path, 3), tmp_path / "out.jsonl"
    run = run_with_plugins(site, "score", str(data), "-m", "raising", "-m", "id_context_recall", "-o", str(out), "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr  # neither exit 1 (a gate) nor a traceback
    assert "Traceback" not in run.stderr
    rows = result_rows(out)
    assert len(rows) == 3 and all("metric 'raising' (raising.Raising) raised CancelledError: the event loop went away" in r["errors"]["raising"] for r in rows)
    assert all(r["scores"]["id_context_recall"] == 1.0 for r in rows)  # the other metric is scored
    gated = run_with_plugins(site, "score", str(data), "-m", "raising", "--fail-on-error", "-q", cwd=tmp_path)
    assert gated.returncode == 1 and "3 of 3 samples could not be scored by raising" in gated.stderr


def test_a_plugins_own_keyboard_interrupt_is_its_failure_not_the_users_ctrl_c(tmp_path):
    site = tmp_path / "site"
    install_plugin(site, "raising", _plugin("raise KeyboardInterrupt('raised by the plugin')"), "raising = raising:Raising")
    data, out = _samples(tmp_path, 3), tmp_path / "out.jsonl"
    run = run_with_plugins(site, "score", str(data), "-m", "raising", "-o", str(out), "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr  # not 130: the run finished, so no resume repeats it
    assert "interrupted" not in run.stderr and "--resume" not in run.stderr
    rows = result_rows(out)
    assert len(rows) == 3 and all("raised KeyboardInterrupt of its own, with no Ctrl-C behind it" in r["errors"]["raising"] for r in rows)


def _sigint_ignored() -> None:
    """A child's preexec_fn: SIGINT ignored, as a shell's background job or `nohup` starts it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sigint", [sigint_at_default, _sigint_ignored], ids=["default", "ignored"])
def test_a_plugins_own_keyboard_interrupt_is_its_failure_whatever_sigint_is_set_to(tmp_path, sigint):
    """With SIGINT ignored no Ctrl-C can raise KeyboardInterrupt: one is always the plugin's."""
    site = tmp_path / "site"
    install_plugin(site, "raising", _plugin("raise KeyboardInterrupt('raised by the plugin')"), "raising = raising:Raising")
    data, out = _samples(tmp_path, 3), tmp_path / "out.jsonl"
    run = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "raising", "-o", str(out), "-q"],
                         capture_output=True, text=True, env=plugin_env(site), cwd=tmp_path, timeout=300, preexec_fn=sigint)
    assert run.returncode == 0, run.stderr
    assert len(result_rows(out)) == 3


def test_a_plugin_that_swallows_the_users_ctrl_c_still_stops_the_run(tmp_path):
    site = tmp_path / "site"
    body = "try:\n            time.sleep(0.2 * len(samples))\n        except KeyboardInterrupt:\n            raise RuntimeError('swallowed the Ctrl-C')"
    install_plugin(site, "raising", _plugin(body), "raising = raising:Raising")
    data, out = _samples(tmp_path, 200), tmp_path / "out.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "localeval", "score", str(data), "-m", "raising", "-o", str(out), "-q"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=plugin_env(site), cwd=tmp_path, preexec_fn=sigint_at_default)
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
    install_plugin(site, "raising", _plugin("pass", init="raise asyncio.CancelledError('no loop')"), "raising = raising:Raising")
    run = run_with_plugins(site, "score", str(_samples(tmp_path, 1)), "-m", "raising", "-q", cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert "metric 'raising' (raising.Raising) could not be built: CancelledError: no loop" in run.stderr and "Traceback" not in run.stderr


# Item 10: the plugin's package and version in the results header.


def test_the_results_header_records_a_plugins_package_and_version_and_a_resume_after_an_upgrade_is_refused(tmp_path):
    site = tmp_path / "site"
    install_plugin(site, "raising", _plugin("pass"), "raising = raising:Raising", version="1.0")
    data, out = _samples(tmp_path, 3), tmp_path / "out.jsonl"
    run = run_with_plugins(site, "score", str(data), "-m", "raising", "-m", "id_context_recall", "-o", str(out), "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    header = json.loads(out.read_text().splitlines()[0])["run"]
    assert header["plugins"] == {"raising": {"class": "raising.Raising", "package": "raising", "version": "1.0"}}
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]))  # a run cut short, to be resumed

    (site / "raising-1.0.dist-info").rename(site / "raising-1.1.dist-info")  # the package is upgraded
    (site / "raising-1.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: raising\nVersion: 1.1\n", encoding="utf-8")
    resumed = run_with_plugins(site, "score", str(data), "-m", "raising", "-m", "id_context_recall", "-o", str(out), "--resume", "-q", cwd=tmp_path)
    assert resumed.returncode == 2, resumed.stderr
    assert "cannot resume" in resumed.stderr and "plugins.raising.version: '1.0' then, '1.1' now" in resumed.stderr
    assert len(result_rows(out)) == 2  # nothing mixed in

    builtins = run_with_plugins(site, "score", str(data), "-m", "id_context_recall", "-o", str(tmp_path / "b.jsonl"), "-q", cwd=tmp_path)
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
    install_plugin(site, "raising", _plugin(body, init="os.write(1, b'written while it is built\\n')"), "raising = raising:Raising")
    run = run_with_plugins(site, "score", str(_samples(tmp_path, 3)), "-m", "raising", "-o", "-", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert [json.loads(line)["line"] for line in run.stdout.splitlines()] == [1, 2, 3]  # JSON lines and nothing else
    for said in ("a child process line", "a line on descriptor 1", "a C printf line", "a print line", "written while it is built"):
        assert said in run.stderr, said


class _ById(Metric[Any]):
    """A plugin-like metric whose Score for each sample is looked up by the sample's id."""

    name = "by_id"
    description = "returns what the test says, by sample id"
    required_fields = ("reference",)
    answers: dict[int, Any] = {}

    def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
        return [self.answers[s.id] for s in samples]


def _run(answers: dict[int, Any], metric: type[_ById] = _ById) -> list[Any]:
    cls = type("Plugin", (metric,), {"answers": answers, "__module__": "tests_plugin"})
    samples = [{"id": i, "reference": "r", "retrieved_context_ids": [1], "reference_context_ids": [1]} for i in answers]
    return list(score(samples, [cls(), "id_context_recall"]))


def test_a_plugins_bad_scores_are_that_samples_error_naming_the_plugin_and_nothing_else():
    rows = _run({
        0: Score(5.0), 1: Score(-0.5), 2: Score(True), 3: Score(math.inf), 4: Score(-math.inf), 5: Score("0.5"),  # type: ignore[arg-type]
        6: Score(0.5, details={"seen": {1, 2}}), 7: Score(0.5, details={1: "x"}),  # type: ignore[dict-item]
        8: 0.5, 9: Score(None),
        10: Score(np.float32(0.25)), 11: Score(np.int64(1)), 12: Score(math.nan), 13: Score(0.75, details={"words": 3}),  # type: ignore[arg-type]
    })
    for row in rows[:10]:
        assert row.scores["by_id"] is None, row
        assert "metric 'by_id' (tests_plugin.Plugin)" in row.errors["by_id"], row.errors
        assert row.scores["id_context_recall"] == 1.0 and "id_context_recall" not in row.errors  # the other metric is unaffected
    assert "outside [0, 1]" in rows[0].errors["by_id"] and "outside [0, 1]" in rows[3].errors["by_id"]
    assert "not a number" in rows[2].errors["by_id"] and "not a number" in rows[5].errors["by_id"]
    assert "JSON" in rows[6].errors["by_id"] and "not a Score" in rows[8].errors["by_id"] and "no error" in rows[9].errors["by_id"]
    # numpy numbers in range are converted to float (friendly, and exact); NaN stays "undefined", as for the built-ins
    assert rows[10].scores["by_id"] == 0.25 and type(rows[10].scores["by_id"]) is float and rows[11].scores["by_id"] == 1.0
    assert math.isnan(rows[12].scores["by_id"]) and "by_id" not in rows[12].errors
    assert rows[13].scores["by_id"] == 0.75 and rows[13].details["by_id"] == {"words": 3}
    for row in rows:  # every row can be written and read back
        json.loads(row.to_line())


def test_a_score_batch_with_too_few_or_too_many_scores_fails_every_sample_of_its_batch():
    class Short(_ById):
        def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
            return [Score(1.0)] * (len(samples) - 1)

    class Long(_ById):
        def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
            return [Score(1.0)] * (len(samples) + 1)

    for metric, off_by in ((Short, -1), (Long, 1)):  # batches are sized by time (localeval.run.runner): whatever their size
        rows = _run({0: None, 1: None, 2: None}, metric)
        assert [r.scores["by_id"] for r in rows] == [None, None, None]
        said = [re.search(r"returned (\d+) scores for a batch of (\d+) samples; every sample of the batch is left unscored", r.errors["by_id"]) for r in rows]
        assert all(found and int(found[1]) == int(found[2]) + off_by for found in said), rows
        assert all(r.scores["id_context_recall"] == 1.0 for r in rows)


def test_a_plugin_that_raises_fails_its_samples_not_the_run():
    class Raises(_ById):
        def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
            raise SystemExit(0)

    rows = _run({0: None, 1: None}, Raises)
    assert all("raised SystemExit" in r.errors["by_id"] and r.scores["id_context_recall"] == 1.0 for r in rows)


BAD_PLUGIN = '''
import math
print("plugin imported")  # must not reach standard output
from localeval.metrics.base import Metric, Score


class Bad(Metric):
    name = "bad_values"
    description = "Returns a bad value for some samples."
    required_fields = ("reference",)

    def __init__(self, params=None):
        print("building the metric")  # nor this
        super().__init__(params)

    def score_batch(self, samples, judge):
        print("scoring a batch")  # must not reach standard output either
        values = {"five": 5.0, "true": True, "inf": math.inf, "text": "0.5", "ok": 0.75}
        return [Score(value=values[s.reference]) for s in samples]
'''


def test_an_installed_plugins_bad_values_never_pass_a_gate_nor_break_the_results(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site, "bad_plugin", BAD_PLUGIN, "bad_values = bad_plugin:Bad")
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps({"id": i, "reference": r}) + "\n" for i, r in enumerate(["five", "true", "inf", "text", "ok"])), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    run = run_with_plugins(site, "score", str(data), "-m", "bad_values", "-t", "bad_values=0.5", "--min-mean", "bad_values=0.5", "-o", str(out),
                     "--junit-xml", str(tmp_path / "junit.xml"), "--summary-json", str(tmp_path / "summary.json"), "-q", cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # four samples could not be scored: they fail the gate
    rows = result_rows(out)
    assert [r["scores"]["bad_values"] for r in rows] == [None, None, None, None, 0.75]
    assert all("bad_plugin.Bad" in r["errors"]["bad_values"] for r in rows[:4])
    summary = json.loads((tmp_path / "summary.json").read_text())["metrics"]["bad_values"]
    assert summary["errors"] == 4 and summary["mean"] == 0.75
    report = run_with_plugins(site, "report", str(out), "-o", str(tmp_path / "report.html"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    resumed = run_with_plugins(site, "score", str(data), "-m", "bad_values", "-o", str(out), "--resume", "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr

    piped = run_with_plugins(site, "score", str(data), "-m", "bad_values", "-o", "-", "-q", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert [json.loads(line)["line"] for line in piped.stdout.splitlines()] == [1, 2, 3, 4, 5]  # JSON lines and nothing else
    assert "plugin imported" in piped.stderr and "building the metric" in piped.stderr and "scoring a batch" in piped.stderr


def test_plugins_load_only_when_a_run_names_one_and_a_sys_exit_at_import_decides_nothing(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "imported"
    install_plugin(site, "exits", "import sys\nsys.exit(0)\n", "exits = exits:Nope")
    install_plugin(site, "slow", f"open({str(marker)!r}, 'w').close()\nfrom localeval.metrics.id_recall import IdContextRecall as Slow\n", "slow = slow:Slow")
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [2]}) + "\n", encoding="utf-8")

    failing = run_with_plugins(site, "score", str(data), "-m", "id_context_recall", "-t", "id_context_recall=1.0", "-o", str(tmp_path / "out.jsonl"), cwd=tmp_path)
    assert failing.returncode == 1, failing.stderr  # the gate decides, not the plugin's sys.exit(0)
    assert len(result_rows(tmp_path / "out.jsonl")) == 1
    assert run_with_plugins(site, "--version", cwd=tmp_path).returncode == 0
    assert not marker.exists()  # neither run imported a plugin

    named = run_with_plugins(site, "score", str(data), "-m", "exits", cwd=tmp_path)
    assert named.returncode == 2 and "could not be loaded" in named.stderr and "SystemExit" in named.stderr, named.stderr
    listed = run_with_plugins(site, "metrics", cwd=tmp_path)
    assert listed.returncode == 0 and "metric 'exits' from an installed package could not be loaded" in listed.stderr
    assert marker.exists()  # listing loads them all


def test_a_plugin_under_a_built_in_name_is_named_on_every_run_and_the_built_in_wins(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site, "shadow", "from localeval.metrics.id_recall import IdContextRecall as Shadow\n", "id_context_recall = shadow:Shadow")
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n", encoding="utf-8")
    run = run_with_plugins(site, "score", str(data), "-m", "id_context_recall", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "shadow:Shadow declares the metric 'id_context_recall', a built-in metric's name: the built-in is used" in run.stderr


def test_a_plugin_whose_explain_raises_leaves_the_report_standing():
    from localeval.data.results import ResultRow
    from localeval.metrics import REGISTRY, register_metric
    from localeval.reports import explain

    class Unexplained(_ById):
        name = "unexplained"

        @classmethod
        def explain(cls, details):  # type: ignore[no-untyped-def]
            raise KeyError("words")

    register_metric(Unexplained)
    try:
        text = explain(ResultRow(line=1, scores={"unexplained": 0.5}, details={"unexplained": {"words": 3}}), "unexplained")
    finally:
        del REGISTRY["unexplained"]
    assert "explain raised KeyError" in text
