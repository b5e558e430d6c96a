"""What a run needs to be reproduced: versions, metric options, the judge's weights and settings."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any, Sequence

from localeval.judge import Judge
from localeval.metrics import Metric

PACKAGES = ("localeval", "rapidfuzz", "pysbd", "pydantic", "numpy", "llama_cpp_python")


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def describe_run(metrics: Sequence[Metric], judge: Judge | None) -> dict[str, Any]:
    return {
        "metrics": {m.name: m.describe_params() for m in metrics},
        "judge": judge.describe() if judge is not None else None,
        "python": platform.python_version(),
        "packages": {p: v for p in PACKAGES if (v := _version(p))},
    }
