"""Judge backends by name: the one place a judge spec becomes a judge.

A model is `BACKEND:TARGET`: `gguf:PATH` or `gguf:CATALOG_NAME` (llama.cpp in this
process, the default), `openai:URL` (an OpenAI-compatible server; the model name
comes from --model). A model without a scheme is a GGUF path or catalog name.
A new backend is one module with an `Options` model (its own settings, given as
`--judge-option KEY=VALUE`) and an `open_judge(target, spec, options, calibration)`
function, and one line in BACKENDS; modules are imported only when their backend is used.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from localeval.errors import ConfigError
from localeval.judge.spec import JudgeSpec, speed_only

if TYPE_CHECKING:
    from localeval.judge import Judge

BACKENDS: dict[str, str] = {
    "gguf": "localeval.judge.llama",
    "openai": "localeval.judge.openai_server",
}


def calibration_tables(catalog: Mapping[str, Mapping[str, Any]], calibration: Any) -> dict[str, Mapping[str, Any]]:
    """The calibrations a judge applies: the catalog's, each replaced by the user's file's
    (a localeval.calibration.combination.CalibrationFile, or None) when it has one."""
    tables = dict(catalog)
    if calibration is not None:
        tables.update(calibration.tables)
    return tables


def calibration_source(calibration: Any) -> dict[str, str] | None:
    """The user's calibration file's path and SHA-256, for the judge's description."""
    return calibration.source() if calibration is not None else None


def parse_model(model: str | None, judge_url: str | None) -> tuple[str, str | None]:
    """(backend, target) for --model and --judge-url."""
    if judge_url:
        return "openai", judge_url
    if model and ":" in model.split("/", 1)[0] and not model[1:3] == ":\\":  # "gguf:x", not "C:\\x" or a path
        scheme, _, target = model.partition(":")
        if scheme not in BACKENDS:
            raise ConfigError(f"unknown judge backend '{scheme}' in '{model}'; known: {', '.join(BACKENDS)}")
        return scheme, target
    return "gguf", model


def backend_options_model(backend: str) -> type[BaseModel]:
    """The options model of a backend (its module's `Options`)."""
    options: type[BaseModel] = importlib.import_module(BACKENDS[backend]).Options
    return options


def list_backend_options() -> dict[str, dict[str, dict[str, Any]]]:
    """Each backend's own options with their default, help and whether they are part of a run's
    identity, for `localeval models options` and the docs."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for backend in BACKENDS:
        model = backend_options_model(backend)
        speed = speed_only(model)
        found[backend] = {name: {"default": info.default, "description": info.description or "", "identity": name not in speed} for name, info in model.model_fields.items()}
    return found


def checked_options(backend: str, values: Mapping[str, Any]) -> BaseModel:
    model = backend_options_model(backend)
    unknown = sorted(set(values) - set(model.model_fields))
    if unknown:
        known = ", ".join(model.model_fields) or "none"
        raise ConfigError(f"judge option '{unknown[0]}': the {backend} backend has no such option (its options: {known})")
    try:
        return model.model_validate(dict(values))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"judge option '{'.'.join(str(p) for p in first['loc'])}' for the {backend} backend: {first['msg']}") from None


def open_backend(spec: JudgeSpec, calibration: Any = None) -> Judge:
    """The judge `spec` names; without a model or URL, $LOCALEVAL_MODEL is read here, as a
    model like --model's (`openai:URL` works in both), before the backend is chosen. The spec's
    backend options are validated by that backend's options model first.

    Behind the verdict cache unless `spec.cache` is False (localeval.judge.cache): a backend
    with a `stand_in` function is loaded only on the first answer the cache lacks; another one
    is opened now, and its description is its identity."""
    from localeval.judge.cache import JudgeStandIn, answer_identity, cache_path, cached

    backend, target, options = checked_spec(spec)
    module = importlib.import_module(BACKENDS[backend])
    path = cache_path(spec.cache)
    if path is None:
        judge: Judge = module.open_judge(target, spec, options, calibration)
        return judge
    if hasattr(module, "stand_in"):
        stand_in: JudgeStandIn = module.stand_in(target, spec, options, calibration)
    else:
        opened: Judge = module.open_judge(target, spec, options, calibration)
        stand_in = JudgeStandIn(
            identity=answer_identity(opened.describe()), calibration=opened.calibration, describe=lambda _: opened.describe(),
            load=lambda: opened, context_size=opened.context_size, concurrency=max(1, int(getattr(opened, "concurrency", 1))),
            seed=int(getattr(opened, "seed", 0)),
        )
    return cached(stand_in, path)


def checked_spec(spec: JudgeSpec) -> tuple[str, str | None, BaseModel]:
    """The backend `spec` names, its target and its validated options, without opening it: a
    run whose metrics use no judge still refuses `--judge-option bogus=1` (a typo in a config
    must not wait for the first run that judges to show)."""
    from localeval.models.store import MODEL_ENV

    model = spec.model
    if model is None and spec.judge_url is None:
        model = os.environ.get(MODEL_ENV) or None
    backend, target = parse_model(model, spec.judge_url)
    return backend, target, checked_options(backend, spec.backend_options)
