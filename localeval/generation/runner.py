"""The generate run: candidates in the planned order, each written by the judge and checked,
the kept ones appended to the output as they are found.

Deterministic for a seed: the plan is (localeval.generation.planning), the judge decodes
greedily, and every check is a pure function of what came before in the stream. A run that was
interrupted resumes with `resume=True`: the rows already in the output are kept, the stream is
walked again from its start, a candidate whose row is there counts as kept without asking the
judge, and the others are asked again; the verdict cache answers those it has seen, so the
output and the summary are those an uninterrupted run writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from localeval.errors import ConfigError, InputError, JudgeError
from localeval.generation.attribution import UNJUDGED, Attribution
from localeval.generation.checks import EMPTY, Duplicates, answer_refusal, copy_overlap, copy_refusal, question_refusal, standalone_refusal
from localeval.generation.documents import Chunk
from localeval.generation.planning import TWO, Candidate, candidates
from localeval.generation.writing import ANSWER_CHARS, rewrite, single_messages, two_messages, write
from localeval.judge import Judge


@dataclass
class GenerateSummary:
    """What a run did: rows asked and kept, candidates tried, refusals by reason, the duplicate
    measure used, and why there are fewer rows than asked when there are."""

    requested: int
    kept: int = 0
    candidates: int = 0
    kept_by_kind: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    rewritten: int = 0  # kept rows whose question was a near-copy asked again in other words
    duplicate_measure: str = ""
    shortfall: str | None = None
    seconds: float = 0.0
    generator: dict[str, Any] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "requested": self.requested, "kept": self.kept, "candidates": self.candidates,
            "kept_by_kind": dict(sorted(self.kept_by_kind.items())), "kept_rewritten": self.rewritten, "rejected": dict(sorted(self.rejected.items())),
            "rejected_share": round(sum(self.rejected.values()) / self.candidates, 4) if self.candidates else 0.0,
            "near_duplicates_by": self.duplicate_measure, "shortfall": self.shortfall, "generator": self.generator,
        }

    def lines(self) -> list[str]:
        """The summary as a person reads it on standard error."""
        kinds = ", ".join(f"{count} {kind.replace('_', '-')}" for kind, count in sorted(self.kept_by_kind.items())) or "none"
        refused = ", ".join(f"{reason} {count}" for reason, count in sorted(self.rejected.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"
        lines = [
            f"generate: kept {self.kept} of {self.requested} rows asked ({kinds}; {self.rewritten} rewritten from a near-copy) from {self.candidates} candidates; rejected: {refused}",
            f"generate: near-duplicates measured by {self.duplicate_measure}",
        ]
        if self.shortfall:
            lines.append(f"generate: fewer rows than asked: {self.shortfall}")
        return lines


def row_id(key: str) -> str:
    """A row's id: stable for its candidate, short enough to read."""
    return "gen-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _row(candidate: Candidate, question: str, answer: str, overlap: float, seed: int, generator: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "source": sorted({chunk.document for chunk in candidate.chunks}),
        "question_kind": candidate.kind,
        "generator": generator,
        "seed": seed,
        "candidate": candidate.key,
        "copy_overlap": round(overlap, 4),
    }
    if candidate.entity is not None:
        metadata["shared_entity"] = candidate.entity
    return {
        "id": row_id(candidate.key),
        "user_input": question,
        "reference": answer,
        "reference_contexts": [chunk.text for chunk in candidate.chunks],
        "reference_context_ids": [chunk.id for chunk in candidate.chunks],
        "metadata": metadata,
    }


def done_rows(path: str, seed: int, generator: dict[str, Any], keys: set[str]) -> dict[str, dict[str, Any]]:
    """The rows an earlier run of the same generation left in `path`, by candidate; a last line cut
    off by the interruption is dropped from the file; a row of another run (seed, generator,
    documents) is refused, naming its line."""
    target = Path(path)
    if not target.exists():
        return {}
    raw = target.read_bytes()
    if raw and not raw.endswith(b"\n"):
        cut = raw.rfind(b"\n") + 1
        with open(target, "r+b") as handle:
            handle.truncate(cut)
        raw = raw[:cut]
    found: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InputError(path, number, None, f"not valid JSON ({exc}); not a file `localeval generate` wrote") from None
        metadata = row.get("metadata") if isinstance(row, dict) else None
        if not isinstance(metadata, dict) or not isinstance(metadata.get("candidate"), str) or not isinstance(row.get("user_input"), str):
            raise InputError(path, number, "metadata", "no generated row here (metadata.candidate); not a file `localeval generate` wrote")
        if metadata.get("seed") != seed:
            raise InputError(path, number, "metadata.seed", f"{metadata.get('seed')!r} was the seed of that run, this one's is {seed}: resume with the same seed or write another file")
        if metadata.get("generator") != generator:
            raise InputError(path, number, "metadata.generator", "written by another judge model; resume with the same one or write another file")
        if metadata["candidate"] not in keys:
            raise InputError(path, number, "metadata.candidate", f"'{metadata['candidate']}' is not a candidate of these documents and settings (documents or --chunk-size changed?)")
        found[metadata["candidate"]] = row
    return found


def generate(
    chunks: list[Chunk], wanted: int, output: str, judge: Judge, *, seed: int = 0, two_context_share: float = 0.25, embedder: Any | None = None,
    resume: bool = False, language: str = "en", on_candidate: Callable[[GenerateSummary], None] = lambda _: None, rewrites: bool = True,
) -> GenerateSummary:
    """Write up to `wanted` checked rows to `output` (JSON Lines, ragas' testset field names);
    `rewrites`: a near-copy question is asked once more in other words before it is refused."""
    started = time.monotonic()
    description = judge.describe()
    generator = {"model": description.get("model"), "sha256": description.get("sha256")}
    plan = list(candidates(chunks, wanted, seed, two_context_share))
    if os.path.exists(output) and os.path.getsize(output) > 0 and not resume:
        raise ConfigError(f"{output} already holds rows: --resume to continue that run, or write another file")
    done = done_rows(output, seed, generator, {c.key for c in plan}) if resume else {}
    summary = GenerateSummary(requested=wanted, generator=generator)
    duplicates = Duplicates(embedder)
    summary.duplicate_measure = duplicates.measure
    attribution = Attribution(judge)
    with open(output, "a", encoding="utf-8") as out:
        _walk(plan, wanted, done, out, judge, attribution, duplicates, summary, seed, generator, language, on_candidate, rewrites)
    if summary.kept < wanted:
        summary.shortfall = (
            f"every candidate these documents give was tried ({summary.candidates}: {len(chunks)} chunks, "
            f"{sum(1 for c in plan if c.kind == TWO)} pairs sharing a name) and {summary.candidates - summary.kept} were rejected; "
            "give more documents, a smaller --chunk-size, or ask for fewer rows"
        )
    summary.seconds = time.monotonic() - started
    return summary


def _walk(
    plan: Iterable[Candidate], wanted: int, done: dict[str, dict[str, Any]], out: IO[str], judge: Judge, attribution: Attribution,
    duplicates: Duplicates, summary: GenerateSummary, seed: int, generator: dict[str, Any], language: str,
    on_candidate: Callable[[GenerateSummary], None], rewrites: bool,
) -> None:
    for candidate in plan:
        if summary.kept >= wanted:
            return
        summary.candidates += 1
        if candidate.key in done:
            _count_kept(done[candidate.key], candidate.kind, duplicates, summary)
            on_candidate(summary)
            continue
        row, reason = _tried(candidate, judge, attribution, duplicates, seed, generator, language, rewrites)
        if row is None:
            summary.rejected[reason or EMPTY] += 1
        else:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            _count_kept(row, candidate.kind, duplicates, summary)
        on_candidate(summary)


def _count_kept(row: dict[str, Any], kind: str, duplicates: Duplicates, summary: GenerateSummary) -> None:
    """A kept row (written now, or by the run a resume continues): its question joins the
    near-duplicate check, and the summary counts it."""
    duplicates.keep(row["user_input"])
    summary.rewritten += bool(row["metadata"].get("rewritten"))
    summary.kept += 1
    summary.kept_by_kind[kind] += 1


def _tried(
    candidate: Candidate, judge: Judge, attribution: Attribution, duplicates: Duplicates, seed: int, generator: dict[str, Any], language: str,
    rewrites: bool = True,
) -> tuple[dict[str, Any] | None, str | None]:
    """The candidate's row, or None and the reason it was refused (cheapest checks first). A
    near-copy is asked once more in other words (`rewrites`) and checked again; the row says so."""
    texts = [chunk.text for chunk in candidate.chunks]
    messages = two_messages(texts[0], texts[1], candidate.entity or "") if candidate.kind == TWO else single_messages(texts[0])
    try:
        written = write(judge, messages)
        question, answer = written.question, written.answer
        if len(question) < 8 or not answer:
            return None, EMPTY
        overlap = copy_overlap(question, texts, language)
        rewritten = False
        if rewrites and copy_refusal(overlap) and not question_refusal(question, language):
            question, rewritten = rewrite(judge, texts, question), True
            overlap = copy_overlap(question, texts, language)
    except JudgeError:  # the chunks do not fit the judge's window, or the answer did not end
        return None, UNJUDGED
    reason = question_refusal(question, language) or answer_refusal(answer, ANSWER_CHARS) or standalone_refusal(question) or copy_refusal(overlap) or duplicates.refusal(question) or attribution.refusal(question, answer, texts)
    if reason is not None:
        return None, reason
    row = _row(candidate, question, answer, overlap, seed, generator)
    if rewritten:
        row["metadata"]["rewritten"] = True
    return row, None
