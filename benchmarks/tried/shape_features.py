"""Can features of the input's shape let one statement calibration serve every kind of text?

Tried on 2026-11-25 and not shipped (README, "Judge accuracy"). The four statement sets
differ in shape: a VitaminC or FEVER pair is one short evidence sentence or two, a SciFact
abstract a few hundred tokens, a WiCE page or a QAGS article many chunks. A calibration that
knows the shape could move its boundary per kind of text the way a per-set threshold does,
from what a run can see. Added to the shipped combination (judge, best_coverage), refitted
and 10-fold cross-validated exactly as benchmarks/accuracy.py fits it, from the cached answers
(no model; run accuracy.py with the same --limit first):

- ctx_len: log(1 + the number of context sentences);
- stmt_len: log(1 + the number of the statement's words);
- judge_x_ctx, cov_x_ctx: the judge's log-odds and the best sentence's coverage times ctx_len.

    python benchmarks/tried/shape_features.py --limit attribution=150,recall=40,vitaminc=240,fever=120
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import accuracy  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.metrics.judging import context_sentences  # noqa: E402
from localeval.models import DEFAULT_MODEL, resolve_model  # noqa: E402

VARIANTS = (
    ("judge", "best_coverage"),
    ("judge", "best_coverage", "ctx_len"),
    ("judge", "best_coverage", "stmt_len"),
    ("judge", "best_coverage", "ctx_len", "stmt_len"),
    ("judge", "best_coverage", "ctx_len", "judge_x_ctx"),
    ("judge", "best_coverage", "ctx_len", "judge_x_ctx", "cov_x_ctx"),
)


class WithShape:
    """context_recall whose verdict features also hold the shape features."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    def score_statements(self, sample: Any, statements: Sequence[str], judge: Any) -> Any:
        score = self.metric.score_statements(sample, statements, judge)
        length = math.log1p(len(context_sentences(sample)))
        for verdict in score.details["statements"]:
            features = verdict["features"]
            features.update(
                ctx_len=length,
                stmt_len=math.log1p(len(verdict["statement"].split())),
                judge_x_ctx=features["judge"] * length,
                cov_x_ctx=features["best_coverage"] * length,
            )
        return score


def _no_model() -> None:
    raise SystemExit("a judge answer is not cached: run benchmarks/accuracy.py with the same --limit first")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={"attribution": 150, "recall": 40, "vitaminc": 240, "fever": 120})
    args = parser.parse_args()
    plain_metric = accuracy.recall_metric
    accuracy.recall_metric = lambda: WithShape(plain_metric())  # type: ignore[assignment]
    path, _ = resolve_model(DEFAULT_MODEL)
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", _no_model, {})
    tasks = {task: accuracy.statement_rows(judge, task, limit, 0) for task, limit in args.limit.items()}
    for combination in VARIANTS:
        figures = accuracy.attribution_report(tasks, None, list(combination))["combination"]
        cells = " | ".join(f"{task} {figures[task]['balanced_accuracy']:.3f} / {figures[task]['auc']:.3f}" for task in tasks)
        print(f"{' + '.join(combination):52} {cells}", flush=True)


if __name__ == "__main__":
    main()
