"""Shared fixtures: JSONL files on tmp_path, a scripted judge for control-flow tests,
and the real small GGUF judge (SmolLM2-135M), pulled once and cached between runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pytest
from pydantic import BaseModel

from localeval.judge import Message, Usage

SMALL_MODEL = "smollm2-135m"


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """Write rows (dicts are JSON-encoded, str/bytes written verbatim) as lines of a file."""

    def write(rows: Iterable[Any], name: str = "samples.jsonl") -> Path:
        path = tmp_path / name
        with open(path, "wb") as handle:
            for row in rows:
                if isinstance(row, bytes):
                    handle.write(row + b"\n")
                elif isinstance(row, str):
                    handle.write(row.encode("utf-8") + b"\n")
                else:
                    handle.write(json.dumps(row).encode("utf-8") + b"\n")
        return path

    return write


def result_rows(path: Path) -> list[dict[str, Any]]:
    """The result rows of a results file, without its run header line."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row.get("format") != "localeval-results"]


class ScriptedJudge:
    """A judge whose answers are given by a function of (messages, schema): for tests of our own arithmetic."""

    def __init__(self, answer: Callable[[list[Message], type[BaseModel]], dict[str, Any]], context_size: int = 4096) -> None:
        self._answer = answer
        self._context_size = context_size
        self.calls: list[list[Message]] = []
        self._usage = Usage(prompt_tokens=10, prompt_evaluated=10, completion_tokens=5, seconds=0.0)

    @property
    def context_size(self) -> int:
        return self._context_size

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def ask(self, messages: list[Message], schema: type[BaseModel], max_tokens: int = 512) -> tuple[BaseModel, Usage]:
        self.calls.append(messages)
        answer = schema.model_validate(self._answer(messages, schema))
        return answer, self._usage

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        """Certainty for the option the script gives for the key the prefix opens (`{"attributed": `)."""
        self.calls.append(messages)
        key = prefix.split('"')[-2]
        chosen = str(self._answer(messages, _Answer)[key])
        return [1.0 if option == chosen else 0.0 for option in options], self._usage

    def write_string(self, messages: list[Message], prefix: str, max_chars: int) -> tuple[str, Usage]:
        """The script's value for the key whose string the prefix opens (`..., "reason": "`)."""
        key = prefix.split('"')[-3]
        return str(self._answer(messages, _Answer)[key])[:max_chars], self._usage

    @property
    def thresholds(self) -> Mapping[str, float]:
        return {}

    def describe(self) -> dict[str, object]:
        return {"model": "scripted"}


class _Answer(BaseModel):
    """The schema handed to scripts for choose/write_string calls (a verdict and its reason)."""

    attributed: int
    reason: str


@pytest.fixture(scope="session")
def small_model_path() -> Path:
    """SmolLM2-135M through the real `localeval models pull` path, kept in the user's model store."""
    from localeval.models import pull

    return pull(SMALL_MODEL)


@pytest.fixture(scope="session")
def small_judge(small_model_path: Path):
    """One real llama.cpp judge for the whole test session (loading it once keeps the suite fast)."""
    from localeval.judge.llama import LlamaJudge

    return LlamaJudge(small_model_path, n_ctx=2048, n_threads=min(2, os.cpu_count() or 1), seed=0, catalog_name=SMALL_MODEL)
