"""Run and qrels files as TREC and BEIR ship them, read into samples for the rank metrics.

A retrieval team has a run file and a qrels file, not RAG samples; `localeval score RUN --qrels
QRELS` reads them directly (no conversion script on the user's side). The layouts, told apart by
their content:

- a TREC run: `qid Q0 docid rank score tag`, whitespace-separated (the rank column is not read:
  trec_eval orders by score);
- a BEIR run: one JSON object `{qid: {docid: score}}` (BEIR's `results`, ranx's and pytrec_eval's
  run dictionary);
- TREC qrels: `qid iteration docid relevance`;
- BEIR qrels: `query-id<TAB>corpus-id<TAB>score`, with or without that header line;
- queries (optional): BEIR's queries.jsonl, `{"_id": ..., "text": ...}` a line, for the question text.

A ranking is ordered as trec_eval orders it: by score, highest first, and equal scores by docid
in descending string order (pytrec_eval agrees: tests/test_rank_parity.py). Every line is
untrusted: a line that is not one of the layouts stops the read with the file, the line and the
field. Ids are strings, as the files give them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from operator import gt, itemgetter
from pathlib import Path
from typing import Any, Protocol

from pydantic_core import from_json

from localeval.data.jsonl import MAX_LINE_BYTES
from localeval.errors import InputError

BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")


class Digest(Protocol):
    """A hashlib object: a reader gives it every byte it reads (the header records that hash)."""

    def update(self, data: bytes, /) -> None: ...


@dataclass
class Judgements:
    """A qrels file: each query's judged ids with their relevance, in file order."""

    by_query: dict[str, dict[str, float]] = field(default_factory=dict)


BLOCK_BYTES = 4 << 20  # a run file is read this much at a time: its millions of lines split and decoded in C, not one call each


def _decoded(lines: bytes, path: str, first: int) -> str:
    """A block of whole lines as text; a byte that is not UTF-8 names its line and its place there."""
    try:
        return lines.decode("utf-8")
    except UnicodeDecodeError:
        for number, line in enumerate(lines.split(b"\n"), start=first):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                raise InputError(path, number, None, f"not valid UTF-8 (byte {error.start})") from None
        raise  # not reached: some line failed to decode


def _refuse_overlong(whole: bytes, path: str, first: int) -> None:
    """Name the first line of a block longer than MAX_LINE_BYTES. Only the block's first line can
    be (the one begun in the block before), so this runs only when the block itself is that long."""
    for number, line in enumerate(whole.split(b"\n"), start=first):
        if len(line) > MAX_LINE_BYTES:
            raise InputError(path, number, None, f"line longer than {MAX_LINE_BYTES >> 20} MiB")


def text_blocks(path: str, digest: Digest | None = None) -> Iterator[tuple[int, list[str]]]:
    """The file's lines, decoded, a block at a time: (the number of the block's first line, from 1;
    its lines without their newline). Byte order marks opening line 1 are dropped (after decoding:
    a bad byte's place on that line counts them); a line longer than MAX_LINE_BYTES stops the read,
    naming its line, and is never held whole. `digest` (a hashlib object) is given every byte read,
    so its hash is that of the bytes the lines are."""
    first = 1
    tail = b""
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK_BYTES):
            if digest is not None:
                digest.update(block)
            block = tail + block
            cut = block.rfind(b"\n") + 1
            whole, tail = block[:cut], block[cut:]
            if len(tail) > MAX_LINE_BYTES:
                raise InputError(path, first + whole.count(b"\n"), None, f"line longer than {MAX_LINE_BYTES >> 20} MiB")
            if len(whole) > MAX_LINE_BYTES:
                _refuse_overlong(whole, path, first)
            if whole:
                lines = _decoded(whole, path, first).split("\n")[:-1]
                if first == 1:
                    lines[0] = lines[0].lstrip("\ufeff")
                yield first, lines
                first += len(lines)
    if tail:
        last = _decoded(tail, path, first)
        yield first, [last.lstrip("\ufeff") if first == 1 else last]


def _lines(path: str, digest: Digest | None) -> Iterator[tuple[int, str]]:
    """The file's non-blank lines, numbered from 1, stripped."""
    for first, lines in text_blocks(path, digest):
        for number, text in enumerate(lines, start=first):
            if text.strip():
                yield number, text.strip()


def _number(text: str, path: str, line: int, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(path, line, name, f"expected a number, got {text[:40]!r}") from None
    if not math.isfinite(value):
        raise InputError(path, line, name, f"expected a finite number, got {text[:40]!r}")
    return value


def read_qrels(path: str, digest: Digest | None = None) -> Judgements:
    """TREC qrels (4 columns) or BEIR's TSV (3 columns, header optional). A query judged twice for
    one id keeps its last relevance, as trec_eval does."""
    judged = Judgements()
    for number, text in _lines(path, digest):
        columns = text.split("\t") if "\t" in text else text.split()
        columns = [c.strip() for c in columns]
        if len(columns) == 3 and tuple(c.lower() for c in columns) == BEIR_QRELS_HEADER:
            continue
        if len(columns) == 4:
            query, _, doc, grade = columns
        elif len(columns) == 3:
            query, doc, grade = columns
        else:
            raise InputError(path, number, None, f"expected 'qid 0 docid relevance' (TREC) or 'query-id<TAB>corpus-id<TAB>score' (BEIR), got {len(columns)} columns")
        judged.by_query.setdefault(query, {})[doc] = _number(grade, path, number, "relevance")
    return judged


Scored = tuple[list[str], list[float]]  # a query's doc ids and their scores, in file order


def _trec_run(path: str, digest: Digest | None) -> dict[str, Scored]:
    """Each query's doc ids and scores in file order. The lines of one query usually follow each
    other, so its lists are looked up once per query, not once per line; ids and scores are kept in
    two lists, not a pair a line (two million pairs kept the garbage collector busy)."""
    run: dict[str, Scored] = {}
    query, docs, scores = None, None, None
    for first, lines in text_blocks(path, digest):
        for number, text in enumerate(lines, start=first):
            columns = text.split()
            if not columns:
                continue
            if len(columns) != 6:
                raise InputError(path, number, None, f"expected 'qid Q0 docid rank score tag' (6 columns), got {len(columns)}")
            if columns[0] != query or docs is None or scores is None:
                query = columns[0]
                docs, scores = run.setdefault(query, ([], []))
            try:
                score = float(columns[4])
            except ValueError:
                score = math.nan
            if not math.isfinite(score):  # said, with its line, as every number of these files is
                _number(columns[4], path, number, "score")
            docs.append(columns[2])
            scores.append(score)
    return run


def _json_run(path: str, digest: Digest | None) -> dict[str, Scored]:
    raw = Path(path).read_bytes()
    if digest is not None:
        digest.update(raw)
    try:
        data: Any = from_json(raw)
    except ValueError as error:
        raise InputError(path, 1, None, f"invalid JSON: {error}") from None
    if not isinstance(data, dict):
        raise InputError(path, 1, None, "expected a JSON object {query id: {doc id: score}}")
    run: dict[str, Scored] = {}
    for query, ranked in data.items():
        if not isinstance(ranked, dict):
            raise InputError(path, 1, str(query), "expected an object {doc id: score}")
        for doc, score in ranked.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise InputError(path, 1, f"{query}.{doc}", f"expected a finite number as the score, got {score!r}"[:120])
        run[str(query)] = (list(map(str, ranked)), list(map(float, ranked.values())))
    return run


def trec_order(scored: list[tuple[str, float]]) -> list[str]:
    """Doc ids as trec_eval ranks them: score descending, then docid descending (string order)."""
    return [doc for doc, _ in sorted(scored, key=itemgetter(1, 0), reverse=True)]


def _ranking(docs: list[str], scores: list[float]) -> list[str]:
    """trec_order's ranking of one query; scores that fall strictly line after line (most run files)
    are already in that order, and are not sorted again."""
    if all(map(gt, scores, islice(scores, 1, None))):
        return docs
    return trec_order(list(zip(docs, scores)))


def read_run(path: str, digest: Digest | None = None) -> dict[str, list[str]]:
    """Each query's ranking, best first: a TREC run file, or BEIR's JSON (a file opening with '{').
    An id a TREC run lists twice for one query stays twice in the ranking: the rank metrics count
    it once, at its first (higher) rank, and say so."""
    with open(path, "rb") as handle:
        head = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    scores = _json_run(path, digest) if head.startswith(b"{") else _trec_run(path, digest)
    return {query: _ranking(docs, values) for query, (docs, values) in scores.items()}


def read_queries(path: str, digest: Digest | None = None) -> dict[str, str]:
    """BEIR's queries.jsonl: each query's text by its `_id`."""
    texts: dict[str, str] = {}
    for number, text in _lines(path, digest):
        try:
            row: Any = from_json(text)
        except ValueError as error:
            raise InputError(path, number, None, f"invalid JSON: {error}") from None
        if not isinstance(row, dict) or not isinstance(row.get("_id"), (str, int)) or isinstance(row.get("_id"), bool):
            raise InputError(path, number, "_id", "expected an object with the query's id under '_id'")
        if not isinstance(row.get("text"), str):
            raise InputError(path, number, "text", "expected the query's text, a string")
        texts[str(row["_id"])] = row["text"]
    return texts


def retrieval_samples(run: dict[str, list[str]], qrels: Judgements, queries: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """One sample per query, the run's queries first in their order, then the judged queries the
    run has no ranking for (an empty ranking: every figure 0, as trec_eval -c counts them); a run's
    query without judgements has no relevant id (its figures undefined, with the reason). Only ids
    judged above 0 are reference ids, with their relevance as grades."""
    for query in [*run, *(q for q in qrels.by_query if q not in run)]:
        relevant = {doc: grade for doc, grade in qrels.by_query.get(query, {}).items() if grade > 0}
        sample: dict[str, Any] = {"id": query}
        if queries is not None and query in queries:
            sample["user_input"] = queries[query]
        sample["retrieved_context_ids"] = run.get(query, [])
        sample["reference_context_ids"] = list(relevant)
        sample["reference_context_grades"] = list(relevant.values())
        yield sample
