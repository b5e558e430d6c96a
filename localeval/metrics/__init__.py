"""The metric registry: names, their options, and building a metric from strings.

One registry, one way in: `register_metric` checks and adds a metric class, whether it is one
of localeval's own (BUILTIN, registered when this module is imported), one another installed
package declares under the entry-point group `localeval.metrics` (`my_metric =
my_package.module:MyMetric`, a Metric subclass; registered by `load_plugins`), or one that code
registers itself. A registered metric is a metric like
the built-ins when it is named: `-m NAME`, options in the config file, thresholds, reports and
the summary; a run that names no metric scores the built-ins only.

Installed packages are imported lazily (`load_plugins`): only when a name is asked for that is
not built in, or for `localeval metrics`; a run of the built-ins never imports third-party code,
so a slow or misbehaving plugin cannot slow `--version` or decide a run it is no part of. A
package whose entry point cannot be loaded (whatever it raises, SystemExit included, short of
Ctrl-C) is left out, and the reason is kept in PLUGIN_ERRORS (`localeval metrics` prints it;
`-m NAME` for it says it). Whatever a plugin prints while it is imported goes to standard
error, so it cannot corrupt `localeval metrics --json` or results on standard output."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from contextlib import redirect_stdout
from functools import cache
from importlib.metadata import PackageNotFoundError, entry_points, packages_distributions
from importlib.metadata import version as metadata_version
from typing import Any, Literal, get_args, get_origin

from pydantic import ValidationError

from localeval.errors import ConfigError
from localeval.interrupts import users_interrupt
from localeval.metrics.answer_correctness import AnswerCorrectness
from localeval.metrics.answer_relevancy import AnswerRelevancy
from localeval.metrics.base import Metric, Score
from localeval.metrics.entity_recall import ContextEntityRecall
from localeval.metrics.factual_correctness import FactualCorrectness
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.id_precision import IdContextPrecision
from localeval.metrics.id_recall import IdContextRecall
from localeval.metrics.judging import JudgeMetric
from localeval.metrics.noise_sensitivity import NoiseSensitivity
from localeval.metrics.precision import ContextPrecision
from localeval.metrics.rank_metrics import RANK_METRICS
from localeval.metrics.recall import ContextRecall
from localeval.metrics.relevance import ContextRelevance
from localeval.metrics.semantic_similarity import SemanticSimilarity
from localeval.metrics.string_precision import NonLlmContextPrecision
from localeval.metrics.string_recall import NonLlmContextRecall

ENTRY_POINT_GROUP = "localeval.metrics"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")
# Registry order is the default scoring and column order only. It does not decide how much of a
# judge prompt is reused: the judge snapshots each prompt head it sees (LlamaJudge's
# SNAPSHOTS_KEPT), so no metric declares or depends on running next to another: the README
# example scored in either order evaluates the same 1,089 + 1,054 prompt tokens (docs/PERFORMANCE.md).
BUILTIN: tuple[type[Metric[Any]], ...] = (
    ContextRelevance,
    ContextRecall,
    NonLlmContextRecall,
    IdContextRecall,
    Faithfulness,
    ContextPrecision,
    NonLlmContextPrecision,
    IdContextPrecision,
    AnswerRelevancy,
    FactualCorrectness,
    SemanticSimilarity,
    AnswerCorrectness,
    ContextEntityRecall,
    NoiseSensitivity,
    *RANK_METRICS,
)
REGISTRY: dict[str, type[Metric[Any]]] = {}  # name -> class: written by register_metric alone
# What a run that names no metric scores: every built-in but answer_relevancy (it needs a second
# model, the embedding model, that the README's one pull does not fetch: a default run must work
# after it) and factual_correctness (it judges every statement of the response and of the
# reference once more, against each other: about as many judge calls again as context_recall
# and faithfulness together, for a comparison the reference-based metrics already approach); nor
# the rest of ragas' scorecard: semantic_similarity and answer_correctness (the embedding model
# again; answer_correctness judges what factual_correctness judges), context_entity_recall (a
# judge request per text, writing lists, for what context_recall already asks statement by
# statement) and noise_sensitivity (lower is better, where every default metric is higher is
# better; it judges what faithfulness and context_recall judge). They run when they are named
# (-m, `metrics = [...]` in the config).
DEFAULT_METRICS: tuple[str, ...] = tuple(m.name for m in BUILTIN if m.by_default)
PLUGIN_ERRORS: dict[str, str] = {}  # entry-point name -> why it was left out
_PACKAGES: dict[str, tuple[str, str]] = {}  # entry-point name -> the distribution that declares it, and its version


def register_metric(cls: type[Metric[Any]]) -> type[Metric[Any]]:
    """Add a metric class to the registry (usable as a class decorator). It must be a Metric
    subclass with a lower-case name of its own, a description, its required sample fields, and
    options and details models; a name already taken by another class is refused."""
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise ConfigError(f"{cls!r} is not a localeval Metric subclass")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ConfigError(f"{cls.__qualname__}: a metric's name must be lower-case letters, digits and underscores (got {name!r})")
    if name in REGISTRY and REGISTRY[name] is not cls:
        raise ConfigError(f"{cls.__qualname__}: the metric name '{name}' is taken by {REGISTRY[name].__module__}.{REGISTRY[name].__qualname__}")
    from localeval.data.samples import Sample

    fields = getattr(cls, "required_fields", None)
    if not isinstance(fields, tuple) or not all(isinstance(f, str) and f in Sample.model_fields for f in fields):
        raise ConfigError(f"{cls.__qualname__}: required_fields must be a tuple of sample fields ({', '.join(Sample.model_fields)})")
    if not isinstance(getattr(cls, "description", None), str):
        raise ConfigError(f"{cls.__qualname__}: a metric needs a description")
    REGISTRY[name] = cls
    return cls


for _builtin in BUILTIN:  # localeval's own metrics, through the same checks as another package's
    register_metric(_builtin)


@cache  # once per process
def load_plugins() -> None:
    """Register every metric installed packages declare, once; a broken one is left out with its
    reason. A plugin's import may raise anything, SystemExit too (a `sys.exit()` at import must not
    decide localeval's exit code): everything short of the user's Ctrl-C is caught (a KeyboardInterrupt
    the package raises itself is its failure: localeval.interrupts). Its prints go to standard error."""
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(entry, "dist", None)
        if dist is not None:
            _PACKAGES[entry.name] = (str(dist.metadata["Name"]), str(dist.version))
        try:
            with redirect_stdout(sys.stderr):
                register_metric(entry.load())
        except BaseException as error:  # noqa: BLE001 - a third-party package may raise anything while loading
            if users_interrupt(error):
                raise
            PLUGIN_ERRORS[entry.name] = f"{entry.value}: {type(error).__name__}: {error}"


def plugin_package(cls: type[Metric[Any]]) -> dict[str, str | None] | None:
    """Where a metric from another package comes from: its class, and the installed package that
    declares it (or, for a class registered by code, that holds its module) with its version;
    None for a built-in. A results header records it, so a resume after the package changed is
    refused instead of mixing two versions' scores."""
    if cls in BUILTIN:
        return None
    name, version = _PACKAGES.get(cls.name, (None, None))
    if name is None:
        found = packages_distributions().get(cls.__module__.split(".")[0], [])
        if found:
            name = found[0]
            try:
                version = metadata_version(name)
            except PackageNotFoundError:
                version = None
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "package": name, "version": version}


def shadowing_plugins() -> list[str]:
    """Installed packages that declare a metric under a built-in metric's name, from their
    metadata alone (nothing is imported): the built-in wins, and a run says so."""
    builtin = {cls.name for cls in BUILTIN}
    return [f"{entry.value} declares the metric '{entry.name}', a built-in metric's name: the built-in is used"
            for entry in entry_points(group=ENTRY_POINT_GROUP) if entry.name in builtin]


def is_metric_name(name: str) -> bool:
    """Whether `name` is a metric's: registered, or declared by an installed package, read from
    its metadata (nothing is imported). What a run asks of a name it does not score (options or a
    gate in a config file, left aside): a run of the built-ins imports no plugin."""
    return name in REGISTRY or any(entry.name == name for entry in entry_points(group=ENTRY_POINT_GROUP))


def metric_class(name: str) -> type[Metric[Any]] | None:
    """The class registered under `name`, loading the installed packages' metrics first when
    it is not a built-in; None when no metric has that name."""
    if name not in REGISTRY:
        load_plugins()
    return REGISTRY.get(name)


def lower_is_better(name: str, *, load: bool = False) -> bool:
    """Whether the metric registered under `name` scores its good samples low (noise_sensitivity):
    what `localeval compare` orients its verdict, movers and gate by. Read from the registry as it
    stands (the built-ins, and metrics code registered), importing no installed package unless
    `load` (compare: a plugin's metric is read its own way, as `score` reads it); a name no
    metric has is read as higher-is-better, as every metric was before."""
    cls = metric_class(name) if load else REGISTRY.get(name)
    return cls is not None and not cls.higher_is_better


def minimum_refused(name: str, gate: str) -> str | None:
    """Why `gate` (a minimum a score must reach: --threshold, --min-mean, assert_metric's
    threshold) cannot be read on `name`, or None: on a lower-is-better metric it would fail the
    good samples and pass the bad ones (noise_sensitivity 1.0, every statement wrong, reaches 0.2)."""
    if not lower_is_better(name):
        return None
    return (
        f"{gate} {name}: {name} is lower-is-better (its good scores are the low ones), and a gate is a minimum a score must reach: "
        f"it would fail the good samples and pass the bad ones. Gate its mean with --max-mean {name}=VALUE (max_mean in the config: "
        f"the mean at most VALUE), or a rise between two runs with localeval compare --max-drop {name}=VALUE"
    )


def maximum_refused(name: str, gate: str) -> str | None:
    """Why `gate` (a maximum the mean must not pass: --max-mean) cannot be read on `name`, or None:
    on a higher-is-better metric it would fail the good runs (context_recall 1.0 passes no
    maximum below 1). A name the registry does not hold is not refused here: a misspelt
    noise_sensitivity is not a selected metric, and the summary refuses it as such."""
    cls = REGISTRY.get(name)
    if cls is None or not cls.higher_is_better:
        return None
    return (
        f"{gate} {name}: {name} is higher-is-better (its good scores are the high ones), and --max-mean is a maximum for "
        f"lower-is-better metrics (noise_sensitivity): it would fail the good runs. Gate its mean with --min-mean {name}=VALUE"
    )


def builtin_with_option(option: str) -> tuple[str, ...]:
    """The built-in metrics that have the option `option`, in registry order: those a CLI shortcut
    (--verifier, --statements, --no-reasons) sets it for, so the CLI names no metric. Built-ins
    only: another package's option of the same name may mean something else."""
    return tuple(cls.name for cls in BUILTIN if option in cls.Params.model_fields)


def calibrated_metric(key: str) -> type[JudgeMetric[Any]]:
    """The first built-in judge metric weighing its features with the calibration table `key`:
    whose shipped or default combination `localeval calibrate` compares a new fit with."""
    for cls in BUILTIN:
        if cls.calibration_key == key and issubclass(cls, JudgeMetric):
            return cls
    raise ConfigError(f"no built-in metric is calibrated by the table '{key}'")


def calibration_tasks() -> list[str]:
    """The calibration keys the registered metrics declare (`Metric.calibration_key`): a metric
    from another package that weighs its own features has its own table. The reader of
    calibration files is given these by its caller (localeval.calibration.combination does not import the
    registry)."""
    return sorted({key for cls in REGISTRY.values() if (key := cls.calibration_key)})


def _type_name(annotation: Any) -> str:
    """"int", the choices of a Literal ("sentence | line | chunk"), an optional value's
    own type, or what a value class says it is given as (`OPTION_TYPE`, e.g. "path")."""
    if get_origin(annotation) is Literal:
        return " \\| ".join(str(choice) for choice in get_args(annotation))
    present = [arg for arg in get_args(annotation) if arg is not type(None)]
    if len(present) == 1 and type(None) in get_args(annotation):
        return _type_name(present[0])
    return str(getattr(annotation, "OPTION_TYPE", None) or getattr(annotation, "__name__", annotation))


def list_metrics(builtin_only: bool = False) -> list[dict[str, Any]]:
    """Every metric with its required fields and options, for `localeval metrics` and docs
    (`builtin_only`: localeval's own, for its docs)."""
    if not builtin_only:
        load_plugins()
    rows = []
    for cls in BUILTIN if builtin_only else REGISTRY.values():
        name = cls.name
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
                "default_run": name in DEFAULT_METRICS,
                "options": options,
            }
        )
    return rows


def create_metric(name: str, options: Mapping[str, Any] | None = None) -> Metric[Any]:
    """Build a metric by name with validated options (strings such as "0.7" are converted)."""
    if metric_class(name) is None:
        known = ", ".join(sorted(REGISTRY))
        if name in PLUGIN_ERRORS:
            raise ConfigError(f"metric '{name}' is installed but could not be loaded ({PLUGIN_ERRORS[name]}); known metrics: {known}")
        raise ConfigError(f"unknown metric '{name}'; known metrics: {known}")
    cls = REGISTRY[name]
    try:
        params = cls.Params.model_validate(dict(options or {}))
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        where = f"option '{key}'" if key else "options"  # a rule across options names none of them
        raise ConfigError(f"metric '{name}' {where}: {first['msg'].removeprefix('Value error, ')}") from None
    if cls in BUILTIN:
        return cls(params)
    try:
        return cls(params)
    except BaseException as error:  # noqa: BLE001 - another package's constructor may raise anything
        if users_interrupt(error):
            raise
        raise ConfigError(f"metric '{name}' ({cls.__module__}.{cls.__qualname__}) could not be built: {type(error).__name__}: {error}") from None


__all__ = [
    "BUILTIN", "DEFAULT_METRICS", "PLUGIN_ERRORS", "REGISTRY", "Metric", "Score", "builtin_with_option", "calibrated_metric", "calibration_tasks", "create_metric", "is_metric_name", "list_metrics", "load_plugins", "metric_class", "plugin_package",
    "register_metric", "shadowing_plugins",
]
