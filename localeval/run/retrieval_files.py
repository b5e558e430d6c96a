"""`localeval score RUN --qrels QRELS`: a TREC or BEIR run and its qrels scored as samples.

The run and qrels are read whole (localeval.data.trec, every line checked), written as JSON Lines
samples into a private temporary folder, and that file is scored as any input is: resume, the
reports, the summary and every gate work unchanged, and the samples' SHA-256 is what a resume
compares. The results header records the files the samples were read from, each with its path and
SHA-256 (`read_from`: the hash of the bytes read, taken as they are read, so a file that changes
meanwhile is never recorded with the hash of other bytes), and names the run as the input, so a rerun with --no-timing writes the
same bytes (the temporary path is never recorded).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from localeval.data.files import STDIO
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
    digests = {role: hashlib.sha256() for role in read_from}
    try:
        run, qrels = read_run(settings.input, digests["run"]), read_qrels(settings.qrels, digests["qrels"])
        queries = read_queries(settings.queries, digests["queries"]) if settings.queries is not None else None
    except OSError as error:  # a file that vanished or may not be read: named, exit 2
        raise ConfigError(f"cannot read {error.filename}: {error.strerror or error}") from None
    with tempfile.TemporaryDirectory(prefix="localeval-run-") as folder:
        converted = Path(folder) / SAMPLES_NAME
        with open(converted, "w", encoding="utf-8") as out:
            for sample in retrieval_samples(run, qrels, queries):
                out.write(dumps_json(sample) + "\n")
        del run, qrels, queries  # the samples file holds them now: not kept in memory while it is scored
        described = {role: {"path": path, "sha256": digests[role].hexdigest()} for role, path in read_from.items()}
        yield settings.model_copy(update={"input": str(converted), "qrels": None, "queries": None, "read_from": described})
