"""Helpers for users' own tests: gate a test on a metric, load the judge once per test run,
and a scripted judge that needs no model.

    from localeval.testing import assert_metric, shared_judge

    def test_retrieval_recall():
        assert_metric(samples, "context_recall", threshold=0.8, judge=shared_judge())

A failure lists the failing samples with their scores and the reasons.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping

from localeval import evaluate
from localeval.judge import Judge, load_judge
from localeval.metrics import create_metric
from localeval.reports import explain, score_text
from localeval.results import Outcome, ResultRow
from localeval.runner import SampleLike


@lru_cache(maxsize=4)
def shared_judge(model: str | None = None, n_ctx: int | None = None, n_threads: int | None = None) -> Judge:
    """The judge, loaded on first use and reused by every later call in the process
    (so a test session loads the model once)."""
    return load_judge(model, n_ctx=n_ctx, n_threads=n_threads)


def assert_metric(
    samples: Iterable[SampleLike],
    metric: str,
    threshold: float,
    *,
    judge: Judge | None = None,
    options: Mapping[str, Any] | None = None,
    allow_nan: bool = True,
) -> list[dict[str, Any]]:
    """Assert every sample scores >= threshold on `metric`; return the results.

    A sample that could not be scored fails; a NaN score (metric undefined for the
    sample) fails only with allow_nan=False. The judge metrics need `judge`
    (for example `shared_judge()`).
    """
    built = create_metric(metric, options)
    if built.needs_judge and judge is None:
        judge = shared_judge()
    run = evaluate(samples, [built], judge=judge)
    failing = []
    for result in run.results:
        row = ResultRow.model_construct(**result)
        outcome = row.outcome(metric, threshold)
        if outcome in (Outcome.FAIL, Outcome.ERROR) or (outcome is Outcome.NAN and not allow_nan):
            failing.append(f"  {row.id} (line {row.line}): {metric} = {score_text(row, metric)}: {explain(row, metric)}")
    if failing:
        header = f"{len(failing)} of {len(run.results)} samples below {metric} >= {threshold}:"
        raise AssertionError("\n".join([header, *failing]))
    return run.results
