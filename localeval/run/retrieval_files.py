"""`localeval score RUN --qrels QRELS`: a TREC or BEIR run and its qrels scored as samples.

The run and qrels are read whole (localeval.data.trec, every line checked), written as JSON Lines
samples into a private temporary folder, and that file is scored as any input is: resume, the
reports, the summary and every gate work unchanged, and the samples' SHA-256 is what a resume
compares. The results header records the files the samples were read from, each with its path and
SHA-256 (`read_from`: hashed before and after reading, so a file that changed meanwhile is refused,
never recorded with another file's hash), and names the run as the input, so a rerun with --no-timing writes the
same bytes (the temporary path is never recorded).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from localeval.data.files import STDIO, file_sha256
from localeval.data.results import dumps_json
from localeval.data.trec import read_qrels, read_queries, read_run, retrieval_samples
from localeval.errors import ConfigError
from localeval.run.settings import RunSettings

SAMPLES_NAME = "samples.jsonl"


def check_retrieval_files(settings: RunSettings) -> None:
    """The run, qrels and queries are regular files, and no option asks what a run file cannot give."""
    if settings.queries is not None and settings.qrels is None:
        raise ConfigError("--queries gives the question text of a run file's queries: it needs --qrels (and INPUT, the run)")
    if settings.qrels is None:
        return
    if settings.input == STDIO:
        raise ConfigError("--qrels: INPUT is then the run file, which is read from a file, not standard input")
    for option, path in (("INPUT, the run file,", settings.input), ("--qrels", settings.qrels), ("--queries", settings.queries)):
        if path is not None and not Path(path).is_file():
            raise ConfigError(f"{option} {path}: not a file")
    if settings.map:
        raise ConfigError("--map renames the keys of JSON Lines samples; a run and qrels file have none to rename")
    if settings.ray is not None:
        raise ConfigError("--ray reads a JSON Lines file every worker can open; score a run and qrels file without --ray (the rank metrics take seconds)")


@contextmanager
def samples_from_run_files(settings: RunSettings) -> Iterator[RunSettings]:
    """The settings of the same run with INPUT the samples read from the run, qrels and queries
    files (a JSON Lines file removed when the run ends) and `read_from` naming those files."""
    assert settings.qrels is not None  # the caller's condition
    read_from = {"run": settings.input, "qrels": settings.qrels, **({"queries": settings.queries} if settings.queries else {})}
    try:
        hashed = {role: file_sha256(path) for role, path in read_from.items()}
        run, qrels = read_run(settings.input), read_qrels(settings.qrels)
        queries = read_queries(settings.queries) if settings.queries is not None else None
        changed = [path for role, path in read_from.items() if file_sha256(path) != hashed[role]]
    except OSError as error:  # a file that vanished or may not be read: named, exit 2
        raise ConfigError(f"cannot read {error.filename}: {error.strerror}") from None
    if changed:  # the SHA-256 recorded must be that of the bytes scored
        raise ConfigError(f"{changed[0]} changed while it was read: score it again once nothing is writing to it")
    with tempfile.TemporaryDirectory(prefix="localeval-run-") as folder:
        converted = Path(folder) / SAMPLES_NAME
        with open(converted, "w", encoding="utf-8") as out:
            for sample in retrieval_samples(run, qrels, queries):
                out.write(dumps_json(sample) + "\n")
        described = {role: {"path": path, "sha256": hashed[role]} for role, path in read_from.items()}
        yield settings.model_copy(update={"input": str(converted), "qrels": None, "queries": None, "read_from": described})
