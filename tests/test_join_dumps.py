"""lab/join_dumps.py: a second grader's feature is put beside the first's only on the same rows."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lab"))

import join_dumps  # noqa: E402


def row(label: int, coverage: float, judge: float) -> dict[str, object]:
    return {"label": label, "source": "scifact", "coverage": coverage, "best_coverage": coverage, "judge": judge}


def test_the_second_judge_is_added_row_by_row() -> None:
    rows = join_dumps.joined([row(1, 0.5, 2.0), row(0, 0.1, -1.0)], [row(1, 0.5, 0.7), row(0, 0.1, -3.0)], "judge", "judge_small")
    assert [(r["judge"], r["judge_small"]) for r in rows] == [(2.0, 0.7), (-1.0, -3.0)]


def test_dumps_of_other_rows_are_refused() -> None:
    with pytest.raises(SystemExit, match="row 2: label, coverage, best_coverage differ"):
        join_dumps.joined([row(1, 0.5, 2.0), row(0, 0.1, -1.0)], [row(1, 0.5, 0.7), row(1, 0.2, -3.0)], "judge", "judge_small")
    with pytest.raises(SystemExit, match="1 and 2 rows"):
        join_dumps.joined([row(1, 0.5, 2.0)], [row(1, 0.5, 0.7), row(0, 0.1, -3.0)], "judge", "judge_small")
