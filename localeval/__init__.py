"""localeval: offline RAG retrieval metrics, scored by a local GGUF judge.

The public API; importing it loads no model and does no work.

    from localeval import evaluate
    run = evaluate([{"retrieved_context_ids": [1, 2], "reference_context_ids": [2, 3]}], ["id_context_recall"])
    run.summary["metrics"]["id_context_recall"]["mean"]  # 0.5

    from localeval import RunSettings, score_file
    outcome = score_file(RunSettings(input="data.jsonl", output="results.jsonl", metrics=["id_context_recall"]))
    outcome.exit_code, outcome.summary["metrics"]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from localeval.errors import ConfigError, InputError, Interrupted, JudgeError, LocalevalError, ModelError
from localeval.judge import Judge, load_judge
from localeval.metrics import Score, create_metric, list_metrics
from localeval.pipeline import RunOutcome, score_file
from localeval.results import ResultRow
from localeval.runner import MetricLike, SampleLike, resolve_metrics, score
from localeval.samples import Sample, parse_sample
from localeval.settings import RunSettings, build_settings
from localeval.summary import Summary

__version__ = "0.2.0"


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
    """Score samples in memory and summarise them; `score` is the streaming form, and
    `score_file` does what `localeval score` does, from a file to a results file."""
    selected = resolve_metrics(metrics)
    summary = Summary([m.name for m in selected], thresholds)
    results = []
    for row in score(samples, selected, judge=judge):
        summary.add(row)
        results.append(row.to_dict())
    return Evaluation(results, summary.to_dict())


__all__ = [
    "ConfigError",
    "Evaluation",
    "InputError",
    "Interrupted",
    "Judge",
    "JudgeError",
    "LocalevalError",
    "ModelError",
    "ResultRow",
    "RunOutcome",
    "RunSettings",
    "Sample",
    "Score",
    "Summary",
    "build_settings",
    "create_metric",
    "evaluate",
    "list_metrics",
    "load_judge",
    "parse_sample",
    "score",
    "score_file",
]
