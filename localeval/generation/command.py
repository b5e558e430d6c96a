"""`localeval generate` behind the CLI: inputs read and checked, the judge opened, the run, the summary.

Kept out of cli.py so the command's parsing stays one decorator list there; everything the
command does is here, named as the CLI names it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.data.files import atomic_text, cannot_write, refuse_overlaps
from localeval.errors import ConfigError
from localeval.generation.chunking import chunk_documents
from localeval.generation.documents import Chunk, read_chunks, read_folder
from localeval.generation.runner import GenerateSummary, generate
from localeval.judge.backends import open_backend
from localeval.judge.spec import JudgeSpec
from localeval.models.embedding import MODEL_NAME


def read_input(docs: str | None, chunks_path: str | None, chunk_size: int) -> list[Chunk]:
    """The chunks to write from: a folder chunked here, or the user's own chunks (one of the two)."""
    if (docs is None) == (chunks_path is None):
        raise ConfigError("give DOCS (a folder of .txt, .md and .html files) or --chunks FILE, one of the two")
    if chunks_path is not None:
        return read_chunks(chunks_path)
    assert docs is not None
    return chunk_documents(read_folder(docs), chunk_size)


def embedder_or_none() -> Any | None:
    """The embedding model when it is pulled; None (word overlap instead, said in the summary) when not."""
    from localeval.models import store

    if store.state(MODEL_NAME) != "pulled":
        return None
    from localeval.models.embedding import load_embedder

    return load_embedder()


def summary_path(output: str) -> str:
    """Where the summary goes: beside the output, `testset.jsonl` -> `testset.summary.json`."""
    path = Path(output)
    return str(path.with_name(path.stem + ".summary.json"))


def write_chunks(chunks: list[Chunk], path: str) -> None:
    """The chunks DOCS was cut into, one JSON object a line ({"id", "text", "document"}): what a
    retriever indexes so that the ids it returns are the test set's gold ids."""
    with atomic_text(path, "the chunks to") as out:
        for chunk in chunks:
            out.write(json.dumps({"id": chunk.id, "text": chunk.text, "document": chunk.document}, ensure_ascii=False) + "\n")


def run_generate(
    docs: str | None, chunks_path: str | None, wanted: int, output: str, chunk_size: int, two_context_share: float, resume: bool,
    judge_settings: dict[str, Any], on_candidate: Callable[[GenerateSummary], None], chunks_out: str | None = None, rewrites: bool = True,
) -> GenerateSummary:
    """The whole command: the summary is returned, and written as JSON beside the output."""
    from localeval.judge.cache import cache_path
    from localeval.models import store

    read = {"DOCS": docs or "", "--chunks": chunks_path or "", "the verdict cache": str(cache_path(judge_settings.get("cache")) or ""), **store.files_a_run_reads(judge_settings.get("model"))}
    refuse_overlaps(read, {"-o": output, "the summary": summary_path(output), "--chunks-out": chunks_out or ""})
    chunks = read_input(docs, chunks_path, chunk_size)
    try:  # before the judge is loaded: a folder that does not exist is the user's to fix now, not after minutes
        open(output, "a", encoding="utf-8").close()
    except OSError as exc:
        raise cannot_write("the test set to", output, exc) from None
    if chunks_out:
        write_chunks(chunks, chunks_out)
    spec = JudgeSpec.of(judge_settings, "generate")
    embedder = embedder_or_none()
    judge = open_backend(spec)
    try:
        summary = generate(
            chunks, wanted, output, judge, seed=spec.seed or 0, two_context_share=two_context_share, embedder=embedder, resume=resume, on_candidate=on_candidate, rewrites=rewrites,
        )
    finally:
        judge.close()
    with atomic_text(summary_path(output), "the summary to") as out:
        out.write(json.dumps(summary.to_json_dict(), indent=2, ensure_ascii=False) + "\n")
    return summary
