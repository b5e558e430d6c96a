"""Prepare the verifier's training rows from public labelled sets (never committed: regenerated here).

Every source, its licence and what is kept out is recorded in training/DATA.md and in the
model card (localeval/verifier/MODEL_CARD.md). Rows are written as JSON Lines:
`{"task": "relevance"|"attribution", "a": first text, "b": second text, "c": context or "",
"label": 0|1, "source": ..., "group": ..., "split": "train"|"validation"}`.

- relevance: (question, sentence, the sentence's paragraph). HotpotQA distractor records of
  megagonlabs/RPT (commit cf2bc1b1) except the ids reserved for evaluation
  (shared/data/reserved_hotpotqa_ids.txt) and every question of shared/data/relevance_dev.jsonl
  (the project's dev rows, which the benchmarks score); SQuAD 2.0's paragraphs that
  benchmarks/accuracy.py hashes to its fit half (the other half is the dev half), with answerable
  and unanswerable questions.
- attribution: (claim, evidence). VitaminC real pairs of the cases accuracy.py hashes to its fit
  half; VitaminC synthetic; FEVER-symmetric dev (its test file is the dev half); FEVER-adversarial;
  WiCE partially-supported sub-claims against their supporting sentences (hard negatives).

A tenth of each source's groups (hashed with VALIDATION_SEED) is the script's own validation
split: never trained on, printed by train_verifier.py at the end.

    python training/prepare_verifier_data.py --external DIR --out training/.cache/rows.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmarks' libraries: no package holds them
import labelled_rows  # noqa: E402  (the benchmarks' own hash split: their dev half stays out)

SHARED = ROOT.parent / "shared" / "data"
VALIDATION_SEED = "localeval-verifier-20261125"
SEED = 20261125
DISTRACTOR_PARAGRAPHS = 3  # per HotpotQA question: every sentence of the gold paragraphs, and of this many distractors
SUPPORTED = "SUPPORTS"


def _validation(source: str, group: str) -> bool:
    return hashlib.sha256(f"{VALIDATION_SEED}:{source}:{group}".encode()).digest()[0] < 26  # about a tenth


def _row(task: str, a: str, b: str, c: str, label: int, source: str, group: str) -> dict[str, Any]:
    return {"task": task, "a": a.strip(), "b": b.strip(), "c": c.strip(), "label": label, "source": source, "group": group,
            "split": "validation" if _validation(source, group) else "train"}


def json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The objects of a JSON Lines file (blank lines skipped): every training source reader's."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def hotpotqa_id(value: str) -> str:
    """HotpotQA's own id: shared/data's rows prefix it with their source ("hotpotqa-5a8b..."), RPT's
    records do not. Compared bare, or the dev questions pass the filter (until 2026-11-26 they did:
    286 of the 300 were training or validation rows, issue 48)."""
    return value.removeprefix("hotpotqa-")


def usable_hotpotqa(folder: Path) -> Iterator[dict[str, Any]]:
    """The RPT HotpotQA records that may be trained on: neither an id reserved for evaluation
    (never read past its id) nor a question of shared/data's dev rows (by id and by question
    text), each once."""
    reserved = {hotpotqa_id(line.strip()) for line in open(SHARED / "reserved_hotpotqa_ids.txt", encoding="utf-8") if line.strip() and not line.startswith("#")}
    dev_rows = list(json_lines(SHARED / "relevance_dev.jsonl"))
    dev = {hotpotqa_id(row["id"]) for row in dev_rows}
    dev_questions = {" ".join(row["user_input"].lower().split()) for row in dev_rows}
    seen: set[str] = set()
    for name in ("train", "dev", "test"):
        for record in json_lines(folder / f"{name}.jsonl"):
            qid = hotpotqa_id(record["id"])
            if qid not in reserved and qid not in dev and qid not in seen and " ".join(record["question"].lower().split()) not in dev_questions:
                seen.add(qid)
                yield record


def hotpotqa(folder: Path, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Every sentence of a question's gold paragraphs (the non-supporting ones are the hard
    negatives) and of DISTRACTOR_PARAGRAPHS others, each with its paragraph."""
    for record in usable_hotpotqa(folder):
        qid = record["id"]
        titles, paragraphs = record["context"]["title"], record["context"]["sentences"]
        facts = set(zip(record["supporting_facts"]["title"], record["supporting_facts"]["sent_id"]))
        gold = [i for i, t in enumerate(titles) if any(t == ft for ft, _ in facts)]
        distractors = [i for i in range(len(titles)) if i not in gold]
        chosen = gold + rng.sample(distractors, min(DISTRACTOR_PARAGRAPHS, len(distractors)))
        for p in chosen:
            sentences = [s.strip() for s in paragraphs[p] if s.strip()]
            paragraph = " ".join(sentences)
            for index, sentence in enumerate(sentences):
                yield _row("relevance", record["question"], sentence, paragraph, int((titles[p], index) in facts), "hotpotqa", qid)


def hotpotqa_validation_samples(folder: Path) -> Iterator[dict[str, Any]]:
    """The validation split's HotpotQA questions as whole samples in the shapes the benchmarks use
    (10 paragraphs, the gold ones and a distractor, each gold one alone, the distractors alone):
    what tune_cut.py chooses the relevance cut on. Gold units are pysbd sentences of the
    contexts that match a supporting fact."""
    from localeval.data.text import split_sentences

    for record in usable_hotpotqa(folder):
        qid = record["id"]
        if not _validation("hotpotqa", qid):
            continue
        titles, paragraphs = record["context"]["title"], record["context"]["sentences"]
        facts = set(zip(record["supporting_facts"]["title"], record["supporting_facts"]["sent_id"]))
        gold_text = [paragraphs[i][n].strip() for i, t in enumerate(titles) for ft, n in facts if t == ft and n < len(paragraphs[i])]
        contexts = [" ".join(s.strip() for s in sentences if s.strip()) for sentences in paragraphs]
        gold = [i for i, t in enumerate(titles) if any(t == ft for ft, _ in facts)]
        others = [i for i in range(len(titles)) if i not in gold]
        shapes = {"10": [list(range(len(titles)))], "3": [sorted([*gold, others[0]])], "1": [[i] for i in gold], "10 without gold": [others], "1 without gold": [others[:1]]}
        for shape, variants in shapes.items():
            for chosen in variants:
                units = [u for i in chosen for u in split_sentences(contexts[i])]
                answerable = "without" not in shape
                required = [k for k, u in enumerate(units) if answerable and any(u == g or (len(u) > 20 and u in g) or (len(g) > 20 and g in u) for g in gold_text)]
                yield {"source": "hotpotqa", "group": qid, "shape": shape, "question": record["question"], "contexts": [contexts[i] for i in chosen], "required": required}


def squad(path: Path, dev_half: bool = False) -> Iterator[dict[str, Any]]:
    """Each question against each sentence of its paragraph, for the paragraphs of accuracy.py's
    fit half (or, with `dev_half`, of its dev half: prepare_split_data.py's test rows)."""
    from localeval.data.text import split_sentences

    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        for index, paragraph in enumerate(article["paragraphs"]):
            group = f"{article['title']}/{index}"
            if labelled_rows.in_dev_half("squad", group) != dev_half:
                continue
            context = paragraph["context"]
            sentences = split_sentences(context)
            ends, cursor = [], 0
            for sentence in sentences:
                start = context.find(sentence, cursor)
                cursor = (start if start >= 0 else cursor) + len(sentence)
                ends.append(cursor)
            for qa in paragraph["qas"]:
                answering = -1
                if not qa["is_impossible"] and qa["answers"]:
                    offset = qa["answers"][0]["answer_start"]
                    answering = next((i for i, end in enumerate(ends) if offset < end), len(sentences) - 1)
                for i, sentence in enumerate(sentences):
                    yield _row("relevance", qa["question"], sentence, context, int(i == answering), "squad", group)


def vitaminc(path: Path, source: str, hold_out: bool) -> Iterator[dict[str, Any]]:
    for item in json_lines(path):
        group = str(item.get("case_id") or item.get("unique_id") or item["id"])
        if hold_out and labelled_rows.in_dev_half("vitaminc", group):
            continue
        yield _row("attribution", item["claim"], item["evidence"], "", int(item["label"] == SUPPORTED), source, group)


def wice(path: Path) -> Iterator[dict[str, Any]]:
    """Partially supported sub-claims against the sentences that support the rest: some part of
    the claim is in none of them, so the pair is a hard negative."""
    for number, item in enumerate(json_lines(path)):
        evidence = item["evidence"]
        for option, indices in enumerate(item.get("supporting_sentences") or []):
            text = " ".join(evidence[i] for i in sorted(indices) if 0 <= i < len(evidence))
            if text.strip() and item["label"] != "supported":
                yield _row("attribution", item["claim"], text, "", 0, "wice", f"{number}/{option}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--external", type=Path, required=True, help="folder with hotpotqa/, squad2/, vitaminc_real/, vitaminc_synthetic/, fever_symmetric/, fever_adversarial/, wice/ (training/DATA.md)")
    parser.add_argument("--out", type=Path, default=ROOT / "training" / ".cache" / "rows.jsonl")
    parser.add_argument("--samples", type=Path, default=ROOT / "training" / ".cache" / "validation_samples.jsonl", help="the validation questions as whole samples (tune_cut.py)")
    args = parser.parse_args()
    ext: Path = args.external
    rng = random.Random(SEED)
    sources = [
        hotpotqa(ext / "hotpotqa", rng),
        squad(ext / "squad2" / "dev-part.json"),
        vitaminc(ext / "vitaminc_real" / "test.jsonl", "vitaminc_real", hold_out=True),
        vitaminc(ext / "vitaminc_synthetic" / "test.jsonl", "vitaminc_synthetic", hold_out=False),
        vitaminc(ext / "fever_symmetric" / "dev.jsonl", "fever_symmetric_dev", hold_out=False),
        vitaminc(ext / "fever_adversarial" / "test.jsonl", "fever_adversarial", hold_out=False),
        wice(ext / "wice" / "non_supported_tokens_train.jsonl"),
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[tuple[str, str, int]] = Counter()
    with open(args.out, "w", encoding="utf-8") as handle:
        for source in sources:
            for row in source:
                counts[(row["source"], row["split"], row["label"])] += 1
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    for (source, split, label), n in sorted(counts.items()):
        print(f"{source:22} {split:10} label {label}: {n}")
    print(f"{sum(counts.values())} rows -> {args.out}")
    samples = list(hotpotqa_validation_samples(ext / "hotpotqa"))
    with open(args.samples, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(sample, ensure_ascii=False) + "\n" for sample in samples)
    print(f"{len(samples)} validation samples ({len({s['group'] for s in samples})} questions) -> {args.samples}")


if __name__ == "__main__":
    main()
