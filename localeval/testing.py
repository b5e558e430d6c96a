"""pytest helpers: gate a test on a metric, and load the judge once per test run.

    from localeval.testing import assert_metric, shared_judge

    def test_retrieval_recall():
        assert_metric(samples, "context_recall", threshold=0.8, judge=shared_judge())

A failure lists the failing samples with their scores and the reasons.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping

from localeval import evaluate
from localeval.ci_report import verdict
from localeval.explain import explain
from localeval.judge import Judge, load_judge
from localeval.metrics import create_metric
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
    for row in run.results:
        state = verdict(row, metric, threshold)
        if state in ("fail", "error") or (state == "nan" and not allow_nan):
            score = row["scores"].get(metric)
            shown = "null" if score is None else f"{score:.3f}"
            failing.append(f"  {row['id']} (line {row['line']}): {metric} = {shown}: {explain(row, metric)}")
    if failing:
        header = f"{len(failing)} of {len(run.results)} samples below {metric} >= {threshold}:"
        raise AssertionError("\n".join([header, *failing]))
    return run.results
