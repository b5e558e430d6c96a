"""Helpers for users' own tests: gate a test on a metric, load the judge once per test run,
and a scripted judge that needs no model.

    from localeval.testing import ScriptedJudge, assert_metric, shared_judge

    def test_retrieval_recall():
        assert_metric(samples, "context_recall", threshold=0.8, judge=shared_judge())

    def test_my_pipeline_writes_scores():  # the plumbing, without a model
        run = evaluate(samples, ["context_recall"], judge=ScriptedJudge(lambda messages: 0.9))

    def supported(messages):  # answer by what is asked: prompt_fields reads any judge prompt
        kind, fields = prompt_fields(messages)
        return kind == "attribution" and fields["statement"] in fields["document"]

A failure lists the failing samples with their scores and the reasons.
"""

from __future__ import annotations

import atexit
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from localeval.api import evaluate
from localeval.data.results import Outcome, ResultRow
from localeval.errors import ConfigError, JudgeError
from localeval.graders.judge_units import ShortAnswer
from localeval.judge import Judge, Message, T, Usage, load_judge
from localeval.judge.prompts import ATTRIBUTION_USER, ENTITIES_SYSTEM, ENTITIES_USER, QUESTIONS_SYSTEM, QUESTIONS_USER, RELEVANCE_USER, USEFULNESS_USER
from localeval.metrics import create_metric, minimum_refused
from localeval.reports import explain, score_text
from localeval.run.runner import SampleLike


def _template_pattern(template: str) -> re.Pattern[str]:
    """A regular expression that reads a prompt template's placeholders back out of its text."""
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile("".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.*?)" for i, part in enumerate(parts)) + r"\Z", re.S)


# The questions a judge metric asks, by kind: attribution (context_recall, faithfulness,
# factual_correctness: document, statement), usefulness (context_precision: question, answer,
# paragraph), relevance (context_relevance: question, paragraph), all Yes/No; questions
# (answer_relevancy's structured request: response, count) and entities (context_entity_recall's:
# text).
PROMPT_KINDS = {
    "attribution": _template_pattern(ATTRIBUTION_USER),
    "usefulness": _template_pattern(USEFULNESS_USER),
    "relevance": _template_pattern(RELEVANCE_USER),
    "questions": _template_pattern(QUESTIONS_USER),
    "entities": _template_pattern(ENTITIES_USER),
}
# A kind whose instructions are in the system message (answer_relevancy's count): that message
# must match too, and its placeholders are read from it.
SYSTEM_KINDS = {"questions": _template_pattern(QUESTIONS_SYSTEM), "entities": _template_pattern(ENTITIES_SYSTEM)}


def prompt_fields(messages: list[Message]) -> tuple[str, dict[str, str]]:
    """What a judge prompt asks about, for a ScriptedJudge's script: its kind (a PROMPT_KINDS
    key) and the texts filled into it (an attribution prompt's "document" and "statement"...),
    read from its last message (and answer_relevancy's count from its system message);
    ("other", {}) for a prompt of another shape (a rubric's, the claims or short-answer requests,
    the numbered choice)."""
    text = messages[-1]["content"] if messages else ""
    for kind, pattern in PROMPT_KINDS.items():
        found = pattern.match(text)
        system = SYSTEM_KINDS.get(kind)
        head = system.match(messages[0]["content"]) if system else None
        if found and (head or not system):
            fields = {**(head.groupdict() if head else {}), **found.groupdict()}
            return kind, {name: value for name, value in fields.items() if name != "topic"}
    return "other", {}


class ScriptedJudge:
    """A judge without a model, for testing what surrounds the judge (inspect_ai's mock model
    is the pattern). Every call is recorded in `calls`.

    `verdict(messages)` gives the probability of "Yes" for each Yes/No question (a bool is
    certainty; `prompt_fields(messages)` says what is asked); the default says yes to everything. `answer(messages, schema)` gives the
    dict `ask` returns (context_relevance's short answer, the claims option, answer_relevancy's
    `{"noncommittal": 0 or 1, "questions": [...], "reason": ...}`, the reason read when noncommittal;
    context_entity_recall's `{"entities": [...]}`); the default gives
    context_relevance an empty answer (no sentence preferred) and is an error for the others.
    """

    def __init__(
        self,
        verdict: Callable[[list[Message]], float | bool] | None = None,
        answer: Callable[[list[Message], type[BaseModel]], dict[str, Any]] | None = None,
        *,
        context_size: int = 4096,
        calibration: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self._verdict = verdict or (lambda messages: 1.0)
        self._answer = answer
        self._context_size = context_size
        self._calibration = dict(calibration or {})
        self.calls: list[list[Message]] = []

    @staticmethod
    def _usage(messages: list[Message]) -> Usage:
        tokens = sum(len(m["content"]) for m in messages) // 4
        return Usage(prompt_tokens=tokens, prompt_evaluated=tokens, completion_tokens=0, seconds=0.0)

    @property
    def context_size(self) -> int:
        return self._context_size

    @property
    def calibration(self) -> Mapping[str, Mapping[str, Any]]:
        return self._calibration

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        """Yes/No: the script's probability for the first option (Yes), the rest for the second.
        A numbered choice ("0" for none, then one option per sentence): the script's probability
        shared evenly by the sentences, the rest for "0" (saying yes to everything picks no one)."""
        self.calls.append(messages)
        value = float(self._verdict(messages))
        if len(options) > 2:
            return [1.0 - value, *[value / (len(options) - 1)] * (len(options) - 1)], self._usage(messages)
        return [value, 1.0 - value], self._usage(messages)

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = 512) -> tuple[T, Usage]:
        self.calls.append(messages)
        if self._answer is None:
            if schema is ShortAnswer:
                return schema.model_validate({"answer": ""}), self._usage(messages)
            raise JudgeError("ScriptedJudge has no answer script for ask()")
        return schema.model_validate(self._answer(messages, schema)), self._usage(messages)

    def describe(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": "scripted"}

    def close(self) -> None:
        """Nothing to free."""


@lru_cache(maxsize=4)
def shared_judge(model: str | None = None, n_ctx: int | None = None, n_threads: int | None = None, cache: str | bool | None = None) -> Judge:
    """The judge, loaded on first use and reused by every later call in the process
    (so a test session loads the model once). It lives as long as the process, so it is
    closed at exit, before the interpreter tears down what llama.cpp's finaliser needs.
    Its answers are kept in the verdict cache (`cache`: a file, or False for none; default
    $LOCALEVAL_CACHE, else the user's), so a test suite run again asks the judge only about
    what changed, and does not load the model at all when nothing did."""
    judge = load_judge(model, n_ctx=n_ctx, threads=n_threads, cache=cache)
    atexit.register(judge.close)
    return judge


def assert_metric(
    samples: Iterable[SampleLike],
    metric: str,
    threshold: float,
    *,
    judge: Judge | None = None,
    options: Mapping[str, Any] | None = None,
    allow_nan: bool = True,
) -> list[dict[str, Any]]:
    """Assert every sample scores >= threshold on `metric`; return the results.

    The rule of the command line's `-t`: a sample that could not be scored fails; a NaN score
    (metric undefined for the sample) fails only with allow_nan=False; and a gate that read no
    score at all (an empty input, every sample NaN: every response blank, nothing retrieved)
    fails, saying that nothing was scored. The judge metrics need `judge` (for example
    `shared_judge()`).
    """
    refused = minimum_refused(metric, "assert_metric's threshold for")
    if refused is not None:
        raise ConfigError(refused)
    built = create_metric(metric, options)
    if built.uses_judge() and judge is None:
        judge = shared_judge()
    run = evaluate(samples, [built], judge=judge)
    if not run.results:
        raise AssertionError(f"no sample to check {metric} on: an empty input never passes (as on the command line)")
    failing = []
    passed = 0
    for result in run.results:
        row = ResultRow(**result)
        outcome = row.outcome(metric, threshold)
        passed += outcome is Outcome.PASS
        if outcome in (Outcome.FAIL, Outcome.ERROR) or (outcome is Outcome.NAN and not allow_nan):
            failing.append(f"  {row.id} (line {row.line}): {metric} = {score_text(row, metric)}: {explain(row, metric)}")
    if failing:
        header = f"{len(failing)} of {len(run.results)} samples below {metric} >= {threshold}:"
        raise AssertionError("\n".join([header, *failing]))
    if not passed:  # nothing failed and nothing passed: every sample is NaN
        raise AssertionError(
            f"nothing was scored: {metric} is undefined (NaN) for all {len(run.results)} samples, so the gate read no score "
            "and does not pass (as on the command line)"
        )
    return run.results
