"""A judge that remembers: every answer is cached on disk by its exact prompt.

The accuracy benchmark runs localeval's own metrics through this wrapper. The
first run asks the real model and records each answer with what it cost; later
runs replay the metrics from the cache (no model is even loaded), so evidence
features and calibrations can be refitted in seconds. A prompt that changed is a
cache miss and goes to the model, so the cache can never serve a stale answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.judge import Judge, Message, T, Usage

# Where the benchmarks keep each judge's answers: CACHE / <model file name> / answers.jsonl.
CACHE = Path(__file__).resolve().parent / ".cache" / "judge"


def with_calibration_file(tables: Mapping[str, Mapping[str, Any]], path: Path | None) -> dict[str, Mapping[str, Any]]:
    """The judge's calibration tables (the catalog's) with those a calibration file names put in
    their place (`localeval calibrate`'s, or a candidate of training/choose_decision.py
    --write-calibration): a candidate table is then measured by the metric itself, as
    `localeval score --calibration` would use it. The file is read and checked against the two judge
    metrics the benchmarks run as score checks it, before any judge call: a bad file stops the run
    with the error naming it."""
    if path is None:
        return dict(tables)
    from localeval.calibration.combination import checked_calibration
    from localeval.errors import ConfigError
    from localeval.metrics import calibration_tasks, create_metric

    try:
        calibration = checked_calibration(str(path), [create_metric("context_relevance", {}), create_metric("context_recall", {})], calibration_tasks())
    except ConfigError as error:
        raise SystemExit(str(error)) from None
    return {**tables, **(calibration.tables if calibration else {})}


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


class CachedJudge:
    """Wraps a judge that is loaded only on the first cache miss."""

    def __init__(self, path: Path, load: Callable[[], Judge], calibration: Mapping[str, Mapping[str, Any]]) -> None:
        self.path = path
        self._load = load
        self._judge: Judge | None = None
        self._calibration = calibration
        self._entries: dict[str, Any] = {}
        self.misses = 0
        self.seconds = 0.0  # judge seconds of the answers given, as measured when each was first asked
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self._entries[entry["k"]] = entry["v"]
        path.parent.mkdir(parents=True, exist_ok=True)
        self._out = open(path, "a", encoding="utf-8")

    def _inner(self) -> Judge:
        if self._judge is None:
            self._judge = self._load()
        return self._judge

    def _remember(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._entries:
            self.misses += 1
            self._entries[key] = make()
            self._out.write(json.dumps({"k": key, "v": self._entries[key]}) + "\n")
            self._out.flush()
        return self._entries[key]

    @property
    def context_size(self) -> int:
        return int(self._remember(_key("context_size"), lambda: self._inner().context_size))

    @property
    def calibration(self) -> Mapping[str, Mapping[str, Any]]:
        return self._calibration

    def count_tokens(self, text: str) -> int:
        return int(self._remember(_key("count", text), lambda: self._inner().count_tokens(text)))

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        def ask() -> dict[str, Any]:
            probabilities, usage = self._inner().choose(messages, prefix, options)
            return {"p": probabilities, "usage": usage.__dict__}

        entry = self._remember(_key("choose", messages, prefix, list(options)), ask)
        self.seconds += entry["usage"]["seconds"]
        return list(entry["p"]), Usage(**entry["usage"])

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = 512) -> tuple[T, Usage]:
        def run() -> dict[str, Any]:
            answer, usage = self._inner().ask(messages, schema, max_tokens)
            return {"answer": answer.model_dump(), "usage": usage.__dict__}

        entry = self._remember(_key("ask", messages, schema.__name__, schema.model_json_schema(), max_tokens), run)
        self.seconds += entry["usage"]["seconds"]
        return schema.model_validate(entry["answer"]), Usage(**entry["usage"])

    def describe(self) -> dict[str, Any]:
        return self._remember(_key("describe"), lambda: self._inner().describe())  # type: ignore[no-any-return]

    def close(self) -> None:
        self._out.close()
        if self._judge is not None:
            self._judge.close()
