"""Calibrated verdicts: a small logistic model over the judge's log-odds and the evidence features.

A judge's raw probability is not a calibrated one (a 1.5B model says "Yes" to
anything on topic), and the free evidence signals see what the judge misses (a
word the context never mentions). P(verdict) = sigmoid(intercept + sum of
weight x feature). The few weights are fitted on the human-labelled dev sets by
`benchmarks/write_catalog.py` (or a user's `localeval calibrate`), with classes weighted equally so that 0.5 is the
threshold of balanced accuracy, and stored per judge in models/catalog.toml.
A GGUF file that is not in the catalog uses `DEFAULT_MODELS`, documented there.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.errors import ConfigError, JudgeError

LOGIT_LIMIT = 30.0  # keeps exp() finite for any feature values
# A weight or intercept beyond this is no calibration a fit produces (the shipped ones are below
# 10): refused when read, so that no sum of huge terms can overflow into inf - inf = NaN.
MAX_COEFFICIENT = 1000.0


def _number(value: Any, where: str, name: str) -> float:
    """A calibration coefficient: a JSON/TOML number (not a string, not true/false), finite and
    within MAX_COEFFICIENT."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: {name} must be a number, not {value!r}")
    number = float(value)
    if not math.isfinite(number) or abs(number) > MAX_COEFFICIENT:
        raise ConfigError(f"{where}: {name} = {value!r} is not a finite number within +-{MAX_COEFFICIENT:g}")
    return number


@dataclass(frozen=True)
class LogisticModel:
    """sigmoid(intercept + sum(weights[name] * features[name])). Features not named weigh nothing."""

    intercept: float
    weights: Mapping[str, float]

    def logit(self, features: Mapping[str, float]) -> float:
        """The clamped logit; a NaN (a NaN feature) is refused rather than clamped into certainty."""
        value = self.intercept + sum(weight * features[name] for name, weight in self.weights.items())
        if math.isnan(value):
            raise JudgeError("a calibrated verdict's logit is NaN (a feature is not a number)")
        return max(-LOGIT_LIMIT, min(LOGIT_LIMIT, value))

    def probability(self, features: Mapping[str, float]) -> float:
        return 1.0 / (1.0 + math.exp(-self.logit(features)))

    def describe(self) -> dict[str, Any]:
        return {"intercept": self.intercept, "weights": dict(self.weights)}

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, features: Sequence[str]) -> LogisticModel:
        """Read `{intercept = ..., weights = {name = ...}}`, naming `where` on error. The weights
        must name exactly the metric's `features`: a name the metric does not compute, or a
        feature left out (write 0 to leave one out), is an error here, before any judge call."""
        if not isinstance(table, Mapping) or "intercept" not in table or not isinstance(table.get("weights"), Mapping):
            raise ConfigError(f"{where}: a calibration needs 'intercept' and 'weights' numbers")
        intercept = _number(table["intercept"], where, "intercept")
        weights = {str(k): _number(v, where, f"weight {k}") for k, v in table["weights"].items()}
        unknown = sorted(set(weights) - set(features))
        if unknown:
            raise ConfigError(f"{where}: no such feature {', '.join(unknown)}; the features are {', '.join(features)}")
        missing = [name for name in features if name not in weights]
        if missing:
            raise ConfigError(f"{where}: no weight for {', '.join(missing)} (write 0 to leave a feature out); the features are {', '.join(features)}")
        return cls(intercept, weights)


CALIBRATION_FORMAT = "localeval-calibration"
# 2: the statement prompt carries worked examples (2026-11-24); 3: context_relevance weighs the
# passage verdict up to a cap (the same day); 4: context_relevance's opening-unit features
# (2026-11-25); 5: the statement prompt no longer carries the sample's question (issue 44). A
# table fitted on an earlier version's prompts or features weighs judge log-odds of another
# shape, or lacks a feature, so it is refused rather than misread.
CALIBRATION_VERSION = 5
MAX_CALIBRATION_BYTES = 1 << 20


@dataclass(frozen=True)
class CalibrationFile:
    """A user's calibration (`localeval calibrate` writes it; `score --calibration` reads it):
    tables by task, which replace the catalog's for those tasks, and where they came from."""

    path: str
    sha256: str
    tables: Mapping[str, Mapping[str, Any]]
    fitted_judge: Mapping[str, Any] | None = None  # the judge it was fitted with: backend, model, sha256, url

    def judge_mismatch(self, model: str | None) -> str | None:
        """Why this file may not fit the judge `model` names (a catalog name, a path, or a served
        model's name; None: the default), or None when it was fitted for it or cannot tell. By
        the catalog's SHA-256 where both sides have one, else by name: nothing is hashed here."""
        from localeval.models.store import CATALOG, DEFAULT_MODEL, MODEL_ENV

        fitted = self.fitted_judge or {}
        choice = model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
        expected_sha = CATALOG[choice].sha256 if choice in CATALOG else None
        expected_name = choice if choice in CATALOG else Path(choice).name
        if fitted.get("sha256") and expected_sha:
            same = fitted["sha256"] == expected_sha
        elif fitted.get("model"):
            same = fitted["model"] == expected_name
        else:
            return None
        return None if same else f"{self.path} was fitted for the judge {fitted.get('model')!r}, and this run's judge is {expected_name!r}: its weights read another model's answers"

    def source(self) -> dict[str, str]:
        return {"path": self.path, "sha256": self.sha256}


def read_calibration_file(path: str, tasks: Sequence[str]) -> CalibrationFile:
    """Read and check a calibration file; ConfigError names the file and what is wrong. `tasks`
    are the calibration keys a table may have (localeval.metrics.calibration_tasks: the caller,
    which holds both, links them, so this reader does not import the registry). The tables'
    features are checked against the metrics when a run starts (Metric.check_calibration)."""
    import hashlib
    import json

    from localeval.data.files import read_small_file

    raw = read_small_file(path, MAX_CALIBRATION_BYTES, "calibration file")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ConfigError(f"{path}: not a localeval calibration file (not JSON text)") from None
    if not isinstance(data, dict) or data.get("format") != CALIBRATION_FORMAT:
        raise ConfigError(f"{path}: not a localeval calibration file (no \"format\": \"{CALIBRATION_FORMAT}\")")
    if data.get("version") != CALIBRATION_VERSION:
        raise ConfigError(
            f"{path}: calibration file version {data.get('version')!r}; this localeval reads version {CALIBRATION_VERSION} "
            "(its judge prompts changed since: fit it again with `localeval calibrate`)"
        )
    tables = data.get("tables")
    if not isinstance(tables, dict) or not tables or not all(isinstance(t, dict) for t in tables.values()):
        raise ConfigError(f"{path}: 'tables' must map {' and/or '.join(tasks)} to a calibration")
    unknown = sorted(set(tables) - set(tasks))
    if unknown:
        raise ConfigError(f"{path}: unknown calibration {', '.join(unknown)}; known: {', '.join(tasks)}")
    fitted = data.get("fitted", {}).get("judge") if isinstance(data.get("fitted"), dict) else None
    return CalibrationFile(path, hashlib.sha256(raw).hexdigest(), tables, fitted if isinstance(fitted, dict) else None)


def checked_calibration(path: str | None, metrics: Sequence[Any], tasks: Sequence[str]) -> CalibrationFile | None:
    """The calibration file `path` names (--calibration), read and checked against the metrics'
    features (each metric's `check_calibration`), before any judge call; None without a path.
    `tasks`: as for read_calibration_file."""
    if path is None:
        return None
    calibration = read_calibration_file(path, tasks)
    for metric in metrics:
        try:
            metric.check_calibration(calibration.tables)
        except ConfigError as error:  # a table's fault: say which file holds it
            raise ConfigError(f"{path}: {error}") from None
    return calibration
