"""The metric registry: names, their options, and building a metric from strings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin

from pydantic import ValidationError

from localeval.errors import ConfigError
from localeval.metrics.base import Metric, Score
from localeval.metrics.id_recall import IdContextRecall
from localeval.metrics.recall import ContextRecall
from localeval.metrics.relevance import ContextRelevance
from localeval.metrics.string_recall import NonLlmContextRecall

# Registry order is the default scoring order: the judge metrics of a sample run
# back to back so the second reuses the first one's cached context prefix.
REGISTRY: dict[str, type[Metric[Any]]] = {
    m.name: m for m in (ContextRelevance, ContextRecall, NonLlmContextRecall, IdContextRecall)
}


def _type_name(annotation: Any) -> str:
    """"int", the choices of a Literal ("sentence | line | chunk"), an optional value's
    own type, or what a value class says it is given as (`OPTION_TYPE`, e.g. "path")."""
    if get_origin(annotation) is Literal:
        return " \\| ".join(str(choice) for choice in get_args(annotation))
    present = [arg for arg in get_args(annotation) if arg is not type(None)]
    if len(present) == 1 and type(None) in get_args(annotation):
        return _type_name(present[0])
    return str(getattr(annotation, "OPTION_TYPE", None) or getattr(annotation, "__name__", annotation))


def list_metrics() -> list[dict[str, Any]]:
    """Every metric with its required fields and options, for `localeval metrics` and docs."""
    rows = []
    for name in REGISTRY:
        cls = REGISTRY[name]
        options = {
            key: {
                "default": info.default,
                "type": _type_name(info.annotation),
                "description": info.description or "",
            }
            for key, info in cls.Params.model_fields.items()
        }
        rows.append(
            {
                "name": name,
                "description": cls.description,
                "required_fields": list(cls.required_fields),
                "needs_judge": cls.needs_judge,
                "judge_by_default": cls().uses_judge(),
                "options": options,
            }
        )
    return rows


def create_metric(name: str, options: Mapping[str, Any] | None = None) -> Metric[Any]:
    """Build a metric by name with validated options (strings such as "0.7" are converted)."""
    if name not in REGISTRY:
        known = ", ".join(sorted(REGISTRY))
        raise ConfigError(f"unknown metric '{name}'; known metrics: {known}")
    cls = REGISTRY[name]
    try:
        params = cls.Params.model_validate(dict(options or {}))
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"metric '{name}' option '{key}': {first['msg'].removeprefix('Value error, ')}") from None
    return cls(params)


__all__ = ["Metric", "Score", "REGISTRY", "create_metric", "list_metrics"]
