"""Reading samples from JSON Lines and writing results as they are produced.

The reader streams: it never holds the file, and a bad line becomes an InputError
for that line while every other line is still read. The writer appends one flushed
line per sample, so an interrupted run loses at most the line being written, and
`completed_lines` lets a later run resume where it stopped.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, Iterator, Mapping

from localeval.errors import InputError
from localeval.samples import Sample, parse_sample, parse_sample_json

STDIN = "-"


@dataclass(frozen=True)
class Record:
    """One non-blank input line: its 1-based number and the sample or why it is bad."""

    line: int
    sample: Sample | None
    error: InputError | None = None


def _open_binary(path: str) -> BinaryIO:
    if path == STDIN:
        return sys.stdin.buffer
    return open(path, "rb")


def read_records(path: str, *, strict: bool = False, field_map: Mapping[str, str] | None = None) -> Iterator[Record]:
    """Yield a Record for every non-blank line; with `strict`, raise on the first bad one.

    `field_map` renames keys to ragas names (`--map`), before legacy names are read.
    """
    name = "<stdin>" if path == STDIN else path
    stream = _open_binary(path)
    try:
        for number, raw in enumerate(stream, start=1):
            if raw.isspace():  # stops at the first non-blank byte; strip() would copy the line
                continue
            try:
                record = Record(number, _parse_line(raw, name, number, field_map))
            except InputError as error:
                if strict:
                    raise
                record = Record(number, None, error)
            yield record
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _parse_line(raw: bytes, name: str, number: int, field_map: Mapping[str, str] | None) -> Sample:
    if not field_map:
        sample = parse_sample_json(raw)
        if sample is not None:
            return sample
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(name, number, None, f"not valid UTF-8 (byte {exc.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(name, number, None, f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise InputError(name, number, None, "invalid JSON: nested too deeply") from None
    return parse_sample(obj, name, number, field_map)


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


def dumps_line(obj: dict[str, Any]) -> str:
    """One result as one JSON line (non-ASCII kept readable, NaN as null)."""
    return json.dumps(to_json_value(obj), ensure_ascii=False, allow_nan=False).translate(_LINE_BREAKS) + "\n"


def completed_lines(path: Path) -> dict[int, dict[str, Any]]:
    """Results already in `path`, by input line, after cutting off a torn last line.

    A run killed while writing leaves a last line without its newline; that line is
    removed (it will be scored again), never parsed as a result.
    """
    if not path.exists():
        return {}
    _truncate_torn_tail(path)
    done: dict[int, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                result = json.loads(text)
                done[int(result["line"])] = result
            except (ValueError, KeyError, TypeError):
                raise InputError(str(path), number, "line", "not a localeval result; cannot resume from this file") from None
    return done


def _truncate_torn_tail(path: Path) -> None:
    with open(path, "rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        # Walk back to the last newline; everything after it is a partial write.
        position = size
        chunk = 65536
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            block = handle.read(position - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                handle.truncate(start + cut + 1)
                return
            position = start
        handle.truncate(0)


class ResultWriter:
    """Appends one flushed JSON line per result to a file or to standard output."""

    def __init__(self, path: str | None, *, append: bool = False) -> None:
        self._owned = path not in (None, STDIN)
        self._handle: IO[str] | None
        if path is None:
            self._handle = None
        elif path == STDIN:
            self._handle = sys.stdout
        else:
            self._handle = open(path, "a" if append else "w", encoding="utf-8")

    def write(self, result: dict[str, Any]) -> None:
        if self._handle is None:
            return
        self._handle.write(dumps_line(result))
        self._handle.flush()

    def close(self) -> None:
        if self._owned and self._handle is not None:
            self._handle.close()

    def __enter__(self) -> "ResultWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
