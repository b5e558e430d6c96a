"""Rows reach the results file as they are scored, whatever scores them: a `--verifier` run (or
a slow metric from another package) writes its rows about every second, not once 512 samples are
scored, so Ctrl-C, a CI time-out or `kill` loses seconds of work, and `--resume` goes on from
what is on disk."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

from conftest import result_rows, sigint_at_default

from localeval.metrics.base import Metric, Score
from localeval.run.runner import BATCH_SECONDS, STRING_BATCH, next_batch_size, score


def _facts(count: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "user_input": f"What is fact {i}?", "retrieved_contexts": [f"Fact {i} is that the sky is blue. It rains often."], "response": f"Fact {i} is blue. It rains."}
        for i in range(count)
    ]


def test_a_verifier_run_writes_rows_as_it_scores_them_and_resumes_from_them(tmp_path, write_jsonl):
    count = 12  # far fewer than the 512 samples a batch without a judge held: nothing was on disk before the run's end
    data = write_jsonl(_facts(count))
    out = tmp_path / "out.jsonl"
    args = [sys.executable, "-m", "localeval", "score", str(data), "-m", "faithfulness", "--verifier", "-o", str(out), "--no-timing", "-q"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_at_default)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None and (not out.exists() or out.read_text().count("\n") < 2):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # the first row is on disk
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr  # the run was still going: rows reached the file before its end
    done = result_rows(out)
    assert 1 <= len(done) < count and "--resume" in stderr
    resumed = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    rows = result_rows(out)
    assert [row["line"] for row in rows] == list(range(1, count + 1))  # every sample once, in order
    assert rows[: len(done)] == done  # the rows on disk were kept, not scored again


class _Slow(Metric[Any]):
    """A metric that takes 50 ms a sample, as the verifier may on a busy machine."""

    name = "slow_metric"
    description = "sleeps"
    required_fields = ("reference",)

    def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
        time.sleep(0.05 * len(samples))
        return [Score(1.0) for _ in samples]


def test_a_slow_metric_without_a_judge_hands_its_rows_on_about_every_second():
    rows = score(({"id": i, "reference": "r"} for i in range(60)), [_Slow()])
    started = time.perf_counter()
    next(rows)
    assert time.perf_counter() - started < 1.0  # the first row at once (a batch of one), not after 60 x 50 ms
    gaps, last = [], time.perf_counter()
    for _ in rows:
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    assert max(gaps) < 4 * BATCH_SECONDS  # never 512 samples' worth of waiting


def test_the_batch_grows_to_a_vectorised_batch_for_fast_metrics_and_stays_small_for_slow_ones():
    assert next_batch_size(1, 0.00002) == 4  # grows at most 4-fold a batch
    assert next_batch_size(256, 0.005) == STRING_BATCH  # string metrics: up to the vectorised batch
    assert next_batch_size(4, 0.2) == 16 and next_batch_size(16, 0.8) == 20  # 50 ms a sample: about one second a batch
    assert next_batch_size(20, 40.0) == 1  # a sample over a second: one at a time
    assert next_batch_size(8, 0.0) == 32  # a clock that did not move


def _small_line_limit(monkeypatch, limit: int) -> None:
    """Every reader's and the writer's line limit (64 MiB) scaled down, so a row over it costs
    kilobytes, not a 78 MB row from a 6.5 MB input line."""
    from localeval.data import jsonl as io
    from localeval.data import results
    from localeval.run import pipeline

    for module in (io, pipeline, results):
        monkeypatch.setattr(module, "MAX_LINE_BYTES", limit)


def test_a_row_longer_than_a_results_line_may_be_is_written_so_that_it_reads_back(tmp_path, monkeypatch, write_jsonl):
    """nonllm_context_recall's details take about 60 bytes per reference context, so a line of
    many tiny references (about 15 bytes each with the ids) gives a row 5 x longer: over the line
    limit it was written anyway, and `report`, `--resume` and `--junit-xml` then refused the file."""
    from click.testing import CliRunner

    from localeval.cli import cli

    limit = 64 << 10
    _small_line_limit(monkeypatch, limit)
    big = {"id": "big", "retrieved_contexts": ["a"], "reference_contexts": [f"b{i % 10}" for i in range(2000)],
           "retrieved_context_ids": ["x"], "reference_context_ids": list(range(2000)), "team": "search"}
    small = {"id": "small", "retrieved_contexts": ["a"], "reference_contexts": ["a"], "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]}
    data = write_jsonl([big, small, small | {"id": "third"}])
    assert data.stat().st_size < limit
    out, junit, page = tmp_path / "out.jsonl", tmp_path / "junit.xml", tmp_path / "r.html"
    metrics = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]
    scored = CliRunner().invoke(cli, ["score", str(data), *metrics, "-o", str(out), "--junit-xml", str(junit), "-q"])
    assert scored.exit_code == 0, scored.output
    assert all(len(line.encode()) <= limit for line in out.read_text().splitlines(keepends=True))
    rows = result_rows(out)
    assert [r["id"] for r in rows] == ["big", "small", "third"]
    assert rows[0]["scores"]["nonllm_context_recall"] == 0.0 and rows[0]["scores"]["id_context_recall"] == 0.0  # the scores stay
    assert "details left out" in rows[0]["details"]["nonllm_context_recall"]["omitted"] and "extra" not in rows[0]
    from localeval.data.results import ResultRow
    from localeval.reports import explain

    assert explain(ResultRow(**rows[0]), "nonllm_context_recall").startswith("details left out: this sample's result row was")  # every report says why
    assert junit.read_text().count("<testcase ") == 6  # --junit-xml read every row back
    report = CliRunner().invoke(cli, ["report", str(out), "-o", str(page)])
    assert report.exit_code == 0, report.output
    # a resume reads the file back; cut its last row off first, so there is something left to do
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]))
    resumed = CliRunner().invoke(cli, ["score", str(data), *metrics, "-o", str(out), "--resume", "-q"])
    assert resumed.exit_code == 0, resumed.output
    assert [r["id"] for r in result_rows(out)] == ["big", "small", "third"]
