"""`evaluate`: score samples in memory and summarise them (the public API's one function of its own)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from localeval.judge import Judge
from localeval.run.runner import MetricLike, SampleLike, resolve_metrics, score
from localeval.stats.summary import Summary


@dataclass
class Evaluation:
    """Per-sample results (results-file dicts, in input order) and the summary."""

    results: list[dict[str, Any]]
    summary: dict[str, Any]


def evaluate(
    samples: Iterable[SampleLike],
    metrics: Iterable[MetricLike],
    *,
    judge: Judge | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> Evaluation:
    """Score samples in memory and summarise them: the public entry point for samples, as
    `score_file` (what `localeval score` does, from a file to a results file) is for files. Its
    streaming form, result rows as each sample is scored, is `localeval.run.runner.score`."""
    selected = resolve_metrics(metrics)
    summary = Summary([m.name for m in selected], thresholds)
    results = []
    for row in score(samples, selected, judge=judge):
        summary.add(row)
        results.append(row.to_dict())
    return Evaluation(results, summary.figures().to_json_dict())
