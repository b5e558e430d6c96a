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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localeval.api import Evaluation, evaluate
    from localeval.data.results import ResultRow
    from localeval.data.samples import Sample, parse_sample
    from localeval.errors import ConfigError, InputError, Interrupted, JudgeError, LocalevalError, ModelError
    from localeval.judge import Judge, load_judge
    from localeval.metrics import Score, create_metric, list_metrics
    from localeval.run.pipeline import RunOutcome, score_file
    from localeval.run.runner import score
    from localeval.run.settings import RunSettings, build_settings
    from localeval.stats.summary import Summary

__version__ = "0.5.0"

# Each public name and the module that defines it, imported on first use: `import localeval` (and
# the console script's first frame, localeval.entry) loads none of the dependencies, so a broken
# one is reported by the command as one line, and `localeval --version` starts fast.
_EXPORTS = {
    "ConfigError": "localeval.errors",
    "InputError": "localeval.errors",
    "Interrupted": "localeval.errors",
    "JudgeError": "localeval.errors",
    "LocalevalError": "localeval.errors",
    "ModelError": "localeval.errors",
    "Judge": "localeval.judge",
    "load_judge": "localeval.judge",
    "Score": "localeval.metrics",
    "create_metric": "localeval.metrics",
    "list_metrics": "localeval.metrics",
    "RunOutcome": "localeval.run.pipeline",
    "score_file": "localeval.run.pipeline",
    "ResultRow": "localeval.data.results",
    "score": "localeval.run.runner",
    "Sample": "localeval.data.samples",
    "parse_sample": "localeval.data.samples",
    "RunSettings": "localeval.run.settings",
    "build_settings": "localeval.run.settings",
    "Summary": "localeval.stats.summary",
    "Evaluation": "localeval.api",
    "evaluate": "localeval.api",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'localeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
