"""training/recalibrate.py: a refit of one task (`--task relevance`, after a relevance tower) copies
the weights and the other task's calibration byte for byte, and refuses a task with no rows.

The real shipped verifier scores the handful of validation rows below (the numpy runtime users run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.verifier import Verifier, shipped_path
from localeval.verifier.tensors import read_tensors

SCRIPT = Path(__file__).resolve().parents[1] / "training" / "recalibrate.py"
CONTEXT = "The tower is in Paris. It was built by Gustave Eiffel's company in 1889. Paris has many bridges."
ROWS = [
    {"task": "relevance", "a": "Who built the tower?", "b": "It was built by Gustave Eiffel's company in 1889.", "c": CONTEXT, "label": 1},
    {"task": "relevance", "a": "Who built the tower?", "b": "Paris has many bridges.", "c": CONTEXT, "label": 0},
    {"task": "relevance", "a": "Where is the tower?", "b": "The tower is in Paris.", "c": CONTEXT, "label": 1},
    {"task": "relevance", "a": "Where is the tower?", "b": "It was built by Gustave Eiffel's company in 1889.", "c": CONTEXT, "label": 0},
    {"task": "attribution", "a": "The tower was built in 1889.", "b": CONTEXT, "c": "", "label": 1},
    {"task": "attribution", "a": "The tower was built in 1950.", "b": CONTEXT, "c": "", "label": 0},
]


def _rows_file(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({**row, "source": f"{row['task']}_toy", "split": "validation"}) + "\n" for row in rows), encoding="utf-8")
    return path


def _recalibrate(tmp_path: Path, rows: Path, *task: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--file", str(shipped_path()), "--rows", str(rows), "--out", str(tmp_path / "out.safetensors"),
                           *[a for t in task for a in ("--task", t)]], capture_output=True, text=True, timeout=600)


def test_one_task_is_refitted_and_the_weights_and_the_other_task_are_copied(tmp_path: Path) -> None:
    done = _recalibrate(tmp_path, _rows_file(tmp_path, ROWS), "relevance")
    assert done.returncode == 0, done.stderr
    before_tensors, before = read_tensors(shipped_path().read_bytes())
    written = (tmp_path / "out.safetensors").read_bytes()
    after_tensors, after = read_tensors(written)
    assert set(after_tensors) == set(before_tensors) and all((after_tensors[k] == before_tensors[k]).all() for k in before_tensors)
    old, new = json.loads(before["calibration"]), json.loads(after["calibration"])
    assert new["attribution"] == old["attribution"]
    assert new["relevance"] != old["relevance"] and new["relevance"]["fitted_on"].startswith("4 validation rows")
    validation = json.loads(after["validation"])
    assert validation["relevance_toy"]["rows"] == 4 and "attribution_toy" not in validation
    assert set(json.loads(before["validation"])) <= set(validation)  # the other sources' figures are kept
    Verifier("out.safetensors", written)


def test_a_task_without_validation_rows_is_refused_by_name(tmp_path: Path) -> None:
    done = _recalibrate(tmp_path, _rows_file(tmp_path, [r for r in ROWS if r["task"] == "relevance"]), "attribution")
    assert done.returncode == 2 and "no validation rows of task 'attribution'" in done.stderr and "rows.jsonl" in done.stderr
    assert not (tmp_path / "out.safetensors").exists()


@pytest.mark.parametrize("task", [(), ("relevance", "attribution")])
def test_without_a_task_or_with_both_every_task_is_refitted(tmp_path: Path, task: tuple[str, ...]) -> None:
    done = _recalibrate(tmp_path, _rows_file(tmp_path, ROWS), *task)
    assert done.returncode == 0, done.stderr
    metadata = read_tensors((tmp_path / "out.safetensors").read_bytes())[1]
    assert all("recalibrate.py" in json.loads(metadata["calibration"])[t]["fitted_on"] for t in ("relevance", "attribution"))
    assert set(json.loads(metadata["validation"])) == {"relevance_toy", "attribution_toy"}  # a whole refit describes its own rows only
