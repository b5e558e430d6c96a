"""The verifier's rows from every source, split into train, validation and a sealed test split.

Reads the folder training/gather_sources.py writes (training/DATA.md lists every source, commit
and licence) and writes, as JSON Lines in prepare_verifier_data.py's row format plus `family`
(the split's hash family) and `level` ("sentence", "summary" or "pair"):

- OUT/rows.jsonl: the train and validation rows (what pack_rows.py packs and training reads);
- SEALED_DIR/test_rows.jsonl: the sealed test rows, and SEALED_DIR/test_news_samples.jsonl, the
  test split's news summaries as whole samples (article, statements, labels) in the shape of
  shared/data/recall_dev.jsonl, and SEALED_DIR/test_claim_samples.jsonl, the test split's claims
  against long documents whole (claim_documents.py). No training or tuning script reads
  SEALED_DIR (splits.py);
- OUT/validation_claim_samples.jsonl: the validation split's claims against long documents whole
  (the shape of SEALED_DIR/test_claim_samples.jsonl: rows a statement table may be fitted on), and
  OUT/validation_news_samples.jsonl, its news summaries whole (the shape of test_news_samples.jsonl);
- OUT/validation_samples.jsonl: the validation split's HotpotQA questions as whole samples, the
  shapes tune_cut.py chooses the relevance rule on, and plain one-context windows of SelQA and
  SQuAD questions (plain_samples.py); SEALED_DIR/test_relevance_samples.jsonl: the same shapes of
  the test split's groups (the sealed figures of the relevance decision);
- OUT/counts.json: rows per source, split and label, and what was dropped and why.

Splits (training/splits.py): every group (document, question, premise, case) is hashed to one
side before anything else is read from it. News summaries: a document is dropped when QAGS
(W4ngatang/qags data/mturk_{cnndm,xsum}.jsonl, and shared/data/recall_dev.jsonl) uses it
(news_documents.py), and documents shared by FRANK, XSumFaith and SummaC are one group. A summary
judged factual supports each of its sentences: one row per sentence, against the article window
that shares most of its words. A summary judged not factual does not say which sentence fails: it
is one row at summary level (the whole summary against that window) when it fits the verifier's
statement budget uncut, and is not used otherwise. Claims against long documents (Check-COVID,
Citation-Integrity, SummEdits, Factcheck-GPT: claim_documents.py) come last in the rows, so every
earlier row keeps its place.

    python training/prepare_split_data.py --sources training/.cache/sources
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import prepare_verifier_data as legacy
from claim_documents import FAMILY as CLAIM_FAMILY
from claim_documents import claim_documents
from news_documents import DocumentClusters, qags_index
from plain_samples import plain_samples, sample_rows
from splits import SEALED, legacy_split, split_of
from statement_windows import best_window

from localeval.data.text import split_sentences
from localeval.verifier import load_verifier
from localeval.verifier.pairs import FIRST_TOKENS

ROOT = Path(__file__).resolve().parents[1]
# shared/data beside the checkout (/work/main) or beside the worktrees' folder (/work/wt/NAME).
SHARED = next((p / "shared" / "data" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared" / "data").is_dir()), ROOT.parent / "shared" / "data")
legacy.SHARED = SHARED  # where prepare_verifier_data.py reads the reserved ids and the dev questions
Row = dict[str, Any]
BEGIN_LABELS = {"Fully attributable": 1, "Not fully attributable": 0}  # "Generic" says nothing: not used
# FaithDial's audit labels, lower-cased; a response may carry several (e.g. "entailment,uncooperative").
FAITHDIAL_UNSUPPORTED = {"hallucination", "hallucinated", "partial hallucination"}
FAITHDIAL_SUPPORTED = {"entailment", "entailmentt"}
ESNLI_LABELS = {"entailment": 1, "neutral": 0, "contradiction": 0}


def row(task: str, a: str, b: str, c: str, label: int, source: str, family: str, group: str, split: str, level: str) -> Row:
    return {"task": task, "a": a.strip(), "b": b.strip(), "c": c.strip(), "label": label, "source": source, "family": family,
            "group": group, "split": split, "level": level}


# --- the sources the shipped verifier learned from -------------------------------------------------

def legacy_rows(folder: Path) -> Iterator[Row]:
    """prepare_verifier_data.py's rows (the same generators, so the same rows the shipped verifier
    saw), re-split: a group it trained on stays train; the groups it never trained on go to the
    validation and test splits; the benchmarks' second halves (SQuAD's and VitaminC's dev
    halves, FEVER-symmetric's test file) go to the test split whole."""
    in_dev_half = legacy.labelled_rows.in_dev_half
    sources: list[tuple[Iterable[Row], bool]] = [
        (legacy.hotpotqa(folder / "hotpotqa", random.Random(legacy.SEED)), False),
        (legacy.squad(folder / "squad2" / "dev-part.json"), False),
        (legacy.squad(folder / "squad2" / "dev-part.json", dev_half=True), True),
        (legacy.vitaminc(folder / "vitaminc_real" / "test.jsonl", "vitaminc_real", hold_out=False), False),
        (legacy.vitaminc(folder / "vitaminc_synthetic" / "test.jsonl", "vitaminc_synthetic", hold_out=False), False),
        (legacy.vitaminc(folder / "fever_symmetric" / "dev.jsonl", "fever_symmetric_dev", hold_out=False), False),
        (legacy.vitaminc(folder / "fever_symmetric" / "test.jsonl", "fever_symmetric_test", hold_out=False), True),
        (legacy.vitaminc(folder / "fever_adversarial" / "test.jsonl", "fever_adversarial", hold_out=False), False),
        (legacy.wice(folder / "wice" / "non_supported_tokens_train.jsonl"), False),
    ]
    for generator, benchmark_half in sources:
        for item in generator:
            source, group = item["source"], item["group"]
            if benchmark_half or (source == "vitaminc_real" and in_dev_half("vitaminc", group)):
                split = "test"
            else:
                split = legacy_split(source, group, seen=item["split"] == "train")
            yield row(item["task"], item["a"], item["b"], item["c"], item["label"], source, source, group, split, "pair")


def legacy_training_rows(folder: Path) -> Iterator[Row]:
    """The rows prepare_verifier_data.py trains on, in its order: their SHA-256 is the shipped
    verifier's `rows_sha256`, which proves which rows the shipped verifier saw."""
    rng = random.Random(legacy.SEED)
    yield from legacy.hotpotqa(folder / "hotpotqa", rng)
    yield from legacy.squad(folder / "squad2" / "dev-part.json")
    yield from legacy.vitaminc(folder / "vitaminc_real" / "test.jsonl", "vitaminc_real", hold_out=True)
    yield from legacy.vitaminc(folder / "vitaminc_synthetic" / "test.jsonl", "vitaminc_synthetic", hold_out=False)
    yield from legacy.vitaminc(folder / "fever_symmetric" / "dev.jsonl", "fever_symmetric_dev", hold_out=False)
    yield from legacy.vitaminc(folder / "fever_adversarial" / "test.jsonl", "fever_adversarial", hold_out=False)
    yield from legacy.wice(folder / "wice" / "non_supported_tokens_train.jsonl")


# --- news summaries ------------------------------------------------------------------------------

@dataclass
class Summary:
    source: str
    article: str
    summary: str
    label: int


def _literal(value: Any) -> Any:
    """SummaC stores some values as Python-literal strings."""
    if isinstance(value, str) and value[:1] in "[{(":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value


def frank(folder: Path, counts: Counter[str]) -> Iterator[Summary]:
    """FRANK: Factuality 1.0 (every annotator found no error) is factual, 0.0 is not; the
    fractional ones (annotators disagree) are not used."""
    for item in json.loads((folder / "human_annotations.json").read_text(encoding="utf-8")):
        value = float(item["Factuality"])
        if value not in (0.0, 1.0):
            counts["frank: fractional factuality, not used"] += 1
            continue
        path = folder / "articles" / f"{item['hash']}.json"
        if not path.is_file():
            counts["frank: article file missing"] += 1
            continue
        record = json.loads(path.read_text(encoding="utf-8"))
        summary = record.get(item["model_name"])
        if not isinstance(summary, str) or not summary.strip():
            counts["frank: summary missing from its article file"] += 1
            continue
        yield Summary(f"frank_{item['dataset']}", record["article"], summary, int(value))


def xsum_articles(frank_folder: Path, summac_folder: Path) -> dict[str, str]:
    """BBC ids to article text, from FRANK's XSum files and SummaC's xsumfaith copy."""
    articles: dict[str, str] = {}
    for path in sorted((frank_folder / "articles").glob("*.json")):
        if path.stem.isdigit():
            articles[path.stem] = json.loads(path.read_text(encoding="utf-8"))["article"]
    for item in json.loads((summac_folder / "xsumfaith.json").read_text(encoding="utf-8")).values():
        articles.setdefault(str(item["bbcid"]), item["document"])
    return articles


def xsumfaith(path: Path, articles: dict[str, str], counts: Counter[str]) -> Iterator[Summary]:
    """XSumFaith's factuality votes: a summary most of its three annotators call factual is
    factual, else not; a summary whose article cannot be rebuilt is not used."""
    votes: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    with open(path, encoding="utf-8", newline="") as handle:
        for item in csv.DictReader(handle):
            votes[(item["bbcid"], item["system"], item["summary"])].append(item["is_factual"].strip().lower() == "yes")
    for (bbcid, _, summary), said in votes.items():
        if bbcid not in articles:
            counts["xsumfaith: article not rebuilt"] += 1
            continue
        yield Summary("xsumfaith", articles[bbcid], summary, int(2 * sum(said) > len(said)))


def summac(folder: Path, counts: Counter[str]) -> Iterator[Summary]:
    """SummaC's validation files. Polytope's label also counts omissions, which do not make a
    summary unsupported: there a summary is factual unless it has an addition or an inaccuracy."""
    for name in ("factcc", "summeval", "xsumfaith", "polytope"):
        for item in json.loads((folder / f"{name}.json").read_text(encoding="utf-8")).values():
            item = {k: _literal(v) for k, v in item.items()}
            if name == "polytope":
                label = int(int(item["addition_label"]) == 1 and int(item["inaccuracy_label"]) == 1)
            else:
                label = int(item["label"])
            yield Summary(f"summac_{name}", item["document"], item["claim"], label)


def news_rows(folder: Path, counts: Counter[str]) -> tuple[list[Row], dict[str, list[dict[str, Any]]]]:
    """Statement rows from every summary set, and the validation and test splits' summaries as
    whole samples (the validation ones are what a statement table may be fitted on for news)."""
    verifier = load_verifier()
    tokenizer, budget = verifier.tokenizer, verifier.max_tokens["attribution"]
    qags_articles = [json.loads(line)["article"] for name in ("cnndm", "xsum") for line in open(folder / "qags" / f"mturk_{name}.jsonl", encoding="utf-8") if line.strip()]
    qags_articles += [c for line in open(SHARED / "recall_dev.jsonl", encoding="utf-8") if line.strip() for c in json.loads(line)["retrieved_contexts"]]
    qags = qags_index(qags_articles)
    summaries = [*frank(folder / "frank", counts), *xsumfaith(folder / "xsumfaith" / "factuality_annotations_xsum_summaries.csv",
                 xsum_articles(folder / "frank", folder / "summac"), counts), *summac(folder / "summac", counts)]
    clusters = DocumentClusters()
    numbers: dict[str, int] = {}
    for item in summaries:
        if item.article not in numbers:
            numbers[item.article] = clusters.add(item.article)
    in_qags = {clusters.cluster(n) for article, n in numbers.items() if qags.matches(article)}
    dropped_documents: dict[str, set[int]] = defaultdict(set)
    by_summary: dict[tuple[int, str], list[Summary]] = defaultdict(list)
    for item in summaries:
        cluster = clusters.cluster(numbers[item.article])
        if cluster in in_qags:
            dropped_documents[item.source].add(cluster)
            counts[f"{item.source}: summaries of a QAGS document, dropped"] += 1
            continue
        by_summary[(cluster, " ".join(re.findall(r"[a-z0-9]+", item.summary.lower())))].append(item)
    for source, documents in dropped_documents.items():
        counts[f"{source}: QAGS documents dropped"] = len(documents)
    counts["news: documents (after merging the same article across sets)"] = len({c for c, _ in by_summary})
    # A document's group name is the smallest hash of its copies' words: stable whatever order the sets are read in.
    names: dict[int, str] = {}
    for article, n in numbers.items():
        name = hashlib.sha256(" ".join(re.findall(r"[a-z0-9]+", article.lower())).encode()).hexdigest()[:16]
        names[clusters.cluster(n)] = min(names.get(clusters.cluster(n), name), name)
    rows: list[Row] = []
    samples: dict[str, list[dict[str, Any]]] = {"validation": [], "test": []}
    sentences_of: dict[str, tuple[list[str], list[int]]] = {}
    for (cluster, _), copies in sorted(by_summary.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        if len({c.label for c in copies}) > 1:
            counts["news: the same summary labelled both ways across sets, dropped"] += 1
            continue
        if len(copies) > 1:
            counts["news: duplicate summaries merged"] += len(copies) - 1
        item = copies[0]
        group = names[cluster]
        split = split_of("news", group)
        if item.article not in sentences_of:
            units = split_sentences(item.article)
            sentences_of[item.article] = (units, [len(tokenizer.encode(u)) + 1 for u in units])
        units, lengths = sentences_of[item.article]
        statements = split_sentences(item.summary)
        if not units or not statements:
            counts[f"{item.source}: empty article or summary"] += 1
            continue
        if split in samples:
            samples[split].append({"source": item.source, "group": group, "user_input": "Summarize the news article.", "retrieved_contexts": [item.article],
                            "statements": statements, "summary_label": item.label, "statement_labels": [1] * len(statements) if item.label else None})
        if item.label:
            for statement in statements:
                rows.append(row("attribution", statement, best_window(statement, units, lengths, budget, tokenizer), "", 1, item.source, "news", group, split, "sentence"))
        elif len(statements) == 1 or len(tokenizer.encode(item.summary)) <= FIRST_TOKENS:
            rows.append(row("attribution", item.summary, best_window(item.summary, units, lengths, budget, tokenizer), "", 0, item.source, "news", group, split,
                            "sentence" if len(statements) == 1 else "summary"))
        else:
            counts[f"{item.source}: not factual and longer than the statement budget, not used"] += 1
    return rows, samples


# --- dialogue, answer sentences, NLI --------------------------------------------------------------

def faithdial_label(text: str) -> int | None:
    """0 when any of a response's labels says it is (partly) hallucinated, 1 when it is entailed
    and nothing says otherwise (being also uncooperative does not make it unsupported), else None
    (generic, uncooperative alone, or unlabelled: not used)."""
    said = {part.strip() for part in re.split(r"[,.]", text.lower()) if part.strip()}
    if said & FAITHDIAL_UNSUPPORTED:
        return 0
    return 1 if said & FAITHDIAL_SUPPORTED else None


def dialogue_rows(folder: Path, counts: Counter[str]) -> Iterator[Row]:
    """BEGIN and FaithDial's audited responses: (response, knowledge). Grouped by the knowledge
    text, which both sets draw from the same three corpora; a pair found twice is kept once, and
    not at all if its labels disagree."""
    pairs: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    for path in sorted((folder / "begin").glob("*.tsv")):
        with open(path, encoding="utf-8", newline="") as handle:
            for item in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                label = BEGIN_LABELS.get(item["begin_label"])
                if label is None:
                    counts[f"begin: label {item['begin_label']!r}, not used"] += 1
                    continue
                pairs[(item["knowledge"].strip(), item["response"].strip())].append(("begin", label))
    for path in sorted((folder / "faithdial").glob("*.csv")):
        with open(path, encoding="utf-8", newline="") as handle:
            for item in csv.DictReader(handle):
                knowledge = item.get("evidence") or item.get("knowledge") or ""
                label_column = next(k for k in item if k.lower() in ("begin", "begin_label"))
                response_column = "response" if "response" in item else next(k for k in item if k not in ("knowledge", "history", label_column, "vrm_label", "VRM"))
                label = faithdial_label(item[label_column])
                if label is None:
                    counts[f"faithdial: label {item[label_column].strip()!r}, not used"] += 1
                    continue
                pairs[(knowledge.strip(), item[response_column].strip())].append(("faithdial", label))
    for (knowledge, response), found in pairs.items():
        if len({label for _, label in found}) > 1:
            counts["dialogue: the same pair labelled both ways, dropped"] += 1
            continue
        if not knowledge or not response:
            counts["dialogue: empty knowledge or response"] += 1
            continue
        group = hashlib.sha256(" ".join(knowledge.lower().split()).encode()).hexdigest()[:16]
        source = found[0][0]
        yield row("attribution", response, knowledge, "", found[0][1], source, "dialogue", group, split_of("dialogue", group), "pair")


def selqa_rows(folder: Path) -> Iterator[Row]:
    """SelQA answer-sentence selection: each question against each candidate sentence of its
    Wikipedia section (the section is the sentence's paragraph). Grouped by article."""
    for name in ("dev", "test"):
        for item in json.loads((folder / "selqa" / f"{name}.json").read_text(encoding="utf-8")):
            candidates = [c.strip() for c in item["candidates"]]
            answers = set(item["answers"])
            paragraph = " ".join(c for c in candidates if c)
            group = item["article"]
            split = split_of("selqa", group)
            for index, candidate in enumerate(candidates):
                if candidate:
                    yield row("relevance", item["question"], candidate, paragraph, int(index in answers), "selqa", "selqa", group, split, "pair")


def _detokenize(text: str) -> str:
    """e-SNLI's sentences are spaced out word by word; join the punctuation back."""
    text = re.sub(r" ([.,!?;:)])", r"\1", text.strip())
    return re.sub(r" (n't|'s|'re|'ve|'m|'ll|'d)\b", r"\1", text).replace("( ", "(")


def esnli_rows(folder: Path) -> Iterator[Row]:
    """SNLI dev and test pairs (via e-SNLI): the hypothesis is the statement, the premise its
    evidence; entailment is supported, neutral and contradiction are not. Grouped by premise."""
    for name in ("dev", "test"):
        premises, hypotheses, labels = ((folder / "esnli" / f"{part}.{name}").read_text(encoding="utf-8").splitlines() for part in ("s1", "s2", "labels"))
        for premise, hypothesis, label in zip(premises, hypotheses, labels):
            if label.strip() in ESNLI_LABELS:
                premise = _detokenize(premise)
                yield row("attribution", _detokenize(hypothesis), premise, "", ESNLI_LABELS[label.strip()], "esnli", "esnli", premise.lower(), split_of("esnli", premise.lower()), "pair")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", type=Path, default=ROOT / "training" / ".cache" / "sources", help="the folder gather_sources.py writes")
    parser.add_argument("--out", type=Path, default=ROOT / "training" / ".cache" / "split")
    parser.add_argument("--sealed", type=Path, default=ROOT / "training" / ".cache" / SEALED)
    args = parser.parse_args()
    if args.sealed.name != SEALED:
        raise SystemExit(f"--sealed must be a folder named {SEALED!r} (training refuses paths inside it)")
    counts: Counter[str] = Counter()
    digest = hashlib.sha256()
    for item in legacy_training_rows(args.sources):
        if item["split"] == "train":
            counts["legacy: rows the shipped verifier trained on"] += 1
        digest.update((json.dumps(item, ensure_ascii=False) + "\n").encode())
    news, samples = news_rows(args.sources, counts)
    args.out.mkdir(parents=True, exist_ok=True)
    args.sealed.mkdir(parents=True, exist_ok=True)
    table: Counter[tuple[str, str, int]] = Counter()
    groups: dict[tuple[str, str], set[str]] = defaultdict(set)
    pairs = [*legacy_rows(args.sources), *news, *dialogue_rows(args.sources, counts), *selqa_rows(args.sources), *esnli_rows(args.sources)]
    plain = {split: list(plain_samples(pairs, split)) for split in ("train", "validation", "test")}
    windows = [r for split, found in plain.items() for s in found for r in sample_rows(s, split)]
    # Claims against long documents last, so every earlier row keeps its place in the files.
    verifier = load_verifier()
    found, whole_claims = claim_documents(args.sources, SHARED, verifier.tokenizer, verifier.max_tokens["attribution"], counts)
    claims = [row("attribution", p.statement, p.window, "", p.label, p.source, CLAIM_FAMILY, p.group, p.split, p.level) for p in found]
    with open(args.out / "rows.jsonl", "w", encoding="utf-8") as train, open(args.sealed / "test_rows.jsonl", "w", encoding="utf-8") as test:
        for item in (*pairs, *windows, *claims):
            table[(item["source"], item["split"], item["label"])] += 1
            groups[(item["source"], item["split"])].add(item["group"])
            (test if item["split"] == "test" else train).write(json.dumps(item, ensure_ascii=False) + "\n")
    for split, path in (("validation", args.out / "validation_news_samples.jsonl"), ("test", args.sealed / "test_news_samples.jsonl")):
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(s, ensure_ascii=False) + "\n" for s in samples[split])
    for split, path in (("validation", args.out / "validation_claim_samples.jsonl"), ("test", args.sealed / "test_claim_samples.jsonl")):
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(s, ensure_ascii=False) + "\n" for s in whole_claims[split])
    # tune_cut.py's whole HotpotQA samples: the old validation questions that are now validation (the others are test).
    # Whole relevance samples: the old HotpotQA validation questions split between validation and
    # test (the questions the shipped verifier never trained on), then the plain windows.
    hotpotqa = list(legacy.hotpotqa_validation_samples(args.sources / "hotpotqa"))
    for split, path in (("validation", args.out / "validation_samples.jsonl"), ("test", args.sealed / "test_relevance_samples.jsonl")):
        whole = [s for s in hotpotqa if legacy_split("hotpotqa", s["group"], seen=False) == split] + plain[split]
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(s, ensure_ascii=False) + "\n" for s in whole)
        counts[f"hotpotqa: {split} questions as whole samples"] = len({s["group"] for s in whole if s["source"] == "hotpotqa"})
        counts[f"plain windows: {split} samples"] = len(plain[split])
    report = {"legacy_rows_sha256": digest.hexdigest(), "dropped_and_merged": dict(sorted(counts.items())),
              "rows": {f"{s}/{sp}/{y}": n for (s, sp, y), n in sorted(table.items())},
              "groups": {f"{s}/{sp}": len(g) for (s, sp), g in sorted(groups.items())}, "test_news_samples": len(samples["test"]), "validation_news_samples": len(samples["validation"]),
              "test_claim_samples": len(whole_claims["test"]), "validation_claim_samples": len(whole_claims["validation"])}
    (args.out / "counts.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
