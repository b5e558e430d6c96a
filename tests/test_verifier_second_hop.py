"""lab/verifier_second_hop.py's choice of which second reads count: only each context's best unit,
or only the best unit of the context they favour most (read beside the first hop, a whole bridged
paragraph scores high, and only one of its sentences is the second hop)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lab"))

import verifier_second_hop  # noqa: E402


def test_each_context_keeps_its_best_second_read_and_one_keeps_the_best_of_all() -> None:
    first = [(2.0, 0), (1.0, 0), (0.5, 1), (0.1, 1), (3.0, 2)]  # (logit, context) per unit
    second = [None, 1.5, 0.7, 2.5, None]  # unit 0 and 4 had no second read
    assert verifier_second_hop.best_of_context(first, second, "each") == [None, 1.5, None, 2.5, None]
    assert verifier_second_hop.best_of_context(first, second, "one") == [None, None, None, 2.5, None]
    assert verifier_second_hop.best_of_context(first, [None] * 5, "one") == [None] * 5
