"""`localeval generate` on held-out documents: how good are the rows it keeps, and what do they cost?

Two folders of documents from shared/data (never a HotpotQA id of reserved_hotpotqa_ids.txt):
- hotpotqa: the gold paragraphs of evenly spaced HotpotQA dev questions (relevance_dev.jsonl),
  each paragraph a chunk (its id the paragraph's title), so each generated question can be set
  beside the human question written on the same paragraph;
- scifact: SciFact abstracts (attribution_dev.jsonl's SciFact contexts), one chunk each.

For each, the run's summary (candidates, rejections by reason, seconds per kept row), then on
the kept rows: malformed rows (a field missing or of the wrong type), the share the verifier
grader finds answerable from its reference contexts (every statement of the reference
attributed: a second check, independent of the judge that kept the row), near-copies (copy
overlap >= 0.6), near-duplicate pairs (embedding cosine >= 0.9); and against the human
HotpotQA questions on the same paragraphs: length in words, content-word overlap with the
source paragraph, and the source paragraph's rank under BM25 (`BM25`, below) over every
paragraph of the questions read. The judge's answers are in the verdict cache and each source's
rows in --out with resume, so a rerun costs seconds.

    nice -n 15 python benchmarks/generate_quality.py --rows 20 --out benchmarks/.cache/generate
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from labelled_rows import DATA  # noqa: E402

from localeval import create_metric, load_judge  # noqa: E402
from localeval.data.samples import Sample  # noqa: E402
from localeval.generation.checks import DUPLICATE_COSINE, NEAR_COPY_SHARE, copy_overlap, word_overlap  # noqa: E402
from localeval.generation.command import embedder_or_none  # noqa: E402
from localeval.generation.documents import Chunk  # noqa: E402
from localeval.generation.runner import GenerateSummary, generate  # noqa: E402

RESERVED = DATA / "reserved_hotpotqa_ids.txt"
_TOKEN = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an the of in on at to for from by with and or is are was were be what which who whom when where why how did does do that this it its as".split())


def reserved_ids() -> set[str]:
    return {line.strip() for line in RESERVED.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")}


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP]


class BM25:
    """Okapi BM25 (k1 0.9, b 0.4, as shared/data's retrieval run) over a fixed list of documents."""

    def __init__(self, documents: Sequence[str], k1: float = 0.9, b: float = 0.4) -> None:
        self.k1, self.b = k1, b
        self.docs = [Counter(tokens(d)) for d in documents]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = sum(self.lengths) / max(1, len(self.lengths))
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        count = len(self.docs)
        self.idf = {term: math.log(1 + (count - n + 0.5) / (n + 0.5)) for term, n in df.items()}

    def scores(self, query: str) -> list[float]:
        terms = tokens(query)
        found = []
        for doc, length in zip(self.docs, self.lengths):
            norm = self.k1 * (1 - self.b + self.b * length / self.average)
            found.append(sum(self.idf.get(t, 0.0) * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in terms if t in doc))
        return found

    def rank(self, query: str, target: int) -> int:
        """1-based rank of document `target` for `query` (ties counted against it)."""
        scores = self.scores(query)
        return 1 + sum(1 for i, s in enumerate(scores) if s >= scores[target] and i != target)


def hotpotqa_documents(questions: int) -> tuple[list[Chunk], dict[str, list[str]], list[str], list[str]]:
    """Gold paragraphs of `questions` evenly spaced HotpotQA questions (none reserved), as chunks;
    the human questions written on each paragraph (by chunk id); the BM25 corpus (every
    paragraph of every non-reserved question, titles as ids) and its ids."""
    reserved = reserved_ids()
    rows = [json.loads(line) for line in open(DATA / "relevance_dev.jsonl", encoding="utf-8") if line.strip()]
    rows = [row for row in rows if row["id"].removeprefix("hotpotqa-") not in reserved]
    corpus: dict[str, str] = {}
    for row in rows:
        for title, paragraph in zip(row["context_titles"], row["retrieved_contexts"]):
            corpus.setdefault(title, paragraph)
    picked = [rows[i * len(rows) // questions] for i in range(questions)]
    chunks: dict[str, Chunk] = {}
    human: dict[str, list[str]] = {}
    for row in picked:
        gold_titles = {ref[0] for ref in row["gold_sentence_refs"]}
        for title in sorted(gold_titles):
            chunks.setdefault(title, Chunk(title, corpus[title], title))
            human.setdefault(title, []).append(row["user_input"])
    ids = sorted(corpus)
    return list(chunks.values()), human, [corpus[i] for i in ids], ids


def scifact_documents(count: int) -> list[Chunk]:
    """`count` SciFact abstracts (title, blank line, abstract), evenly spaced, one chunk each."""
    rows = [json.loads(line) for line in open(DATA / "attribution_dev.jsonl", encoding="utf-8") if line.strip()]
    contexts = sorted({row["context"] for row in rows if row["source"].startswith("scifact")})
    picked = [contexts[i * len(contexts) // count] for i in range(min(count, len(contexts)))]
    return [Chunk(f"scifact-{i}", text, f"scifact-{i}") for i, text in enumerate(picked)]


def malformed(row: Any) -> bool:
    """A row that is not a sample with a non-empty question, reference and matching contexts and ids."""
    try:
        sample = Sample.model_validate({k: v for k, v in row.items() if k != "metadata"})
    except ValueError:
        return True
    return not (
        sample.user_input and sample.user_input.strip() and sample.reference and sample.reference.strip()
        and sample.reference_contexts and sample.reference_context_ids and len(sample.reference_contexts) == len(sample.reference_context_ids)
        and isinstance(row.get("metadata"), dict)
    )


def verifier_answerable(rows: Sequence[dict[str, Any]]) -> list[float]:
    """context_recall under the verifier grader of each row's reference against its reference contexts."""
    metric = create_metric("context_recall", {"grader": "verifier", "reasons": False})
    samples = [Sample(user_input=r["user_input"], reference=r["reference"], retrieved_contexts=r["reference_contexts"]) for r in rows]
    return [float(score.value or 0.0) for score in metric.score_batch(samples, None)] if samples else []


def duplicate_pairs(questions: Sequence[str], embedder: Any) -> int:
    if embedder is None or len(questions) < 2:
        return 0
    vectors = embedder.embed(list(questions))
    similar = vectors @ vectors.T
    return sum(1 for i in range(len(questions)) for j in range(i + 1, len(questions)) if similar[i, j] >= DUPLICATE_COSINE)


def quality(rows: Sequence[dict[str, Any]], embedder: Any) -> dict[str, Any]:
    """The kept rows' figures: malformed, verifier-answerable, near-copies, near-duplicate pairs."""
    good = [r for r in rows if not malformed(r)]
    recall = verifier_answerable(good)
    copies = [copy_overlap(r["user_input"], r["reference_contexts"]) for r in good]
    return {
        "rows": len(rows), "malformed": len(rows) - len(good),
        "verifier_answerable_share": round(sum(1 for v in recall if v >= 1.0) / len(recall), 3) if recall else None,
        "verifier_recall_mean": round(statistics.fmean(recall), 3) if recall else None,
        "near_copy_share": round(sum(1 for c in copies if c >= NEAR_COPY_SHARE) / len(copies), 3) if copies else None,
        "copy_overlap_mean": round(statistics.fmean(copies), 3) if copies else None,
        "near_duplicate_pairs": duplicate_pairs([r["user_input"] for r in good], embedder),
        "two_context_rows": sum(1 for r in good if r["metadata"]["question_kind"] == "two_context"),
    }


def versus_human(rows: Sequence[dict[str, Any]], human: dict[str, list[str]], corpus: Sequence[str], ids: Sequence[str]) -> dict[str, Any]:
    """Generated and human questions on the same paragraphs: words, overlap with the paragraph, BM25 rank of it."""
    bm25 = BM25(corpus)
    where = {title: index for index, title in enumerate(ids)}
    figures: dict[str, list[float]] = {k: [] for k in ("gen_words", "human_words", "gen_overlap", "human_overlap", "gen_rank", "human_rank")}
    for row in rows:
        if row["metadata"]["question_kind"] != "single_context":
            continue
        title = row["reference_context_ids"][0]
        paragraph = row["reference_contexts"][0]
        figures["gen_words"].append(len(row["user_input"].split()))
        figures["gen_overlap"].append(word_overlap(row["user_input"], paragraph))
        figures["gen_rank"].append(bm25.rank(row["user_input"], where[title]))
        for question in human.get(title, []):
            figures["human_words"].append(len(question.split()))
            figures["human_overlap"].append(word_overlap(question, paragraph))
            figures["human_rank"].append(bm25.rank(question, where[title]))
    out: dict[str, Any] = {"paragraphs": len(figures["gen_words"]), "corpus": len(corpus)}
    for key, values in figures.items():
        if values:
            out[f"{key}_mean"] = round(statistics.fmean(values), 3)
            if key.endswith("rank"):
                out[f"{key}_median"] = statistics.median(values)
                out[f"{key}_top1_share"] = round(sum(1 for v in values if v == 1) / len(values), 3)
    return out


def run_source(name: str, chunks: list[Chunk], rows: int, out: Path, judge: Any, embedder: Any, rewrites: bool = True) -> tuple[GenerateSummary, list[dict[str, Any]]]:
    path = out / f"{name}.jsonl"
    started = time.monotonic()
    summary = generate(chunks, rows, str(path), judge, seed=0, embedder=embedder, resume=True, rewrites=rewrites,
                       on_candidate=lambda s: print(f"{name}: {s.kept}/{rows} kept, {s.candidates} candidates, {time.monotonic() - started:.0f}s", file=sys.stderr, flush=True))
    kept = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return summary, kept


def spent_seconds(path: Path, this_run: float) -> float:
    """Seconds every run of a source spent, summed (an interrupted run's part and its resume's;
    a rerun of a finished source adds only its cache lookups)."""
    before = float(json.loads(path.read_text(encoding="utf-8"))["seconds"]) if path.exists() else 0.0
    path.write_text(json.dumps({"seconds": before + this_run}) + "\n", encoding="utf-8")
    return before + this_run


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20, help="rows asked per source")
    parser.add_argument("--questions", type=int, default=20, help="HotpotQA questions whose gold paragraphs are the documents")
    parser.add_argument("--abstracts", type=int, default=25, help="SciFact abstracts")
    parser.add_argument("--model", default=None, help="judge (default: the default judge)")
    parser.add_argument("--out", type=Path, default=HERE / ".cache" / "generate", help="where each source's rows and summary are kept")
    parser.add_argument("--sources", default="hotpotqa,scifact")
    parser.add_argument("--no-rewrite", dest="rewrites", action="store_false", help="reject near-copies without asking again in other words")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    embedder = embedder_or_none()
    judge = load_judge(args.model)
    report: dict[str, Any] = {}
    try:
        for source in args.sources.split(","):
            human: dict[str, list[str]] = {}
            if source == "hotpotqa":
                chunks, human, corpus, ids = hotpotqa_documents(args.questions)
            else:
                chunks = scifact_documents(args.abstracts)
            summary, kept = run_source(source, chunks, args.rows, args.out, judge, embedder, args.rewrites)
            figures = summary.to_json_dict()
            figures["seconds"] = round(spent_seconds(args.out / f"{source}.seconds.json", summary.seconds), 1)
            figures["seconds_per_kept_row"] = round(figures["seconds"] / summary.kept, 1) if summary.kept else None
            figures.update(quality(kept, embedder))
            if source == "hotpotqa":
                figures["versus_human"] = versus_human(kept, human, corpus, ids)
            report[source] = figures
            print(json.dumps({source: figures}, indent=2))
    finally:
        judge.close()
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
