"""The judge rule's statement verdicts per kind of text, on the training split's validation rows or,
once a choice is fixed, on its sealed test rows: the rows a statement table is decided on.

One table must serve news (where the judge is lenient) and abstracts and transcripts (where it is
strict), so a table is judged by each kind's balanced accuracy and by the mean over kinds, never
by one pooled figure. Kinds and their sources (training/DATA.md):

- news: FRANK, XSumFaith and SummaC summaries against their whole article (the statements of a
  factual summary are labelled 1, a non-factual one-sentence summary 0; the kind's figure is the
  summary's: called factual when every statement is attributed);
- scientific claims: Check-COVID and Citation-Integrity claims against their abstract or paper;
- web claims: Factcheck-GPT claims against the evidence its annotators retrieved;
- Wikipedia claims: WiCE and VitaminC (real revisions) claims against their Wikipedia evidence;
- documents: SummEdits' news and sales e-mails against the document;
- transcripts: SummEdits' earnings calls (ECTSum), meetings (QMSum) and sales calls.

Each source gives a seeded sample, half supported and half not where it can (`--per-source`).
Every statement's label, kind, the judge rule's features and the text's own measures (context
words and sentences, statement words, the share of numbers in the statement; with `--probe`, the
judge's log-odds on a fixed statement no context supports, read against the case's context) go to `--dump`;
the judge's answers are cached (benchmarks/judge_cache.py), and the features do not depend on the
table, so any table is then measured on the dump in seconds (training/statement_table_kinds.py).
The sealed split is read only after a choice is fixed, once, with a line in SEALED_LEDGER.md first.

    python benchmarks/statement_kinds.py --split validation --per-source 20 --news 16 --dump validation.jsonl
    python benchmarks/statement_kinds.py --split sealed --per-source 20 --news 16 --dump sealed.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from verifier_accuracy import Scorer

from localeval.data.samples import Sample
from localeval.data.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"validation": ROOT / "training" / ".cache" / "split", "sealed": ROOT / "training" / ".cache" / "sealed"}
FILES = {  # split -> (news samples, claims against documents, pair rows)
    "validation": ("validation_news_samples.jsonl", "validation_claim_samples.jsonl", "rows.jsonl"),
    "sealed": ("test_news_samples.jsonl", "test_claim_samples.jsonl", "test_rows.jsonl"),
}
KINDS = {
    "scientific claims": ("checkcovid", "citint"),
    "web claims": ("factcheck_gpt",),
    "Wikipedia claims": ("wice", "vitaminc_real"),
    "documents": ("summedits_news", "summedits_sales_email", "summedits_scitldr"),
    "transcripts": ("summedits_ectsum", "summedits_qmsumm", "summedits_sales_call"),
}
KIND_OF = {source: kind for kind, sources in KINDS.items() for source in sources}
PAIR_SOURCES = ("wice", "vitaminc_real")  # claims whose evidence is a sentence window of rows.jsonl
SEED = 20261129
# A statement no context here supports, read against each case's context: how readily the judge says
# Yes to this text (lenient on news, strict on abstracts and transcripts) as a feature a table may use.
PROBE = "An independent review later confirmed every figure in this text."


def balanced_sample(items: Sequence[dict[str, Any]], label: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """Up to `count` items, half of each label where the items allow it (the rest from the other
    label): balanced accuracy on a kind with three negatives is noise."""
    positive = [i for i in items if int(i[label]) == 1]
    negative = [i for i in items if int(i[label]) == 0]
    take_negative = min(len(negative), max(count // 2, count - len(positive)))
    take_positive = min(len(positive), count - take_negative)
    return rng.sample(positive, take_positive) + rng.sample(negative, take_negative)


def context_measures(contexts: Sequence[str]) -> dict[str, float]:
    """What the context says about its kind of text: how long it is, and in how many sentences."""
    return {"context_words": float(sum(len(c.split()) for c in contexts)), "context_sentences": float(sum(len(split_sentences(c)) for c in contexts))}


def statement_measures(statement: str) -> dict[str, float]:
    """How long the statement is, and how much of it is numbers."""
    words = statement.split()
    return {"statement_words": float(len(words)), "numeric_share": sum(bool(re.search(r"\d", w)) for w in words) / max(len(words), 1)}


def cases(split: str, per_source: int, news: int) -> Iterator[tuple[str, str, str, Sample, list[str], list[int | None], int | None]]:
    """(kind, source, case id, sample, statements, statement labels, summary label) for every case
    of the split's seeded sample."""
    folder = FOLDERS[split]
    news_file, claims_file, rows_file = FILES[split]
    for name in (news_file, claims_file, rows_file):
        if not (folder / name).is_file():
            raise SystemExit(f"{folder / name}: missing; run training/prepare_split_data.py (training/DATA.md)")
    rng = random.Random(SEED)
    summaries = [json.loads(line) for line in (folder / news_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    for n, item in enumerate(balanced_sample(summaries, "summary_label", news, rng)):
        labels: list[int | None] = [1] * len(item["statements"]) if item["summary_label"] else ([0] if len(item["statements"]) == 1 else [None] * len(item["statements"]))
        yield "news", item["source"], f"news/{item['group']}/{n}", Sample(user_input="", retrieved_contexts=item["retrieved_contexts"]), item["statements"], labels, int(item["summary_label"])
    by_source: dict[str, list[dict[str, Any]]] = {}
    for line in (folder / claims_file).read_text(encoding="utf-8").splitlines():
        if line.strip():
            claim = json.loads(line)
            by_source.setdefault(claim["source"], []).append(claim)
    with open(folder / rows_file, encoding="utf-8") as handle:
        for line in handle:
            if '"attribution"' in line and any(f'"source": "{s}"' in line for s in PAIR_SOURCES):
                row = json.loads(line)
                if row["task"] == "attribution" and row["source"] in PAIR_SOURCES and row["split"] in ("validation", "test"):
                    by_source.setdefault(row["source"], []).append({"source": row["source"], "group": row["group"], "statement": row["a"], "contexts": [row["b"]], "label": row["label"]})
    for source in sorted(s for s in by_source if s in KIND_OF):
        for n, claim in enumerate(balanced_sample(by_source[source], "label", per_source, rng)):
            yield KIND_OF[source], source, f"{source}/{claim['group']}/{n}", Sample(user_input="", retrieved_contexts=claim["contexts"]), [claim["statement"]], [int(claim["label"])], None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(FOLDERS), required=True, help="validation (to choose on) or sealed (once, after the choice)")
    parser.add_argument("--per-source", type=int, default=20, help="claims per source, half supported where possible")
    parser.add_argument("--news", type=int, default=16, help="news summaries, half factual")
    parser.add_argument("--dump", type=Path, required=True, help="every statement's label, kind, features and text measures (JSON Lines)")
    parser.add_argument("--model", help="the judge (default: the catalog's default)")
    parser.add_argument("--probe", action="store_true", help="also the judge's log-odds on PROBE against each case's context (one more judge call a case)")
    args = parser.parse_args(argv)
    scorer = Scorer("judge", args.model)
    started = time.perf_counter()
    written = 0
    with open(args.dump, "w", encoding="utf-8") as dump:
        for kind, source, case, sample, statements, labels, summary_label in cases(args.split, args.per_source, args.news):
            verdicts = scorer.verdicts(sample, statements)
            shared = {**context_measures(sample.retrieved_contexts or []), **({"probe": scorer.verdicts(sample, [PROBE])[0]["features"]["judge"]} if args.probe else {})}
            for statement, label, verdict in zip(statements, labels, verdicts):
                dump.write(json.dumps({"kind": kind, "source": source, "case": case, "label": label, "summary_label": summary_label,
                                       "probability": verdict["probability"], **verdict["features"], **statement_measures(statement), **shared}) + "\n")
            dump.flush()  # a cut-short run keeps every case it finished
            written += len(statements)
            print(f"{written} statements, {time.perf_counter() - started:.0f} s: {case}", flush=True)
    if scorer.judge is not None:
        scorer.judge.close()


if __name__ == "__main__":
    main()
