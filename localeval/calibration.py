"""Calibrated verdicts: a small logistic model over the judge's log-odds and the evidence features.

A judge's raw probability is not a calibrated one (a 1.5B model says "Yes" to
anything on topic), and the free evidence signals see what the judge misses (a
word the context never mentions). P(verdict) = sigmoid(intercept + sum of
weight x feature). The few weights are fitted on the human-labelled dev sets by
`benchmarks/accuracy.py --fit`, with classes weighted equally so that 0.5 is the
threshold of balanced accuracy, and stored per judge in models/catalog.toml.
A GGUF file that is not in the catalog uses `DEFAULT_MODELS`, documented there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from localeval.errors import ConfigError

LOGIT_LIMIT = 30.0  # keeps exp() finite for any feature values


@dataclass(frozen=True)
class LogisticModel:
    """sigmoid(intercept + sum(weights[name] * features[name])). Features not named weigh nothing."""

    intercept: float
    weights: Mapping[str, float]

    def logit(self, features: Mapping[str, float]) -> float:
        value = self.intercept + sum(weight * features[name] for name, weight in self.weights.items())
        return max(-LOGIT_LIMIT, min(LOGIT_LIMIT, value))

    def probability(self, features: Mapping[str, float]) -> float:
        return 1.0 / (1.0 + math.exp(-self.logit(features)))

    def describe(self) -> dict[str, Any]:
        return {"intercept": self.intercept, "weights": dict(self.weights)}

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> LogisticModel:
        """Read `{intercept = ..., weights = {name = ...}}` from the catalog, naming `where` on error."""
        try:
            weights = {str(k): float(v) for k, v in dict(table["weights"]).items()}
            intercept = float(table["intercept"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: a calibration needs 'intercept' and 'weights' numbers ({exc})") from None
        if not all(math.isfinite(v) for v in [intercept, *weights.values()]):
            raise ConfigError(f"{where}: calibration numbers must be finite")
        return cls(intercept, weights)
