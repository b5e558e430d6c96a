"""Reading samples from JSON Lines, one line at a time.

The reader streams: it never holds the file, and a bad line becomes an InputError
for that line while every other line is still read. Every line is untrusted: it
is parsed by pydantic's JSON parser, which refuses what the results could not
hold (unpaired surrogates, numbers too long to be numbers, nesting deeper than a
few hundred levels), and a line longer than MAX_LINE_BYTES is refused with a
message that says so, which also bounds memory on an endless stream without
newlines.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from pydantic_core import from_json

from localeval.data.samples import LEGACY_NAMES, Sample, mapped_field, parse_sample, parse_sample_json
from localeval.errors import InputError

STDIN = "-"
MAX_LINE_BYTES = 64 << 20  # one limit for every line localeval reads (inputs, results, labels): far above any real one, far below running out of memory
UTF8_BOM = b"\xef\xbb\xbf"  # what Windows editors put at the start of a UTF-8 file
_READ_CHUNK = 1 << 20
UTF16_MESSAGE = "the file is UTF-16, not UTF-8: convert it first (iconv -f UTF-16 -t UTF-8 IN > OUT, or save it as UTF-8)"


@dataclass(frozen=True)
class Record:
    """One non-blank input line: its 1-based number and the sample or why it is bad; `notice`
    says what a person should know about how it was read (a --map that replaced a field)."""

    line: int
    sample: Sample | None
    error: InputError | None = None
    notice: str | None = None


class LineSource(Protocol):
    """What lines are read from: a binary file, standard input, or the first bytes of a file."""

    def readline(self, size: int = -1, /) -> bytes: ...


class Prefix:
    """The first `limit` bytes of a stream and no more: a run reads the bytes it hashed, so rows
    appended while it runs are not scored under a hash that does not cover them."""

    def __init__(self, stream: LineSource, limit: int) -> None:
        self.stream = stream
        self.left = limit

    def readline(self, size: int = -1, /) -> bytes:
        if self.left <= 0:
            return b""
        raw = self.stream.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(raw)
        return raw


def open_binary(path: str) -> BinaryIO:
    if path == STDIN:
        return sys.stdin.buffer
    return open(path, "rb")


def bounded_lines(stream: LineSource) -> Iterator[bytes | None]:
    """The stream's lines; None for a line longer than MAX_LINE_BYTES (its bytes are skipped,
    never held): the one reader of lines, so no file can make localeval hold a line in memory."""
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):  # skip the rest of the overlong line
            raw = stream.readline(_READ_CHUNK)
        yield None


def numbered_lines(stream: LineSource) -> Iterator[tuple[int, bytes | None]]:
    """The non-blank lines of a JSON Lines stream with their 1-based numbers (a UTF-8 byte
    order mark on line 1 is dropped); None for a line longer than MAX_LINE_BYTES.
    The one place lines are numbered: the local reader and Ray workers both use it."""
    for number, raw in enumerate(bounded_lines(stream), start=1):
        if raw is not None:
            if number == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM) :]
            if not raw or raw.isspace():  # isspace stops at the first non-blank byte; strip() would copy
                continue
        yield number, raw


def to_record(number: int, raw: bytes | None, name: str, field_map: Mapping[str, str] | None = None) -> Record:
    """A numbered line as a Record: the sample, or the InputError that says what is wrong."""
    try:
        if raw is None:
            raise InputError(name, number, None, f"line longer than {MAX_LINE_BYTES >> 20} MiB; not read")
        sample, notice = _parse_line(raw, name, number, field_map)
        return Record(number, sample, notice=notice)
    except InputError as error:
        return Record(number, None, error)


def input_name(path: str) -> str:
    """How errors name the input."""
    return "<stdin>" if path == STDIN else path


def input_lines(path: str, limit: int | None = None) -> Iterator[tuple[int, bytes | None]]:
    """The input's numbered lines (`numbered_lines`), from its first `limit` bytes when given
    (those a run hashed); the file is closed when the lines end or are abandoned."""
    stream = open_binary(path)
    try:
        yield from numbered_lines(stream if limit is None else Prefix(stream, limit))
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def read_records(path: str, *, strict: bool = False, field_map: Mapping[str, str] | None = None, limit: int | None = None) -> Iterator[Record]:
    """Yield a Record for every non-blank line; with `strict`, raise on the first bad one.

    `field_map` renames keys to ragas names (`--map`), before legacy names are read; `limit`:
    read only the file's first `limit` bytes (those a run hashed).
    """
    name = input_name(path)
    for number, raw in input_lines(path, limit):
        record = to_record(number, raw, name, field_map)
        if strict and record.error is not None:
            raise record.error
        yield record


def _looks_utf16(raw: bytes, number: int) -> bool:
    """A UTF-16 byte order mark opening the file, or the NUL byte beside every ASCII character
    that UTF-16 text has."""
    if number == 1 and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    head = raw[:64]
    return len(head) >= 8 and (head[1::2].count(0) >= len(head) // 4 or head[0::2].count(0) >= len(head) // 4)


def _replaced(obj: Any, field_map: Mapping[str, str], number: int) -> str | None:
    """What --map replaced on this line: a field the line has itself (under its ragas name or a
    legacy one), read instead from the mapped key; each named as the line writes it."""
    if not isinstance(obj, dict):
        return None
    both = []
    for key, target in field_map.items():
        field = mapped_field(target)
        own = [name for name in (field, *(legacy for legacy, ragas in LEGACY_NAMES.items() if ragas == field)) if name in obj and name not in field_map]
        if key in obj and own:
            both.append((key, own[0]))
    if not both:
        return None
    pairs = ", ".join(f"'{field}' by '{key}'" for key, field in both)
    return f"line {number} has its own value of a field --map reads from another key: {pairs} (the line's own value is replaced)"


def _parse_line(raw: bytes, name: str, number: int, field_map: Mapping[str, str] | None) -> tuple[Sample, str | None]:
    if not field_map:
        sample = parse_sample_json(raw)
        if sample is not None:
            return sample, None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if _looks_utf16(raw, number):
            raise InputError(name, number, None, UTF16_MESSAGE) from None
        raise InputError(name, number, None, f"not valid UTF-8 (byte {exc.start})") from None
    try:
        obj = from_json(raw)
    except ValueError as exc:
        if _looks_utf16(raw, number):
            raise InputError(name, number, None, UTF16_MESSAGE) from None
        raise InputError(name, number, None, f"invalid JSON: {exc}") from None
    return parse_sample(obj, name, number, field_map), _replaced(obj, field_map or {}, number)
