"""The hand-written plain cases (benchmarks/data/plain_cases.jsonl) go through the benchmark's
own runner with the real small model: the plumbing CI can afford. Whether the default judge
gets them right is a benchmark figure (`python benchmarks/accuracy.py --task plain`, README),
not a unit test: a 135M model is no judge."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_plain_cases_are_well_formed():
    rows = [json.loads(line) for line in (ROOT / "benchmarks" / "data" / "plain_cases.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) >= 40 and len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        if row["kind"] == "relevance":
            assert all(any(s in c for c in row["retrieved_contexts"]) for s in row["required"]), row["id"]
        else:
            assert row["label"] in (0, 1) and row["statement"], row["id"]


def test_the_plain_cases_run_through_the_benchmark(small_model_path, tmp_path):
    report = tmp_path / "report.json"
    finished = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "accuracy.py"), "--task", "plain", "--model", str(small_model_path), "--threads", "1", "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    plain = json.loads(report.read_text())["plain"]
    assert plain["relevance"]["n"] == 24 and plain["attribution"]["n"] == 20
