"""A user's own task text for a judge metric (promptfoo's `rubricPrompt`, ragas' adapted prompts).

A rubric file replaces the user message the judge reads; named placeholders
(`{statement}`, `{document}`...) are filled per prompt. They are checked when the
metric is built, so a typo is an error that names the placeholder before the
judge is loaded, not a run of prompts with a literal "{statment}" in them. Literal
braces are written doubled (`{{`, `}}`), as in Python's str.format.

The verdict is still read from the logits of "Yes" and "No", so a rubric must ask
for a Yes or No answer. The file's path and SHA-256 are recorded in the results'
provenance (its text is not), and a resume with a changed rubric is refused.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from localeval.data.files import read_small_file
from localeval.errors import ConfigError

MAX_RUBRIC_BYTES = 64 * 1024  # a task text, not a document


class Rubric(BaseModel):
    """A checked rubric: where it came from, its hash, and its text (not serialised)."""

    model_config = ConfigDict(frozen=True)
    OPTION_TYPE: ClassVar[str] = "path"  # how the option is given (localeval metrics, docs/metrics.md)

    path: str
    sha256: str
    text: str = Field(exclude=True, repr=False)

    def fill(self, **values: str) -> str:
        return self.text.format(**values)


def _placeholders(text: str) -> list[str]:
    """The named fields of a str.format template; anything else in braces is an error."""
    names = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:  # a lone "{" or "}"
        raise ValueError(f"{error} (write literal braces as '{{{{' and '}}}}')") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"placeholder '{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}' is not a plain name")
        names.append(name)
    return names


def load_rubric(path: str | Path, allowed: frozenset[str], required: frozenset[str]) -> Rubric:
    """Read and check a rubric file; ValueError says what is wrong with it."""
    file = Path(path)
    try:
        data = read_small_file(file, MAX_RUBRIC_BYTES, "rubric file")
    except ConfigError as error:  # pydantic validators report ValueError
        raise ValueError(str(error)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"rubric file '{file}' is not UTF-8 (byte {error.start})") from None
    names = _placeholders(text)
    unknown = sorted(set(names) - allowed)
    if unknown:
        raise ValueError(f"rubric file '{file}': unknown placeholder {', '.join('{' + n + '}' for n in unknown)}; known: {', '.join('{' + n + '}' for n in sorted(allowed))}")
    missing = sorted(required - set(names))
    if missing:
        raise ValueError(f"rubric file '{file}': missing placeholder {', '.join('{' + n + '}' for n in missing)}")
    return Rubric(path=str(file), sha256=hashlib.sha256(data).hexdigest(), text=text)


def rubric_validator(allowed: frozenset[str], required: frozenset[str]) -> Callable[[Any], Any]:
    """A pydantic before-validator for a metric's `rubric` option: a path becomes a checked Rubric."""

    def validate(value: Any) -> Any:
        if value is None or isinstance(value, Rubric):
            return value
        if not isinstance(value, (str, Path)):
            raise ValueError("expected the path of a rubric file")
        return load_rubric(value, allowed, required)

    return validate


class JudgeTaskParams(BaseModel):
    """Options of a metric that asks the judge a task a rubric may replace (a rubric with the
    verifier alone is refused by localeval.metrics.judging.JudgeParams, which holds `grader`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
