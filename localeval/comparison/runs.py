"""One results file read whole for a comparison: its header (what produced it) and its rows.

A comparison needs both runs' rows at once (pairing by id), so unlike `report` it keeps them; a
20,000-sample file is a few tens of megabytes. The file must be what `localeval score -o` wrote:
a header line first, because the setup check (another judge, other options) is read from it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.data.results import FORMAT, ResultRow, RunHeader, read_results
from localeval.errors import ConfigError, InputError


@dataclass(frozen=True)
class ComparedRun:
    """A results file: its path as given, its header's `run` object and its rows in file order."""

    path: str
    run: dict[str, Any]
    rows: list[ResultRow]


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while two runs' rows are read and compared: the rows hold no
    cycles, and with tens of thousands of them alive each collection walks them all again (on two
    20,000-sample files, 60% of the time went to it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_run(path: str | Path, role: str) -> ComparedRun:
    """The results file at `path` (the comparison's `role`: BASE or CANDIDATE). A line that is not a
    result is an InputError naming the file, the line and the field; a file with no header, or
    two, is refused."""
    name = str(path)
    if not Path(path).is_file():
        raise ConfigError(f"{role} {name} is not a file: compare reads two results files (localeval score -o FILE)")
    items = read_results(Path(path))
    not_results = f'not a localeval results file: its first line is not a header with "format": "{FORMAT}" (compare reads what localeval score -o writes)'
    try:
        first = next(items, None)
    except InputError as error:  # the first line is neither a header nor a row: another kind of file
        raise InputError(name, error.line, "format", f"{not_results}: {error.reason}") from None
    if first is None:
        raise InputError(name, 1, "format", f'not a localeval results file: it is empty, with no header line "format": "{FORMAT}"')
    number, header = first
    if not isinstance(header, RunHeader):
        raise InputError(name, number, "format", not_results)
    rows: list[ResultRow] = []
    for number, item in items:
        if isinstance(item, RunHeader):
            raise InputError(name, number, "format", "a second results header: this file joins two runs (compare one run against another)")
        rows.append(item)
    return ComparedRun(name, header.run, rows)
