"""Judge backends by name: the one place a judge spec becomes a judge.

A spec is `BACKEND:TARGET`: `gguf:PATH` or `gguf:CATALOG_NAME` (llama.cpp in this
process, the default), `openai:URL` (an OpenAI-compatible server; the model name
comes from --model). A spec without a scheme is a GGUF path or catalog name.
A new backend is one module with an `open_judge(target, options)` function and
one line in BACKENDS; modules are imported only when their backend is used.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from localeval.errors import ConfigError

BACKENDS: dict[str, str] = {
    "gguf": "localeval.judge.llama",
    "openai": "localeval.judge.openai_server",
}


@dataclass(frozen=True)
class JudgeOptions:
    """What every backend may be told; each uses what applies to it and says what it cannot honour."""

    model: str | None = None  # openai: the served model's name
    n_ctx: int | None = None
    n_threads: int | None = None
    seed: int | None = None
    gpu_layers: int | None = None
    concurrency: int | None = None  # openai: requests in flight
    # A user's calibration (localeval.calibration.CalibrationFile): its tables replace the
    # catalog's for the tasks it has; its path and SHA-256 go into the judge's description.
    calibration: Any = None


def calibration_tables(catalog: Mapping[str, Mapping[str, Any]], options: JudgeOptions) -> dict[str, Mapping[str, Any]]:
    """The calibrations a judge applies: the catalog's, each replaced by the user's file's when it has one."""
    tables = dict(catalog)
    if options.calibration is not None:
        tables.update(options.calibration.tables)
    return tables


def calibration_source(options: JudgeOptions) -> dict[str, str] | None:
    return options.calibration.source() if options.calibration is not None else None


def parse_spec(model: str | None, judge_url: str | None) -> tuple[str, str | None]:
    """(backend, target) for --model and --judge-url."""
    if judge_url:
        return "openai", judge_url
    if model and ":" in model.split("/", 1)[0] and not model[1:3] == ":\\":  # "gguf:x", not "C:\\x" or a path
        scheme, _, target = model.partition(":")
        if scheme not in BACKENDS:
            raise ConfigError(f"unknown judge backend '{scheme}' in '{model}'; known: {', '.join(BACKENDS)}")
        return scheme, target
    return "gguf", model


def open_backend(model: str | None, *, judge_url: str | None = None, **settings: Any) -> Any:
    """The judge `model` and `judge_url` name; without either, $LOCALEVAL_MODEL is read here, as
    a spec like --model's (`openai:URL` works in both), before the backend is chosen."""
    from localeval.models import MODEL_ENV

    if model is None and judge_url is None:
        model = os.environ.get(MODEL_ENV) or None
    from localeval.judge.spec import MAX_CONTEXT, MIN_CONTEXT

    n_ctx = settings.get("n_ctx")
    if n_ctx is not None and not MIN_CONTEXT <= n_ctx <= MAX_CONTEXT:
        raise ConfigError(f"n_ctx must be between {MIN_CONTEXT} and {MAX_CONTEXT} tokens (no judge prompt fits in fewer), got {n_ctx}")
    scheme, target = parse_spec(model, judge_url)
    options = JudgeOptions(model=model if scheme == "openai" and judge_url else None, **settings)
    opener: Callable[[str | None, JudgeOptions], Any] = importlib.import_module(BACKENDS[scheme]).open_judge
    return opener(target, options)
