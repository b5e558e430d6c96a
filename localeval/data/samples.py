"""One RAG sample, with ragas' field names, and how a JSON object becomes one.

ragas' names are the ones users already have in their files; the legacy names of
ragas 0.1 (`question`, `contexts`, `ground_truth`, `answer`, `ground_truths`) are
accepted too, so old datasets score without a conversion step.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from localeval.errors import InputError

ContextId = str | int
# A reference context's graded relevance (0 judged not relevant, higher more relevant; nDCG's gain):
# a finite number, never negative (the rank metrics would otherwise count a negative gain).
Grade = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
GRADES_FIELD = "reference_context_grades"

# legacy name -> ragas name. `ground_truths` is a list whose first element is the
# reference (ragas 0.1 behaviour), handled separately below.
LEGACY_NAMES: dict[str, str] = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "ground_truth": "reference",
    "answer": "response",
}
LEGACY_LIST_REFERENCE = "ground_truths"


T = TypeVar("T")


class FrozenList(list[T]):
    """A list that refuses to change: a Sample's lists. Every metric of a run reads the same
    Sample, so a metric that sorted `retrieved_contexts` in place would reorder them for every
    metric after it; this way it gets a TypeError (its own error for that sample) and the others
    read the contexts as they were read. Still a list: equality, JSON, pickling and `isinstance`
    are a list's, so code that reads samples is unchanged."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a Sample's lists are read-only (every metric reads the same sample): change a copy, list(...)")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList[T]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList[T]:
        return self  # its items are strings and integers


_LIST_FIELDS = ("retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids", GRADES_FIELD)


class Sample(BaseModel):
    """A RAG sample that no reader can change: frozen, its lists FrozenLists, its `extra` a copy
    for each reader; each metric reads it as it was read. Missing fields are None; unknown
    fields are kept (`extra`)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    id: ContextId | None = None
    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference: str | None = None
    reference_contexts: list[str] | None = None
    retrieved_context_ids: list[ContextId] | None = None
    reference_context_ids: list[ContextId] | None = None
    reference_context_grades: list[Grade] | None = None
    response: str | None = None

    @model_validator(mode="after")
    def _freeze_lists(self) -> Sample:
        """Its lists as FrozenLists, in one call per sample (a validator per field cost more); grades
        are aligned with reference_context_ids, one each, or the line is refused (a grade given to
        the wrong id would move nDCG silently)."""
        fields = self.__dict__
        grades = fields[GRADES_FIELD]
        if grades is not None:
            ids = fields["reference_context_ids"]
            if ids is None:
                raise PydanticCustomError("grades_unaligned", "reference_context_grades needs reference_context_ids: a grade is the relevance of the reference id at its position")
            if len(grades) != len(ids):
                raise PydanticCustomError(
                    "grades_unaligned", "{grades} grades for {ids} reference_context_ids: one grade per reference id, in the same order", {"grades": len(grades), "ids": len(ids)}
                )
        for name in _LIST_FIELDS:
            value = fields[name]
            if value is not None:
                fields[name] = FrozenList(value)
        return self

    @property
    def extra(self) -> dict[str, Any]:
        """Fields this model does not know, passed through to the results: a deep copy, so what
        one reader does to it no other reader (a metric, the results row) sees."""
        return copy.deepcopy(self.__pydantic_extra__) if self.__pydantic_extra__ else {}


def mapped_field(target: str) -> str:
    """The ragas field a --map target names: a legacy name is its ragas field (`--map gen=answer`
    reads `gen` as `response`)."""
    return LEGACY_NAMES.get(target, target)


def _rename_legacy(obj: dict[str, Any], field_map: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Map the line's own legacy keys to ragas names, then apply the user's field map (which
    replaces a field the line has itself, as `--map gen=response` replaces the line's `response`);
    return the new dict and ragas->user key names, which let an error name the key as the user
    wrote it. An error only ever names keys the line has."""
    data = dict(obj)
    mapped = {source: data.pop(source) for source in field_map if source in data}
    written_as: dict[str, str] = {}
    for legacy, name in LEGACY_NAMES.items():
        if legacy not in data:
            continue
        value = data.pop(legacy)
        if name in data and data[name] != value:
            raise ValueError(f"'{legacy}' and '{name}' are both given and differ; keep one")
        data.setdefault(name, value)
        written_as.setdefault(name, legacy)
    for source, value in mapped.items():
        target = mapped_field(field_map[source])
        data[target] = value
        written_as[target] = source
    if LEGACY_LIST_REFERENCE in data:
        truths = data.pop(LEGACY_LIST_REFERENCE)
        if not isinstance(truths, list) or not all(isinstance(t, str) for t in truths):
            raise _FieldProblem(LEGACY_LIST_REFERENCE, "must be a list of strings")
        if truths and "reference" not in data:
            data["reference"] = truths[0]
            written_as["reference"] = LEGACY_LIST_REFERENCE
    return data, written_as


_LEGACY_KEYS = frozenset(LEGACY_NAMES) | {LEGACY_LIST_REFERENCE}
_ID_FIELDS = frozenset({"id", "retrieved_context_ids", "reference_context_ids"})


def integral_float_as_int(value: Any) -> Any:
    """pandas writes an integer column with gaps as floats (7.0); ragas reads those ids as 7.
    7.5 stays a float, and is then refused: an id is a string or an integer. The labels reader
    (localeval.data.labels) reads a row's id the same way, so a label joins the sample it names."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _integral_ids(data: dict[str, Any]) -> None:
    """Integral float ids as integers, in place (only on the slow path: the fast one refuses floats)."""
    for name in _ID_FIELDS:
        value = data.get(name)
        if isinstance(value, list):
            data[name] = [integral_float_as_int(item) for item in value]
        elif value is not None:
            data[name] = integral_float_as_int(value)
_VALIDATOR = Sample.__pydantic_validator__  # skips model_validate_json's per-call wrapper


def parse_sample_json(raw: bytes | str) -> Sample | None:
    """The common line (valid, ragas names) in one pass of pydantic's Rust JSON parser; else None.

    Decoding with json.loads and then validating the dict costs more (two passes),
    and for the non-LLM metrics that parsing is most of the run. Anything unusual
    (a legacy name, invalid JSON or field) returns None, and the caller takes the
    general path, which gives the same sample or the precise error.
    """
    try:
        sample: Sample = _VALIDATOR.validate_json(raw)
    except ValueError:
        return None
    extra = sample.__pydantic_extra__
    if extra and not _LEGACY_KEYS.isdisjoint(extra):
        return None
    return sample


class _FieldProblem(ValueError):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def _describe(error: Mapping[str, Any]) -> str:
    """Pydantic's message plus what it got, shortened so a 10 MB line stays readable."""
    got = repr(error.get("input"))
    if len(got) > 60:
        got = got[:57] + "..."
    return f"{error['msg']} (got {got})"


def parse_sample(obj: Any, path: str = "<input>", line: int = 0, field_map: Mapping[str, str] | None = None) -> Sample:
    """Validate one decoded JSON value as a Sample, or raise InputError naming the field.

    `field_map` renames the user's keys to ragas names first (`{"question_text": "user_input"}`).
    """
    if not isinstance(obj, dict):
        raise InputError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
    try:
        data, written_as = _rename_legacy(obj, field_map or {})
    except _FieldProblem as problem:
        raise InputError(path, line, problem.field, problem.reason) from None
    except ValueError as problem:
        raise InputError(path, line, None, str(problem)) from None
    _integral_ids(data)
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first["loc"]
        name = str(loc[0]) if loc else GRADES_FIELD if first["type"] == "grades_unaligned" else None
        field = written_as.get(name, name) if name else None
        if field and len(loc) > 1:
            field += "".join(f"[{part}]" for part in loc[1:] if isinstance(part, int))
        reason = first["msg"] if first["type"] == "grades_unaligned" else _describe(first)
        if name in _ID_FIELDS:
            reason = f"an id must be a string or an integer (got {_describe(first).rsplit('(got ', 1)[-1]}"
        raise InputError(path, line, field, reason) from None
