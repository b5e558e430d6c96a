"""The results file: one typed row per input line, written and read here and nowhere else.

A results file is an untrusted input as soon as it leaves the run that wrote it
(`report` reads files from anywhere, `--resume` reads what a killed run left), so
every line is validated into a `ResultRow` on the way in: a line that is not one
is an error naming the file, the line and the field, and never reaches a report.
A file written by `localeval score -o FILE` starts with a `RunHeader` line that
records what produced it, so that a resume can refuse to mix two different runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, StrictInt, StrictStr, TypeAdapter, ValidationError
from pydantic_core import from_json

from localeval.data.jsonl import MAX_LINE_BYTES, numbered_lines
from localeval.errors import InputError

INPUT_ERROR_KEY = "input"  # the errors key of a line that could not be read as a sample
OMITTED_KEY = "omitted"  # the one details key of a metric whose details were left out of a row too long to write
MAX_ERROR_CHARS = 2000  # an error text in a row too long to write is cut to this
FORMAT = "localeval-results"
FORMAT_VERSION = 1

Share = Annotated[float, Strict(), Field(ge=0.0, le=1.0, allow_inf_nan=False), AfterValidator(lambda value: value + 0.0)]  # -0.0 read as 0.0: no score shows as "-0.000"
Seconds = Annotated[float, Strict(), Field(allow_inf_nan=False)]


@dataclass(slots=True)
class ResultRow:
    """Everything localeval says about one input line: scores (None = NaN or not scored,
    then `errors` says why), each metric's details, per-metric errors, the fields it
    passed through, judge usage and timing.

    A plain dataclass, because a run makes one per sample and pydantic's models cost
    more to build than the string metrics cost to compute; rows read from a file are
    validated through `ROW` (every field strict, unknown fields refused)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    line: Annotated[int, Strict(), Field(ge=1)]
    id: StrictStr | StrictInt | None = None
    scores: dict[StrictStr, Share | None] = field(default_factory=dict)
    details: dict[StrictStr, dict[StrictStr, Any]] = field(default_factory=dict)
    errors: dict[StrictStr, StrictStr] = field(default_factory=dict)
    extra: dict[StrictStr, Any] = field(default_factory=dict)
    usage: dict[StrictStr, dict[StrictStr, StrictInt]] = field(default_factory=dict)
    timing: dict[StrictStr, dict[StrictStr, Seconds]] = field(default_factory=dict)

    @property
    def unreadable(self) -> bool:
        """The input line itself could not be read as a sample."""
        return INPUT_ERROR_KEY in self.errors

    def outcome(self, metric: str, threshold: float | None) -> Outcome:
        """The one pass/fail rule every report and the exit code use."""
        if self.unreadable or metric in self.errors or metric not in self.scores:
            return Outcome.ERROR
        value = self.scores[metric]
        if value is None or math.isnan(value):  # NaN in memory, null in the file
            return Outcome.NAN
        if threshold is None or value >= threshold:
            return Outcome.PASS
        return Outcome.FAIL

    def to_dict(self, *, timing: bool = True) -> dict[str, Any]:
        """The row as the results file has it. Timing varies from run to run, so
        `timing=False` leaves it out (byte-identical reruns)."""
        scores = self.scores
        if any(value != value for value in scores.values() if value is not None):  # NaN: undefined, null in JSON
            scores = {name: None if value != value else value for name, value in scores.items()}
        data: dict[str, Any] = {"id": self.id, "line": self.line, "scores": scores, "details": self.details, "errors": self.errors}
        if self.extra:
            data["extra"] = self.extra
        if self.usage:
            data["usage"] = self.usage
        if timing and self.timing:
            data["timing"] = self.timing
        return data

    def to_line(self, *, timing: bool = True) -> str:
        return dumps_line(self.to_dict(timing=timing))

    def writable(self, *, timing: bool = True) -> tuple[ResultRow, str]:
        """The row as it can be written, and its line: never longer than a results line may be
        (MAX_LINE_BYTES, beyond which `report`, `--resume` and the reports refuse a line). A
        longer row (details that quote a huge input, a huge passed-through field) is written
        without its passed-through fields and details, each metric's details saying so, and with
        its error texts cut short: its scores, errors, usage and timing stay. A row whose id alone
        is too long becomes an error for its input line."""
        line = self.to_line(timing=timing)
        size = _encoded_size(line)
        if size <= MAX_LINE_BYTES:
            return self, line
        note = (
            f"details left out: this sample's result row was {size / (1 << 20):.1f} MiB, more than the {MAX_LINE_BYTES >> 20} MiB "
            "a results line may have (its passed-through fields are left out too)"
        )
        slim = ResultRow(
            line=self.line, id=self.id, scores=self.scores, details={name: {OMITTED_KEY: note} for name in self.details},
            errors={name: _cut(text) for name, text in self.errors.items()}, usage=self.usage, timing=self.timing,
        )
        line = slim.to_line(timing=timing)
        if _encoded_size(line) <= MAX_LINE_BYTES:
            return slim, line
        failed = ResultRow(line=self.line, errors={INPUT_ERROR_KEY: f"its result row was {size / (1 << 20):.1f} MiB and its id alone is too long for a results line"})
        return failed, failed.to_line(timing=timing)


def _encoded_size(line: str) -> int:
    """The line's size in UTF-8 bytes, counted only when its length in characters leaves doubt."""
    return len(line) if len(line) * 4 <= MAX_LINE_BYTES else len(line.encode("utf-8"))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else f"{text[:MAX_ERROR_CHARS]}... ({len(text) - MAX_ERROR_CHARS:,} characters cut)"


class Outcome(str, Enum):
    PASS = "pass"
    FAIL = "fail"  # scored below the threshold
    NAN = "nan"  # the metric is undefined for the sample: neither passes nor fails
    ERROR = "error"  # could not be scored: fails a gate, never passes one


class RunHeader(BaseModel):
    """The first line of a results file: what produced it."""

    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    version: int = FORMAT_VERSION
    run: dict[str, Any]

    def to_line(self) -> str:
        return dumps_line(self.model_dump())


ROW: TypeAdapter[ResultRow] = TypeAdapter(ResultRow)


def to_json_value(value: Any) -> Any:
    """Replace NaN and infinities by None, recursively: JSON has no NaN, readers choke on it."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    return value


# Characters that str.splitlines() (and many JSON Lines readers) treat as line breaks
# but json.dumps(ensure_ascii=False) leaves raw: escaped so one result stays one line.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


# One encoder for every line (json.dumps builds one per call). It keeps the check for circular
# values: a plugin's details that hold themselves are an error for that sample, never a crash of
# the C encoder under a raised recursion limit.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def dumps_json(obj: Any, indent: int | None = None) -> str:
    """JSON text: non-ASCII kept readable, NaN as null. A string that is not valid Unicode
    (a lone surrogate from a `\\ud800` escape) is written escaped, never as bytes that
    are not UTF-8. Values without NaN (nearly all) skip the recursive copy."""
    try:
        value = obj
        text = _ENCODER.encode(value) if indent is None else json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError:  # a NaN or infinity somewhere: replace them, then encode
        value = to_json_value(obj)
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)
    if text.isascii():  # nearly every line: nothing to check
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False, indent=indent)
    return text


def dumps_line(obj: Mapping[str, Any]) -> str:
    """One JSON line, kept to one line even where the text has Unicode line separators."""
    text = dumps_json(obj)
    return (text if text.isascii() else text.translate(_LINE_BREAKS)) + "\n"


def _first_problem(error: ValidationError) -> tuple[str | None, str]:
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"]) or None
    got = repr(first.get("input"))
    return location, f"{first['msg']} (got {got[:57] + '...' if len(got) > 60 else got})"


def parse_line(text: str | bytes, path: str, number: int) -> ResultRow | RunHeader:
    """One results line as a row or the header, or an InputError that names the line and field."""
    if len(text) > MAX_LINE_BYTES:  # a line from somewhere else than numbered_lines
        raise InputError(path, number, None, f"longer than {MAX_LINE_BYTES >> 20} MiB: not a localeval result")
    try:
        # pydantic's parser, as the input reader uses: it refuses what no report can write (an
        # unpaired surrogate from a "\ud800" escape), numbers too long and nesting too deep.
        data = from_json(text)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
        raise InputError(path, number, None, f"not a localeval result: invalid JSON ({reason})") from None
    if not isinstance(data, dict):
        raise InputError(path, number, None, f"not a localeval result: a JSON {type(data).__name__}, not an object")
    if data.get("format") == FORMAT and data.get("version") != FORMAT_VERSION:
        raise InputError(path, number, "version", f"a localeval results file of version {str(data.get('version'))[:20]}; this localeval reads version {FORMAT_VERSION}")
    try:
        return RunHeader.model_validate(data) if data.get("format") == FORMAT else ROW.validate_python(data)
    except ValidationError as exc:
        field, reason = _first_problem(exc)
        raise InputError(path, number, field, f"not a localeval result: {reason}") from None
    except RecursionError:
        raise InputError(path, number, None, "not a localeval result: nested too deeply") from None


def read_results(path: Path, *, on_error: Any = None) -> Iterator[tuple[int, ResultRow | RunHeader]]:
    """Every non-blank line of a results file, validated, with its line number.

    A bad line raises InputError, or with `on_error` is handed to it and skipped, so a
    report still shows every good row.
    """
    name = str(path)
    with open(path, "rb") as handle:
        for number, raw in numbered_lines(handle):  # as the input reader: blank lines and a byte order mark (a Windows editor's) skipped
            try:
                if raw is None:
                    raise InputError(name, number, None, f"longer than {MAX_LINE_BYTES >> 20} MiB: not a localeval result")
                yield number, parse_line(raw, name, number)
            except InputError as error:
                if on_error is None:
                    raise
                on_error(error)


def rows_only(items: Iterator[tuple[int, ResultRow | RunHeader]]) -> Iterator[ResultRow]:
    """The result rows of `read_results`, without the header."""
    return (item for _, item in items if isinstance(item, ResultRow))
