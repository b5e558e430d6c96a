"""The settings of a scoring run: one model that the config file, the command line and the
Python API all fill, so every option is defined, validated and documented once.

A config file may set the `FileSettings` keys. It is looked for in this order:
`--config PATH`; `localeval.toml` next to the data file; `[tool.localeval]` in
`pyproject.toml` in the current directory. Command-line values override the file.
An unknown key is an error that names it, so a typo never silently turns a gate off.
A config file beside the data can come with the data, so the run says which file
it used, and records it (with its SHA-256) in the results' provenance.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, StrictFloat, StrictInt, ValidationError

from localeval.data.files import read_small_file
from localeval.errors import ConfigError
from localeval.judge.spec import JudgeSpec
from localeval.stats.gates import EVERY_METRIC, RETIRED_GATE_MODES, GateOn

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_FILE = "localeval.toml"
PYPROJECT = "pyproject.toml"
MAX_CONFIG_BYTES = 1 << 20
LOCAL_RAY = "local"  # --ray without an address: start Ray here, or join $RAY_ADDRESS

def _retired_gate_mode(value: Any) -> Any:
    """A gate mode that no longer exists is refused with why and what replaces it, not with a bare
    list of choices: its old meaning was ambiguous, and a silent switch would flip a gate."""
    if isinstance(value, str) and value in RETIRED_GATE_MODES:
        raise ValueError(RETIRED_GATE_MODES[value])
    return value


# A threshold is a share: a finite number in [0, 1]; true/false and strings are refused.
Share = Annotated[StrictFloat | StrictInt, Field(ge=0, le=1, allow_inf_nan=False)]


class FileSettings(JudgeSpec):
    """What a config file may set; the keys match the long command-line options. The judge's
    settings (model, n_ctx, threads, seed, gpu_layers, calibration, judge_url,
    judge_concurrency) are JudgeSpec's, declared there once."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    metrics: list[str] | None = Field(None, min_length=1, description="metrics to compute (default: every built-in metric; one from another package runs when named)")
    thresholds: dict[str, Share] = Field(default_factory=dict, description="a sample passes when its score is >= this")
    min_mean: dict[str, Share] = Field(default_factory=dict, description="the metric's mean must be >= this")
    max_mean: dict[str, Share] = Field(default_factory=dict, description="a lower-is-better metric's (noise_sensitivity's) mean must be <= this")
    threshold_on: Annotated[GateOn, BeforeValidator(_retired_gate_mode)] = Field(
        "mean",
        description="what min_mean and max_mean compare: the mean; or the 95% interval (the prediction-powered one with labels): "
        "'fail-if-confidently-below' fails only when its upper bound is below the minimum, 'pass-if-confidently-above' passes only when its lower bound reaches it "
        "(for max_mean, the other bound: fails only when the lower bound is above the maximum, passes only when the upper bound is within it)",
    )
    max_drop: dict[str, Share] = Field(default_factory=dict, description="localeval compare: the most the candidate may cost of the metric's mean (a paired difference)")
    max_drop_on: Annotated[GateOn, BeforeValidator(_retired_gate_mode)] = Field(
        "fail-if-confidently-below",
        description="what max_drop compares, as threshold_on: 'fail-if-confidently-below' fails only when the paired difference's whole interval is below -max_drop, "
        "'pass-if-confidently-above' passes only when its lower bound reaches -max_drop, 'mean' compares the mean difference",
    )
    labels: str | None = Field(None, description="labels file (localeval calibrate's) whose rows with an id give those samples human scores: a prediction-powered mean")
    options: dict[str, dict[str, Any]] = Field(default_factory=dict, description="metric options, by metric")
    map: dict[str, str] = Field(default_factory=dict, description="input key -> ragas field")
    fail_on_error: bool = Field(False, description="exit 1 when any sample could not be scored by a metric (a judge error, a missing field)")


class RunSettings(FileSettings):
    """Everything one `localeval score` run needs (`localeval.score_file`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    input: str = Field(description="JSON Lines file to score, or '-' for standard input")
    output: str | None = Field(None, description="results file (one JSON line per sample), or '-' for standard output")
    resume: bool = Field(False, description="keep the results already in output and score the rest")
    strict_input: bool = Field(False, description="stop at the first bad input line")
    summary_json: str | None = Field(None, description="also write the summary as JSON here")
    junit_xml: str | None = Field(None, description="JUnit XML: one test case per sample and metric")
    markdown: str | None = Field(None, description="Markdown summary with the failing samples")
    timing: bool = Field(True, description="keep judge timing in the results (False: byte-identical reruns)")
    ray: str | None = Field(None, description=f"score on a Ray cluster: its address, or '{LOCAL_RAY}' for Ray on this machine (the ray extra)")
    config_source: dict[str, str] | None = Field(None, description="the config file these settings came from, and its SHA-256")
    qrels: str | None = Field(None, description="a TREC or BEIR qrels file: INPUT is then a run file (TREC or BEIR JSON), scored a sample per query")
    queries: str | None = Field(None, description="BEIR's queries.jsonl with the run's question text (with qrels)")
    read_from: dict[str, dict[str, str]] | None = Field(None, description="set by the run: the run, qrels and queries files its samples were read from (path, SHA-256)")
    set_aside: str | None = Field(None, description="what was set aside of the config: its gates for metrics that metrics (-m) leaves out, in one line")


def _first_problem(error: ValidationError, label: str) -> ConfigError:
    first = error.errors()[0]
    key = ".".join(str(p) for p in first["loc"])
    reason = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
    return ConfigError(f"{label}: '{key}': {reason}")


def _read_config(path: Path, table: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The table's contents and where they came from, or None when the file has no such table."""
    raw = read_small_file(path, MAX_CONFIG_BYTES, "config file")
    try:
        data: Any = tomllib.loads(raw.decode("utf-8").removeprefix("\ufeff"))  # a BOM, as Windows editors write
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for key in table:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: [{'.'.join(table)}] is not a table")
    return data, {"file": str(path), "table": ".".join(table), "sha256": hashlib.sha256(raw).hexdigest()}


def describe_source(source: dict[str, str]) -> str:
    """"pyproject.toml [tool.localeval]" or "data/localeval.toml": how a person names it."""
    return f"{source['file']} [{source['table']}]" if source.get("table") else source["file"]


def find_config(input_path: str, explicit: str | None = None) -> tuple[dict[str, Any], dict[str, str] | None]:
    """The config file's settings for `input_path` (unvalidated) and where they came from."""
    found: tuple[dict[str, Any], dict[str, str]] | None = None
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file not found: {explicit}")
        found = _read_config(path, ("tool", "localeval") if path.name == PYPROJECT else ())
        if found is None:
            raise ConfigError(f"{explicit} has no [tool.localeval] table")
    else:
        beside = Path(input_path).resolve().parent / CONFIG_FILE if input_path != "-" else None
        if beside is not None and beside.is_file():
            found = _read_config(beside, ())
        elif Path(PYPROJECT).is_file():
            found = _read_config(Path(PYPROJECT), ("tool", "localeval"))
    if found is None:
        return {}, None
    data, source = found
    data = _judge_table(data, describe_source(source))
    try:
        FileSettings.model_validate(data)
    except ValidationError as exc:
        raise _first_problem(exc, describe_source(source)) from None
    return _relative_to(data, Path(source["file"]).resolve().parent), source


def _judge_table(data: dict[str, Any], label: str) -> dict[str, Any]:
    """A config's `[judge]` table (JudgeSpec's keys: model, n_ctx, threads, ...) read as the same
    keys at the top level, where older configs have them; a key set in both places is refused."""
    table = data.get("judge")
    if table is None:
        return data
    if not isinstance(table, dict):
        raise ConfigError(f"{label}: 'judge' must be a table of judge settings ({', '.join(JudgeSpec.model_fields)})")
    unknown = sorted(set(table) - set(JudgeSpec.model_fields))
    if unknown:
        raise ConfigError(f"{label}: 'judge.{unknown[0]}': unknown key; the judge's keys are {', '.join(JudgeSpec.model_fields)}")
    twice = sorted(set(table) & set(data))
    if twice:
        raise ConfigError(f"{label}: '{twice[0]}' is set both at the top level and in [judge]; keep one")
    rest = {k: v for k, v in data.items() if k != "judge"}
    return {**rest, **table}


PATH_KEYS = ("output", "summary_json", "junit_xml", "markdown", "calibration", "labels", "cache")
PATH_OPTIONS = ("rubric",)  # metric options that name a file


def _relative_to(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A config's relative paths resolved against the config file's folder, as a reader of the
    file expects (not against wherever the command was started). `model` is a path only when
    such a file exists there: otherwise it is a catalog name."""
    data = dict(data)
    for key in PATH_KEYS:
        if isinstance(data.get(key), str) and data[key] not in ("", "-") and not Path(data[key]).is_absolute():
            data[key] = str(folder / data[key])
    model = data.get("model")
    if isinstance(model, str) and not Path(model).is_absolute() and (folder / model).is_file():
        data["model"] = str(folder / model)
    if isinstance(data.get("options"), dict):
        data["options"] = {
            metric: {k: str(folder / v) if k in PATH_OPTIONS and isinstance(v, str) and v and not Path(v).is_absolute() else v for k, v in options.items()}
            if isinstance(options, dict) else options
            for metric, options in data["options"].items()
        }
    return data


# Two keys that name one setting: a later layer that sets either replaces both of an earlier one's,
# so `--verifier` overrides a config's `grader = "judge"`; both in one layer is that layer's contradiction.
SAME_SETTING = ("grader", "verifier")


def merge_options(*layers: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Metric options layer on layer, key by key: later layers win (`grader` and `verifier` as one key)."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for metric, options in layer.items():
            into = merged.setdefault(metric, {})
            if any(key in options for key in SAME_SETTING):
                for key in SAME_SETTING:
                    into.pop(key, None)
            into.update(options)
    return merged


SCORE_GATES = {"thresholds": "--threshold", "min_mean": "--min-mean", "max_mean": "--max-mean"}
COMPARE_GATES = {"max_drop": "--max-drop"}


def config_gates(
    file_values: Mapping[str, Any], narrowed_to: list[str] | None, source: dict[str, str] | None, gates: Mapping[str, str]
) -> tuple[dict[str, Any], str | None]:
    """A config's values (read from `source`, find_config's) with its gates (the keys of `gates`)
    for metrics that `narrowed_to` (the metrics named on the command line, -m; None: not narrowed)
    leaves out set aside, and one line that says which (None when none is). A config may set gates
    for every metric it runs, and -m narrows a run; a gate is never set aside in silence, nor one
    for a metric the config's own `metrics` leaves out (refused), nor one for a name no metric has
    (refused where it is checked: a misspelt metric is not a gate to drop). Both messages name the
    config as a person does (describe_source), for score and compare alike."""
    if narrowed_to is None:
        return dict(file_values), None
    from localeval.metrics import is_metric_name  # the registry, once a run is narrowed

    label = describe_source(source) if source else "the config"
    listed = file_values.get("metrics")
    kept = dict(file_values)
    aside: list[str] = []
    for key, option in gates.items():
        table = file_values.get(key)
        if not isinstance(table, dict):
            continue
        for name in table:
            if name in narrowed_to or name == EVERY_METRIC:
                continue
            if isinstance(listed, list) and name not in listed:
                raise ConfigError(
                    f"{label}: '{key}.{name}': a gate for a metric that is not selected: the config's metrics ({', '.join(map(str, listed))}) leave {name} out; "
                    f"add it there or drop the gate ({option} on the command line gates a metric -m names)"
                )
            if is_metric_name(name):
                aside.append(f"{key}.{name}")
        kept[key] = {name: value for name, value in table.items() if f"{key}.{name}" not in aside}
    if not aside:
        return kept, None
    return kept, f"{label}: {', '.join(aside)} set aside: -m {' -m '.join(narrowed_to)} leaves {'that metric' if len(aside) == 1 else 'those metrics'} out"


def build_settings(values: Mapping[str, Any], config: str | None = None) -> RunSettings:
    """RunSettings from explicit `values` (the command line's, or an API caller's) over the
    config file found for `values["input"]`. Thresholds, min_mean, max_mean, map and backend_options
    merge key by key; options merge per metric and key; every other value replaces the file's."""
    file_values, source = find_config(str(values.get("input", "-")), config)
    narrowed = values.get("metrics")
    file_values, set_aside = config_gates(file_values, list(narrowed) if isinstance(narrowed, (list, tuple)) else None, source, SCORE_GATES)
    merged: dict[str, Any] = {**file_values}
    for key, value in values.items():
        if key in ("thresholds", "min_mean", "max_mean", "map", "backend_options"):  # --judge-option merges with [judge.backend_options]
            merged[key] = {**file_values.get(key, {}), **value}
        elif key == "options":
            merged[key] = merge_options(file_values.get("options", {}), value)
        else:
            merged[key] = value
    merged["config_source"] = source
    merged["set_aside"] = set_aside
    try:
        return RunSettings.model_validate(merged)
    except ValidationError as exc:
        raise _first_problem(exc, "settings") from None
