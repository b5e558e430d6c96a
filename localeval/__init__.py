"""localeval: offline RAG retrieval metrics, scored by a local GGUF judge.

The public API; importing it loads no model and does no work.

    from localeval import evaluate
    run = evaluate([{"retrieved_context_ids": [1, 2], "reference_context_ids": [2, 3]}], ["id_context_recall"])
    run.summary["metrics"]["id_context_recall"]["mean"]  # 0.5

    from localeval import RunSettings, score_file
    outcome = score_file(RunSettings(input="data.jsonl", output="results.jsonl", metrics=["id_context_recall"]))
    outcome.exit_code, outcome.summary["metrics"]

    from localeval import compare
    result = compare("base.jsonl", "candidate.jsonl", max_drop={"context_recall": 0.02})
    result.metrics["context_recall"].difference.ci95, result.exit_code
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.5.0"

# The public names, each under the module that defines it: the one list (__all__ is made from it).
# Each is imported on first use: `import localeval` (and the console script's first frame,
# localeval.entry) loads none of the dependencies, so a broken one is reported by the command as
# one line, and `localeval --version` starts fast. One entry point scores samples in memory
# (`evaluate`), one scores a file as `localeval score` does (`score_file`), and one compares two
# results files as `localeval compare` does (`compare`).
_EXPORTS = {
    "localeval.api": ("Evaluation", "evaluate"),
    "localeval.comparison.compare": ("Comparison", "compare"),
    "localeval.run.pipeline": ("RunOutcome", "score_file"),
    "localeval.run.settings": ("RunSettings", "build_settings"),
    "localeval.errors": ("ConfigError", "InputError", "Interrupted", "JudgeError", "LocalevalError", "ModelError"),
    "localeval.judge": ("Judge", "load_judge"),
    "localeval.metrics": ("Score", "create_metric", "list_metrics"),
    "localeval.data.results": ("ResultRow",),
    "localeval.data.samples": ("Sample", "parse_sample"),
    "localeval.stats.summary": ("Summary",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'localeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
